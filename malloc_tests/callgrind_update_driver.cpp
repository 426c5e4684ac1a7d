// Instruction-count driver for callgrind_update.sh: 7 FR3 joints track a 1,000-point quintic goal
// (a perfect arm: measured = last command); after `warmup` cycles, exactly `count` update() calls
// run with callgrind's collection toggled on around each call and off around everything else (the
// simulated arm, goal submission, event draining). Run it under
//   valgrind --tool=callgrind --collect-atstart=no
// and the profile's total Ir divided by `count` is the cost of one update() in instructions, a
// figure that does not depend on the machine's speed or load.
//
// Usage: callgrind_update_driver [warmup cycles] [counted cycles]   (defaults 1000 10000)
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "jtac_core/trajectory_controller.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  if (!JTAC_HAVE_CALLGRIND) {
    std::printf("built without <valgrind/callgrind.h>: nothing to count\n");
    return kSkipped;
  }
  const long warmup = argc > 1 ? std::stol(argv[1]) : 1000;
  const long count = argc > 2 ? std::stol(argv[2]) : 10000;
  std::vector<std::string> names;
  for (int i = 1; i <= kNumJoints; ++i) {
    names.push_back("fr3_joint" + std::to_string(i));
  }
  const double q0[kNumJoints] = {0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785};
  const jtac::TrajectoryGoal goal = make_goal(names, q0);

  jtac::TrajectoryController controller;
  jtac::ControllerConfig config;
  config.joint_names = names;
  config.max_trajectory_points = kPoints;
  jtac::ControllerParameters params;
  params.stop_accelerations_rad_s2 = jtac::JointVector::Constant(kNumJoints, 10.0);
  params.default_path_tolerance_rad = jtac::JointVector::Constant(kNumJoints, 0.1);
  params.default_goal_tolerance_rad = jtac::JointVector::Constant(kNumJoints, 0.01);
  controller.configure(config, params);

  jtac::JointVector q(kNumJoints), v = jtac::JointVector::Zero(kNumJoints);
  for (int j = 0; j < kNumJoints; ++j) {
    q[j] = q0[j];
  }
  const jtac::CycleSeams seams;
  jtac::ControllerOutput out;
  controller.activate();
  double time_s = 1.0;
  long executing = 0;
  long aborted = 0;
  for (long i = 0; i < warmup + count; ++i) {
    if (i == 0 || out.mode == jtac::ControllerMode::kIdle) {
      if (controller.submit_goal(goal, time_s).code != jtac::ResultCode::kSuccessful) {
        std::printf("goal refused\n");
        return 1;
      }
    }
    time_s += kPeriodS;
    const bool counted = i >= warmup;
    if (counted) {
      CALLGRIND_TOGGLE_COLLECT;
    }
    controller.update(time_s, kPeriodS, q, v, seams, out);
    if (counted) {
      CALLGRIND_TOGGLE_COLLECT;
      executing += out.mode == jtac::ControllerMode::kExecuting ? 1 : 0;
    }
    q = out.command.position_rad;  // a perfect arm
    v = out.command.velocity_rad_s;
    jtac::Event e;
    while (controller.poll_event(e)) {
      aborted += e.type == jtac::EventType::kGoalAborted ? 1 : 0;
    }
  }
  std::printf("%ld update() calls counted after %ld warm-up cycles; %ld executing, %ld goals aborted\n",
              count, warmup, executing, aborted);
  return aborted == 0 ? 0 : 1;
}
