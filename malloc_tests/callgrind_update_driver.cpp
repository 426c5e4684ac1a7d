// Instruction-count driver for callgrind_update.sh: 7 FR3 joints track a 1,000-point quintic goal
// (a perfect arm: measured = last command); after `warmup` cycles, exactly `count` update() calls
// run with callgrind's collection toggled on around each call and off around everything else (the
// simulated arm and sensor, goal submission, event draining). Run it under
//   valgrind --tool=callgrind --collect-atstart=no
// and the profile's total Ir divided by `count` is the cost of one update() in instructions, a
// figure that does not depend on the machine's speed or load.
//
// Two cases: `trajectory` (TrajectoryController::update) and `jtac`
// (JointTrajectoryAdmittanceController::update with the admittance on: one tip compliant along x, y,
// z, a varying push on its sensor, the Butterworth filter on at ratio 0.05 and a deadband).
//
// Usage: callgrind_update_driver [warmup cycles] [counted cycles] [trajectory|jtac]
//        (defaults 1000 10000 trajectory)
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "jtac_core/trajectory_controller.hpp"
#include "jtac_test_support.hpp"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define JTAC_HAVE_CALLGRIND 1
#else
#define JTAC_HAVE_CALLGRIND 0
#endif

namespace {

constexpr int kNumJoints = 7;
constexpr int kPoints = 1000;
constexpr double kDurationS = 10.0;
constexpr double kPeriodS = 0.001;
constexpr int kSkipped = 77;  // ctest SKIP_RETURN_CODE

jtac::TrajectoryGoal make_goal(const std::vector<std::string>& names, const double* q0) {
  constexpr double kAmplitudeRad[kNumJoints] = {0.4, -0.3, 0.3, -0.4, 0.5, 0.3, 0.6};
  const double w = 2.0 * std::numbers::pi / kDurationS;  // two swings out and back (sin²)
  jtac::TrajectoryGoal goal;
  goal.joint_names = names;
  for (int i = 0; i < kPoints; ++i) {
    const double t = kDurationS * i / (kPoints - 1);
    jtac::GoalPoint p;
    p.time_from_start_s = t;
    for (int j = 0; j < kNumJoints; ++j) {
      p.positions_rad.push_back(q0[j] + kAmplitudeRad[j] * std::sin(w * t) * std::sin(w * t));
      p.velocities_rad_s.push_back(kAmplitudeRad[j] * w * std::sin(2.0 * w * t));
      p.accelerations_rad_s2.push_back(2.0 * kAmplitudeRad[j] * w * w * std::cos(2.0 * w * t));
    }
    goal.points.push_back(std::move(p));
  }
  return goal;
}

jtac::ControllerParameters trajectory_parameters() {
  jtac::ControllerParameters params;
  params.stop_accelerations_rad_s2 = jtac::JointVector::Constant(kNumJoints, 10.0);
  params.default_path_tolerance_rad = jtac::JointVector::Constant(kNumJoints, 0.1);
  params.default_goal_tolerance_rad = jtac::JointVector::Constant(kNumJoints, 0.01);
  return params;
}

/// The plain trajectory engine.
struct TrajectoryCase {
  explicit TrajectoryCase(const std::vector<std::string>& names) {
    jtac::ControllerConfig config;
    config.joint_names = names;
    config.max_trajectory_points = kPoints;
    controller.configure(config, trajectory_parameters());
    controller.activate();
  }
  bool submit(const jtac::TrajectoryGoal& goal, double time_s) {
    return controller.submit_goal(goal, time_s).code == jtac::ResultCode::kSuccessful;
  }
  void update(double time_s, const jtac::JointVector& q, const jtac::JointVector& v) {
    controller.update(time_s, kPeriodS, q, v, seams, out);
  }
  const jtac::ControllerOutput& output() const { return out; }
  bool poll_event(jtac::Event& e) { return controller.poll_event(e); }
  jtac::TrajectoryController controller;
  const jtac::CycleSeams seams;
  jtac::ControllerOutput out;
};

/// The composed controller with the admittance on (one tip, pushed).
struct JtacCase {
  explicit JtacCase(const std::vector<std::string>& names) {
    jtac::JtacConfig config;
    config.trajectory.joint_names = names;
    config.trajectory.max_trajectory_points = kPoints;
    config.urdf_xml = jtac::test::read_text_file(JTAC_FR3_URDF);
    config.base_frame = "fr3_link0";
    config.tips = {{"fr3_ft_sensor", "fr3_ee"}};
    config.has_force_torque_sensor = true;
    jtac::JtacParameters params;
    params.trajectory = trajectory_parameters();
    params.trajectory.default_path_tolerance_rad.setConstant(0.5);  // the tool yields up to ~15 mm
    params.trajectory.default_goal_tolerance_rad.setConstant(0.1);
    params.ft_cutoff_frequency_ratio = 0.05;
    params.ft_force_deadband_N = 0.5;
    params.ft_torque_deadband_Nm = 0.05;
    controller.configure(config, params);
    controller.activate();
    tip.mass.assign(6, 3.0);
    tip.stiffness.assign(6, 600.0);
    tip.damping.assign(6, 2.0 * std::sqrt(3.0 * 600.0));
    tip.selected_axes = {true, true, true, false, false, false};
  }
  bool submit(const jtac::TrajectoryGoal& goal, double time_s) {
    jtac::JtacGoal g;
    g.trajectory = goal;
    g.tips = {tip};
    g.joint_damping_per_s = 0.5;
    return controller.submit_goal(g, time_s).code == jtac::ResultCode::kSuccessful;
  }
  void update(double time_s, const jtac::JointVector& q, const jtac::JointVector& v) {
    controller.update(time_s, kPeriodS, q, v, wrenches, out);
  }
  // The push for the next cycle (outside the counted region).
  void set_push(double t) {
    wrenches[0] << 8.0 * std::sin(2.0 * std::numbers::pi * 0.7 * t),
        4.0 * std::cos(2.0 * std::numbers::pi * 1.1 * t), 6.0 * std::sin(2.0 * std::numbers::pi * 0.5 * t),
        0.2, -0.1, 0.0;
  }
  const jtac::ControllerOutput& output() const { return out.trajectory; }
  bool poll_event(jtac::Event& e) { return controller.poll_event(e); }
  jtac::JointTrajectoryAdmittanceController controller;
  jtac::TipGoal tip;
  jtac::TipWrenches wrenches{};
  jtac::JtacOutput out;
};

template <class Case>
int run(Case& c, const jtac::TrajectoryGoal& goal, const double* q0, long warmup, long count,
        const char* what) {
  jtac::JointVector q(kNumJoints), v = jtac::JointVector::Zero(kNumJoints);
  for (int j = 0; j < kNumJoints; ++j) {
    q[j] = q0[j];
  }
  double time_s = 1.0;
  long executing = 0;
  long aborted = 0;
  for (long i = 0; i < warmup + count; ++i) {
    if (i == 0 || c.output().mode == jtac::ControllerMode::kIdle) {
      if (!c.submit(goal, time_s)) {
        std::printf("goal refused\n");
        return 1;
      }
    }
    time_s += kPeriodS;
    if constexpr (requires { c.set_push(time_s); }) {
      c.set_push(time_s);
    }
    const bool counted = i >= warmup;
    if (counted) {
      CALLGRIND_TOGGLE_COLLECT;
    }
    c.update(time_s, q, v);
    if (counted) {
      CALLGRIND_TOGGLE_COLLECT;
      executing += c.output().mode == jtac::ControllerMode::kExecuting ? 1 : 0;
    }
    q = c.output().command.position_rad;  // a perfect arm
    v = c.output().command.velocity_rad_s;
    jtac::Event e;
    while (c.poll_event(e)) {
      aborted += e.type == jtac::EventType::kGoalAborted ? 1 : 0;
    }
  }
  std::printf("%s: %ld update() calls counted after %ld warm-up cycles; %ld executing, %ld goals aborted\n",
              what, count, warmup, executing, aborted);
  return aborted == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (!JTAC_HAVE_CALLGRIND) {
    std::printf("built without <valgrind/callgrind.h>: nothing to count\n");
    return kSkipped;
  }
  const long warmup = argc > 1 ? std::stol(argv[1]) : 1000;
  const long count = argc > 2 ? std::stol(argv[2]) : 10000;
  const std::string which = argc > 3 ? argv[3] : "trajectory";
  std::vector<std::string> names;
  for (int i = 1; i <= kNumJoints; ++i) {
    names.push_back("fr3_joint" + std::to_string(i));
  }
  const double q0[kNumJoints] = {0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785};
  const jtac::TrajectoryGoal goal = make_goal(names, q0);
  if (which == "trajectory") {
    TrajectoryCase c(names);
    return run(c, goal, q0, warmup, count, "TrajectoryController");
  }
  if (which == "jtac") {
    JtacCase c(names);
    return run(c, goal, q0, warmup, count, "JointTrajectoryAdmittanceController (admittance on, 1 tip)");
  }
  std::printf("unknown case '%s' (trajectory, jtac)\n", which.c_str());
  return 2;
}
