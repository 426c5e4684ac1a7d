// Cost of one TrajectoryController::update() (7 FR3 joints tracking a 1,000-point quintic
// trajectory, a perfect arm: measured = last command), against a baseline measured in the same run.
//
// Baseline: Trajectory::sample() of the same trajectory at the same trajectory time, i.e. the
// segment lookup and seven quintic evaluations that any joint trajectory controller must do every
// cycle. The ratio is therefore what the engine adds on top of interpolation (mailbox and parameter
// polls, time scaling, measurement and tolerance checks, the state machine, output copies), and it
// does not depend on how fast this machine is. Both are timed the same way, interleaved cycle by
// cycle, so the clock's own cost and the machine's noise fall on both; the clock's cost is printed
// too (an empty timed region).
//
// Usage: bench_trajectory_update [cycles]   (default 1,000,000 = 1,000 s of 1 kHz control)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "jtac_core/trajectory.hpp"
#include "jtac_core/trajectory_controller.hpp"
#include "jtac_test_support.hpp"

namespace {

constexpr int kNumJoints = 7;
constexpr int kPoints = 1000;
constexpr double kDurationS = 10.0;  // 1,000 points, 10 ms apart
constexpr double kPeriodS = 0.001;
constexpr double kBudgetUs = 1000.0;    // one 1 kHz cycle
constexpr double kTargetP999Us = 20.0;  // the project's target for one update at p99.9

using Clock = std::chrono::steady_clock;

// The FR3 ready pose, every joint swinging out and back twice over 10 s (sin² profile).
struct Swing {
  double q(int j, double t) const { return q0[j] + amp[j] * std::sin(w * t) * std::sin(w * t); }
  double v(int j, double t) const { return amp[j] * w * std::sin(2.0 * w * t); }
  double a(int j, double t) const { return 2.0 * amp[j] * w * w * std::cos(2.0 * w * t); }
  double q0[kNumJoints] = {0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785};
  double amp[kNumJoints] = {0.4, -0.3, 0.3, -0.4, 0.5, 0.3, 0.6};
  double w = 2.0 * std::numbers::pi / kDurationS;
};

jtac::TrajectoryGoal make_goal(const std::vector<std::string>& names, const Swing& s) {
  jtac::TrajectoryGoal goal;
  goal.joint_names = names;
  for (int i = 0; i < kPoints; ++i) {
    const double t = kDurationS * i / (kPoints - 1);
    jtac::GoalPoint p;
    p.time_from_start_s = t;
    for (int j = 0; j < kNumJoints; ++j) {
      p.positions_rad.push_back(s.q(j, t));
      p.velocities_rad_s.push_back(s.v(j, t));
      p.accelerations_rad_s2.push_back(s.a(j, t));
    }
    goal.points.push_back(std::move(p));
  }
  return goal;
}

void print_row(const char* name, const jtac::test::LatencyStats& s) {
  std::printf("%-36s %9.3f %9.3f %9.3f %9.3f   %6.3f %% %6.3f %%\n", name, s.p50_us, s.p99_us, s.p999_us,
              s.max_us, 100.0 * s.p50_us / kBudgetUs, 100.0 * s.p999_us / kBudgetUs);
}

}  // namespace

int main(int argc, char** argv) {
  const long cycles = argc > 1 ? std::stol(argv[1]) : 1000000L;
  if (cycles < 1000) {
    std::fprintf(stderr, "usage: %s [cycles >= 1000]\n", argv[0]);
    return 2;
  }
  std::vector<std::string> names;
  for (int i = 1; i <= kNumJoints; ++i) {
    names.push_back("fr3_joint" + std::to_string(i));
  }
  const Swing swing;
  const jtac::TrajectoryGoal goal = make_goal(names, swing);

  jtac::TrajectoryController controller;
  jtac::ControllerConfig config;
  config.joint_names = names;
  config.max_trajectory_points = kPoints;
  jtac::ControllerParameters params;
  params.stop_accelerations_rad_s2 = jtac::JointVector::Constant(kNumJoints, 10.0);
  params.default_path_tolerance_rad = jtac::JointVector::Constant(kNumJoints, 0.1);
  params.default_goal_tolerance_rad = jtac::JointVector::Constant(kNumJoints, 0.01);
  controller.configure(config, params);

  // The baseline's trajectory: the same points, sampled directly.
  jtac::Trajectory trajectory;
  trajectory.reserve(kNumJoints, kPoints);
  for (const auto& p : goal.points) {
    trajectory.append(p.time_from_start_s, p.positions_rad.data(), p.velocities_rad_s.data(),
                      p.accelerations_rad_s2.data());
  }
  jtac::JointTrajectoryState sampled;
  sampled.set_zero(kNumJoints);

  jtac::JointVector q(kNumJoints), v = jtac::JointVector::Zero(kNumJoints);
  for (int j = 0; j < kNumJoints; ++j) {
    q[j] = swing.q0[j];
  }
  const jtac::CycleSeams seams;
  jtac::ControllerOutput out;
  controller.activate();
  double time_s = 1.0;
  controller.update(time_s, kPeriodS, q, v, seams, out);

  const auto n = static_cast<std::size_t>(cycles);
  std::vector<double> update_us(n), sample_us(n), clock_us(n);
  long goals = 0;
  long executing = 0;
  double sink = 0.0;  // keeps the results alive
  double tau_s = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (out.mode == jtac::ControllerMode::kIdle) {  // non-real-time side: the next goal (not timed)
      const jtac::SubmitResult r = controller.submit_goal(goal, time_s);
      if (r.code != jtac::ResultCode::kSuccessful) {
        std::fprintf(stderr, "goal refused: %s\n", r.message.c_str());
        return 1;
      }
      ++goals;
    }
    time_s += kPeriodS;

    auto t0 = Clock::now();
    auto t1 = Clock::now();
    clock_us[i] = std::chrono::duration<double, std::micro>(t1 - t0).count();

    t0 = Clock::now();
    trajectory.sample(tau_s, sampled);
    t1 = Clock::now();
    sample_us[i] = std::chrono::duration<double, std::micro>(t1 - t0).count();
    sink += sampled.position_rad[0];
    tau_s = std::fmod(tau_s + kPeriodS, kDurationS);

    t0 = Clock::now();
    controller.update(time_s, kPeriodS, q, v, seams, out);
    t1 = Clock::now();
    update_us[i] = std::chrono::duration<double, std::micro>(t1 - t0).count();
    q = out.command.position_rad;  // a perfect arm
    v = out.command.velocity_rad_s;
    executing += out.mode == jtac::ControllerMode::kExecuting ? 1 : 0;
  }
  jtac::Event e;
  long failures = 0;
  while (controller.poll_event(e)) {
    failures += (e.type == jtac::EventType::kGoalAborted || e.type == jtac::EventType::kGoalCanceled) ? 1 : 0;
  }

  const jtac::test::LatencyStats clock = jtac::test::latency_stats(clock_us);
  const jtac::test::LatencyStats base = jtac::test::latency_stats(sample_us);
  const jtac::test::LatencyStats ours = jtac::test::latency_stats(update_us);
  std::printf(
      "TrajectoryController::update(), %d joints, %d-point quintic goal, %ld cycles (%ld goals, %.1f %% "
      "executing, %ld aborted; sink %.3f)\n",
      kNumJoints, kPoints, cycles, goals,
      100.0 * static_cast<double>(executing) / static_cast<double>(cycles), failures, sink);
  std::printf("%-36s %9s %9s %9s %9s   %8s %8s\n", "[us]", "median", "p99", "p99.9", "max", "med/1ms",
              "p99.9/1ms");
  print_row("clock overhead (empty region)", clock);
  print_row("baseline: Trajectory::sample", base);
  print_row("TrajectoryController::update", ours);
  std::printf("%-36s %9.2f %9.2f %9.2f %9.2f\n", "ratio (update / baseline)", ours.p50_us / base.p50_us,
              ours.p99_us / base.p99_us, ours.p999_us / base.p999_us, ours.max_us / base.max_us);
  std::printf("target p99.9 <= %.0f us (anchors.md): %.3f us, %s\n", kTargetP999Us, ours.p999_us,
              ours.p999_us <= kTargetP999Us ? "met" : "MISSED");
  return failures == 0 ? 0 : 1;
}
