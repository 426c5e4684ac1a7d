// Cost of one JointTrajectoryAdmittanceController::update() with the admittance on, against the
// plain TrajectoryController::update() of the same trajectory as the baseline, measured in the same
// run: 7 FR3 joints with one tip, and the 14-joint dual arm (FR3 + Panda under one world link) with
// two tips.
//
// Every controller tracks a 1,000-point quintic trajectory (a perfect arm: measured = last command).
// The composed ones also get a varying push on every tip (≤ 8 N, sensor frame), with every tip
// compliant along x, y, z, the Butterworth filter on (ratio 0.05) and a deadband: per cycle that is
// forward kinematics of each sensor, the force/torque pipeline, and the admittance (forward
// kinematics and Jacobian of each tip, a stacked damped-least-squares solve). The ratio to the
// baseline is what compliance adds on top of trajectory tracking, independent of the machine.
// All four are timed the same way, interleaved cycle by cycle, so the machine's noise falls on all.
//
// Between goals (untimed) each arm is put back at its start pose and its controller re-activated:
// the admittance's joint offset has no restoring term in the arm's null space, and over hundreds of
// goals it would otherwise wander to the path tolerance.
//
// Usage: bench_jtac_update [cycles]   (default 200,000 = 200 s of 1 kHz control)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "jtac_core/trajectory_controller.hpp"
#include "jtac_test_support.hpp"

namespace {

constexpr int kPoints = 1000;
constexpr double kDurationS = 10.0;
constexpr double kPeriodS = 0.001;
constexpr double kBudgetUs = 1000.0;    // one 1 kHz cycle
constexpr double kTargetP999Us = 20.0;  // the project's target: 7 joints, admittance on, p99.9

using Clock = std::chrono::steady_clock;

/// A robot: its description, tips and start pose.
struct Robot {
  std::string name;
  std::string urdf;
  std::string base_frame;
  std::vector<std::string> joints;
  std::vector<jtac::TipFrames> tips;
  jtac::JointVector q0;
};

Robot fr3() {
  Robot r;
  r.name = "7 joints, 1 tip";
  r.urdf = jtac::test::read_text_file(JTAC_FR3_URDF);
  r.base_frame = "fr3_link0";
  r.joints = jtac::test::arm_joint_names("fr3");
  r.tips = {{"fr3_ft_sensor", "fr3_ee"}};
  r.q0.resize(7);
  r.q0 << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785;
  return r;
}

Robot dual_arm() {
  Robot r;
  r.name = "14 joints, 2 tips";
  r.urdf = jtac::test::dual_arm_urdf(JTAC_FR3_URDF, JTAC_PANDA_URDF);
  r.base_frame = "world";
  r.joints = jtac::test::arm_joint_names("fr3");
  for (const auto& name : jtac::test::arm_joint_names("panda")) {
    r.joints.push_back(name);
  }
  r.tips = {{"fr3_ft_sensor", "fr3_ee"}, {"panda_ft_sensor", "panda_ee"}};
  r.q0.resize(14);
  r.q0 << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.3, -0.5, 0.0, -2.0, 0.0, 1.6, 0.785;
  return r;
}

// Every joint swinging out and back twice over 10 s (sin² profile), 1,000 quintic points.
jtac::TrajectoryGoal swing_goal(const Robot& robot) {
  const int n = static_cast<int>(robot.joints.size());
  const double w = 2.0 * std::numbers::pi / kDurationS;
  jtac::TrajectoryGoal goal;
  goal.joint_names = robot.joints;
  for (int i = 0; i < kPoints; ++i) {
    const double t = kDurationS * i / (kPoints - 1);
    jtac::GoalPoint p;
    p.time_from_start_s = t;
    for (int j = 0; j < n; ++j) {
      const double amp = (j % 2 == 0 ? 0.3 : -0.25) * (1.0 + 0.1 * (j % 7));
      p.positions_rad.push_back(robot.q0[j] + amp * std::sin(w * t) * std::sin(w * t));
      p.velocities_rad_s.push_back(amp * w * std::sin(2.0 * w * t));
      p.accelerations_rad_s2.push_back(2.0 * amp * w * w * std::cos(2.0 * w * t));
    }
    goal.points.push_back(std::move(p));
  }
  return goal;
}

jtac::ControllerParameters trajectory_parameters(int n) {
  jtac::ControllerParameters p;
  p.stop_accelerations_rad_s2 = jtac::JointVector::Constant(n, 10.0);
  p.default_path_tolerance_rad = jtac::JointVector::Constant(n, 0.5);
  p.default_goal_tolerance_rad = jtac::JointVector::Constant(n, 0.1);
  return p;
}

/// The plain trajectory engine on a perfect arm.
struct PlainLoop {
  explicit PlainLoop(const Robot& robot) : goal(swing_goal(robot)), q0(robot.q0) {
    jtac::ControllerConfig config;
    config.joint_names = robot.joints;
    config.max_trajectory_points = kPoints;
    controller.configure(config, trajectory_parameters(static_cast<int>(robot.joints.size())));
    restart();
  }
  void restart() {
    controller.deactivate(time_s);
    q = q0;
    v = jtac::JointVector::Zero(q0.size());
    controller.activate();
    if (controller.submit_goal(goal, time_s).code != jtac::ResultCode::kSuccessful) {
      std::fprintf(stderr, "goal refused\n");
      std::exit(1);
    }
    ++goals;
  }
  double cycle() {  // returns the time of update() [µs]
    time_s += kPeriodS;
    const auto t0 = Clock::now();
    controller.update(time_s, kPeriodS, q, v, seams, out);
    const auto t1 = Clock::now();
    q = out.command.position_rad;
    v = out.command.velocity_rad_s;
    executing += out.mode == jtac::ControllerMode::kExecuting ? 1 : 0;
    jtac::Event e;
    while (controller.poll_event(e)) {
      failures +=
          (e.type == jtac::EventType::kGoalAborted || e.type == jtac::EventType::kGoalCanceled) ? 1 : 0;
    }
    if (out.mode == jtac::ControllerMode::kIdle) {
      restart();
    }
    return std::chrono::duration<double, std::micro>(t1 - t0).count();
  }
  jtac::TrajectoryController controller;
  jtac::TrajectoryGoal goal;
  jtac::JointVector q0, q, v;
  const jtac::CycleSeams seams;
  jtac::ControllerOutput out;
  double time_s = 1.0;
  long goals = 0, executing = 0, failures = 0;
};

/// The composed controller, admittance on, on a perfect arm with a pushed tool per tip.
struct ComposedLoop {
  explicit ComposedLoop(const Robot& robot) : q0(robot.q0), num_tips(static_cast<int>(robot.tips.size())) {
    jtac::JtacConfig config;
    config.trajectory.joint_names = robot.joints;
    config.trajectory.max_trajectory_points = kPoints;
    config.urdf_xml = robot.urdf;
    config.base_frame = robot.base_frame;
    config.tips = robot.tips;
    config.has_force_torque_sensor = true;
    jtac::JtacParameters params;
    params.trajectory = trajectory_parameters(static_cast<int>(robot.joints.size()));
    params.ft_cutoff_frequency_ratio = 0.05;
    params.ft_force_deadband_N = 0.5;
    params.ft_torque_deadband_Nm = 0.05;
    controller.configure(config, params);
    goal.trajectory = swing_goal(robot);
    for (int k = 0; k < num_tips; ++k) {
      jtac::TipGoal tip;
      tip.mass.assign(6, 3.0);
      tip.stiffness.assign(6, 600.0);
      tip.damping.assign(6, 2.0 * std::sqrt(3.0 * 600.0));
      tip.selected_axes = {true, true, true, false, false, false};
      goal.tips.push_back(tip);
    }
    goal.joint_damping_per_s = 0.5;
    restart();
  }
  void restart() {
    controller.deactivate(time_s);
    q = q0;
    v = jtac::JointVector::Zero(q0.size());
    controller.activate();
    if (const auto r = controller.submit_goal(goal, time_s); r.code != jtac::ResultCode::kSuccessful) {
      std::fprintf(stderr, "goal refused: %s\n", r.message.c_str());
      std::exit(1);
    }
    ++goals;
    cycle_in_goal = 0;
  }
  double cycle() {
    time_s += kPeriodS;
    ++cycle_in_goal;
    const double t = time_s;
    for (int k = 0; k < num_tips; ++k) {
      wrenches[static_cast<std::size_t>(k)] << 8.0 * std::sin(2.0 * std::numbers::pi * 0.7 * t + k),
          4.0 * std::cos(2.0 * std::numbers::pi * 1.1 * t), 6.0 * std::sin(2.0 * std::numbers::pi * 0.5 * t),
          0.2, -0.1, 0.0;
    }
    const auto t0 = Clock::now();
    controller.update(time_s, kPeriodS, q, v, wrenches, out);
    const auto t1 = Clock::now();
    q = out.trajectory.command.position_rad;
    v = out.trajectory.command.velocity_rad_s;
    executing += out.trajectory.mode == jtac::ControllerMode::kExecuting ? 1 : 0;
    max_offset_rad = std::max(max_offset_rad, out.joint_offset_rad.cwiseAbs().maxCoeff());
    jtac::Event e;
    while (controller.poll_event(e)) {
      failures +=
          (e.type == jtac::EventType::kGoalAborted || e.type == jtac::EventType::kGoalCanceled) ? 1 : 0;
    }
    if (out.trajectory.mode == jtac::ControllerMode::kIdle) {
      restart();
    }
    return std::chrono::duration<double, std::micro>(t1 - t0).count();
  }
  jtac::JointTrajectoryAdmittanceController controller;
  jtac::JtacGoal goal;
  jtac::JointVector q0, q, v;
  int num_tips;
  jtac::TipWrenches wrenches{};
  jtac::JtacOutput out;
  double time_s = 1.0;
  double max_offset_rad = 0.0;
  long goals = 0, executing = 0, failures = 0;
  long cycle_in_goal = 0;  // cycles since the goal was submitted (1: the cycle that takes it)
};

/// A fixed amount of work (the same instructions every call, no data-dependent branch, no memory
/// beyond two small arrays): whatever spread its time shows is the machine's, not the code's.
struct ConstantWork {
  int reps = 1;
  double run() {
    double a[42], b[42];
    for (int i = 0; i < 42; ++i) {
      a[i] = 1.0 + 1e-3 * i;
      b[i] = 1.0 - 1e-3 * i;
    }
    const auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) {
      for (int k = 0; k < 42; ++k) {
        double acc = 0.0;
        for (int i = 0; i < 42; ++i) {
          acc += a[i] * b[(i + k) % 42];
        }
        a[k] = 0.5 * a[k] + 1e-6 * acc;
      }
    }
    const auto t1 = Clock::now();
    sink = sink + a[7];
    return std::chrono::duration<double, std::micro>(t1 - t0).count();
  }
  /// Sizes the work so that its median time is `target_us`.
  void calibrate(double target_us) {
    reps = 1;
    std::vector<double> t(2000);
    for (double& x : t) {
      x = run();
    }
    const double one = jtac::test::latency_stats(t).p50_us;
    reps = std::max(1, static_cast<int>(std::lround(target_us / std::max(one, 1e-3))));
  }
  volatile double sink = 0.0;
};

void print_row(const std::string& name, const jtac::test::LatencyStats& s) {
  std::printf("%-52s %9.3f %9.3f %9.3f %9.3f   %7.3f %% %7.3f %% %7.3f %%\n", name.c_str(), s.p50_us,
              s.p99_us, s.p999_us, s.max_us, 100.0 * s.p50_us / kBudgetUs, 100.0 * s.p999_us / kBudgetUs,
              100.0 * s.max_us / kBudgetUs);
}

void print_ratio(const jtac::test::LatencyStats& ours, const jtac::test::LatencyStats& base) {
  std::printf("%-52s %9.2f %9.2f %9.2f %9.2f\n", "  ratio (composed / plain)", ours.p50_us / base.p50_us,
              ours.p99_us / base.p99_us, ours.p999_us / base.p999_us, ours.max_us / base.max_us);
}

/// Is the composed update's tail the code or the machine? Beside it, in the same iteration, a
/// constant amount of work of the same median time ran: its own tail is the machine's alone. The
/// update's slow cycles are then split by where they fall in their goal (the cycle that takes the
/// goal does the intake) and by whether the constant work next to them was slow too.
void print_tail_attribution(const std::vector<double>& update_us, std::vector<double> constant_us,
                            const std::vector<long>& phase) {
  std::vector<double> sorted = update_us;
  const jtac::test::LatencyStats u = jtac::test::latency_stats(sorted);
  const std::vector<double> constant_unsorted = constant_us;
  const jtac::test::LatencyStats c = jtac::test::latency_stats(constant_us);
  std::printf("\nTail attribution, 7 joints, 1 tip (the update beside constant work of the same median):\n");
  print_row("constant work (same instructions every call)", c);
  print_row("JointTrajectoryAdmittanceController, 7 joints", u);
  std::printf("%-52s %9.2f %9.2f %9.2f %9.2f\n", "  p/median: constant work", 1.0, c.p99_us / c.p50_us,
              c.p999_us / c.p50_us, c.max_us / c.p50_us);
  std::printf("%-52s %9.2f %9.2f %9.2f %9.2f\n", "  p/median: update", 1.0, u.p99_us / u.p50_us,
              u.p999_us / u.p50_us, u.max_us / u.p50_us);
  const double slow_us = u.p999_us;
  long slow = 0, at_intake = 0, with_slow_neighbour = 0;
  std::vector<double> steady;  // the update outside its goal's first cycle
  for (std::size_t i = 0; i < update_us.size(); ++i) {
    if (phase[i] > 1) {
      steady.push_back(update_us[i]);
    }
    if (update_us[i] < slow_us) {
      continue;
    }
    ++slow;
    at_intake += phase[i] <= 1 ? 1 : 0;
    with_slow_neighbour += constant_unsorted[i] >= c.p99_us ? 1 : 0;
  }
  const jtac::test::LatencyStats st = jtac::test::latency_stats(steady);
  print_row("  the update, goal-intake cycles left out", st);
  std::printf(
      "  cycles at or above the update's p99.9 (%.1f us): %ld; of them the goal's intake cycle: %ld; "
      "with the constant work beside them above its p99 too: %ld\n",
      slow_us, slow, at_intake, with_slow_neighbour);
}

}  // namespace

int main(int argc, char** argv) {
  const long cycles = argc > 1 ? std::stol(argv[1]) : 200000L;
  if (cycles < 1000) {
    std::fprintf(stderr, "usage: %s [cycles >= 1000]\n", argv[0]);
    return 2;
  }
  const Robot robots[2] = {fr3(), dual_arm()};
  PlainLoop plain[2] = {PlainLoop(robots[0]), PlainLoop(robots[1])};
  ComposedLoop composed[2] = {ComposedLoop(robots[0]), ComposedLoop(robots[1])};

  const auto n = static_cast<std::size_t>(cycles);
  std::vector<double> plain_us[2] = {std::vector<double>(n), std::vector<double>(n)};
  std::vector<double> composed_us[2] = {std::vector<double>(n), std::vector<double>(n)};
  std::vector<double> clock_us(n);
  std::vector<double> constant_us(n);
  std::vector<long> phase(n);  // composed 7-joint cycle's index in its goal
  ConstantWork constant;
  {
    std::vector<double> warm(2000);
    for (double& x : warm) {
      x = composed[0].cycle();
    }
    constant.calibrate(jtac::test::latency_stats(warm).p50_us);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    const auto t1 = Clock::now();
    clock_us[i] = std::chrono::duration<double, std::micro>(t1 - t0).count();
    for (int r = 0; r < 2; ++r) {
      plain_us[r][i] = plain[r].cycle();
      composed_us[r][i] = composed[r].cycle();
      if (r == 0) {
        phase[i] = composed[0].cycle_in_goal;
        constant_us[i] = constant.run();
      }
    }
  }
  const std::vector<double> composed7_us = composed_us[0];  // unsorted copy for the attribution

  std::printf(
      "JointTrajectoryAdmittanceController::update() with admittance on vs TrajectoryController::update(), "
      "%d-point quintic goals, %ld cycles each\n",
      kPoints, cycles);
  std::printf("%-52s %9s %9s %9s %9s   %9s %9s %9s\n", "[us]", "median", "p99", "p99.9", "max", "med/1ms",
              "p99.9/1ms", "max/1ms");
  const jtac::test::LatencyStats clock = jtac::test::latency_stats(clock_us);
  print_row("clock overhead (empty region)", clock);
  long failures = 0;
  for (int r = 0; r < 2; ++r) {
    const jtac::test::LatencyStats base = jtac::test::latency_stats(plain_us[r]);
    const jtac::test::LatencyStats ours = jtac::test::latency_stats(composed_us[r]);
    print_row("baseline: TrajectoryController, " + robots[r].name.substr(0, robots[r].name.find(',')), base);
    print_row("JointTrajectoryAdmittanceController, " + robots[r].name, ours);
    print_ratio(ours, base);
    failures += plain[r].failures + composed[r].failures;
    if (r == 0) {
      std::printf("  target p99.9 <= %.0f us for 7 joints, admittance on (anchors.md): %.3f us, %s\n",
                  kTargetP999Us, ours.p999_us, ours.p999_us <= kTargetP999Us ? "met" : "MISSED");
    }
    std::printf(
        "  (%s: %ld + %ld goals, %.1f %% / %.1f %% executing, %ld + %ld aborted; max joint offset %.4f "
        "rad)\n",
        robots[r].name.c_str(), plain[r].goals, composed[r].goals,
        100.0 * static_cast<double>(plain[r].executing) / static_cast<double>(cycles),
        100.0 * static_cast<double>(composed[r].executing) / static_cast<double>(cycles), plain[r].failures,
        composed[r].failures, composed[r].max_offset_rad);
  }
  print_tail_attribution(composed7_us, constant_us, phase);
  return failures == 0 ? 0 : 1;
}
