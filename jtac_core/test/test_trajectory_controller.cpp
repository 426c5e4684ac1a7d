// The trajectory engine's state machine, driven cycle by cycle with a simulated robot.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "jtac_core/stop_trajectory.hpp"
#include "jtac_core/trajectory_controller.hpp"

namespace {

using jtac::ControllerMode;
using jtac::Event;
using jtac::EventDetail;
using jtac::EventType;
using jtac::ResultCode;

constexpr double kDt = 0.001;       // [s]
constexpr double kStopAccel = 4.0;  // [rad/s²]

jtac::GoalPoint point(double t, std::vector<double> q, std::vector<double> v = {},
                      std::vector<double> a = {}) {
  jtac::GoalPoint p;
  p.time_from_start_s = t;
  p.positions_rad = std::move(q);
  p.velocities_rad_s = std::move(v);
  p.accelerations_rad_s2 = std::move(a);
  return p;
}

class Engine : public ::testing::Test {
 protected:
  void SetUp() override { configure({}); }

  // `robot_limits`: the FR3's joint velocity and acceleration limits bound jtac's own segments.
  void configure(std::vector<std::string> continuous, bool robot_limits = false) {
    jtac::ControllerConfig config;
    config.joint_names = {"a", "b", "c"};
    config.continuous_joints = std::move(continuous);
    config.max_trajectory_points = 100;
    if (robot_limits) {
      config.max_velocity_rad_s = {2.62, 2.62, 2.62};       // FR3 joints 1-3 [rad/s]
      config.max_acceleration_rad_s2 = {10.0, 10.0, 10.0};  // [rad/s²]
    }
    params_.stop_accelerations_rad_s2 = jtac::JointVector::Constant(3, kStopAccel);
    params_.default_path_tolerance_rad = jtac::JointVector::Constant(3, 0.05);
    params_.default_goal_tolerance_rad = jtac::JointVector::Constant(3, 0.05);
    ctrl_.configure(config, params_);
    ctrl_.activate();
    q_ = jtac::JointVector::Zero(3);
    dq_ = jtac::JointVector::Zero(3);
    step();  // first cycle: the command reference starts at the measured position
  }

  // One cycle; the robot is perfect (measured = command) plus `measurement_offset_`.
  jtac::UpdateStatus step(const jtac::CycleSeams& seams = {}) {
    t_ += kDt;
    const auto status = ctrl_.update(t_, kDt, q_, dq_, seams, out_);
    q_ = out_.command.position_rad + measurement_offset_;
    dq_ = out_.command.velocity_rad_s;
    drain();
    return status;
  }

  void run(double seconds) {
    const int n = static_cast<int>(std::lround(seconds / kDt));
    for (int i = 0; i < n; ++i) {
      step();
    }
  }

  // Runs until an event of `type` for `goal_id` has arrived (or `max_s` passes); returns it.
  Event run_until(EventType type, std::uint64_t goal_id, double max_s = 20.0) {
    for (int i = 0; i < static_cast<int>(max_s / kDt); ++i) {
      for (std::size_t k = 0; k < events_.size(); ++k) {
        if (events_[k].type == type && events_[k].goal_id == goal_id) {
          return events_[k];
        }
      }
      step();
    }
    ADD_FAILURE() << "no event of type " << static_cast<int>(type) << " for goal " << goal_id;
    return {};
  }

  void drain() {
    Event e;
    while (ctrl_.poll_event(e)) {
      events_.push_back(e);
    }
  }

  const Event* find(EventType type, std::uint64_t goal_id) const {
    for (const auto& e : events_) {
      if (e.type == type && e.goal_id == goal_id) {
        return &e;
      }
    }
    return nullptr;
  }

  std::uint64_t submit(const jtac::TrajectoryGoal& goal) {
    const jtac::SubmitResult r = ctrl_.submit_goal(goal, t_);
    EXPECT_EQ(r.code, ResultCode::kSuccessful) << r.message;
    EXPECT_FALSE(r.busy);
    return r.goal_id;
  }

  // A rest-to-rest move of every joint by `delta` over `duration` seconds (quintic points).
  jtac::TrajectoryGoal move(double delta, double duration) const {
    jtac::TrajectoryGoal goal;
    goal.joint_names = {"a", "b", "c"};
    const jtac::JointVector q0 = out_.reference.position_rad;
    for (int k = 1; k <= 4; ++k) {
      const double s = k / 4.0;
      const double blend = 10 * std::pow(s, 3) - 15 * std::pow(s, 4) + 6 * std::pow(s, 5);
      const double dblend = (30 * std::pow(s, 2) - 60 * std::pow(s, 3) + 30 * std::pow(s, 4)) / duration;
      const double ddblend = (60 * s - 180 * std::pow(s, 2) + 120 * std::pow(s, 3)) / (duration * duration);
      goal.points.push_back(point(s * duration,
                                  {q0[0] + delta * blend, q0[1] + delta * blend, q0[2] + delta * blend},
                                  {delta * dblend, delta * dblend, delta * dblend},
                                  {delta * ddblend, delta * ddblend, delta * ddblend}));
    }
    return goal;
  }

  jtac::TrajectoryController ctrl_;
  jtac::ControllerParameters params_;
  jtac::ControllerOutput out_;
  jtac::JointVector q_;
  jtac::JointVector dq_;
  jtac::JointVector measurement_offset_ = jtac::JointVector::Zero(3);
  std::vector<Event> events_;
  double t_ = 100.0;  // [s] controller clock
};

TEST_F(Engine, HoldsTheMeasuredPositionAfterActivation) {
  jtac::TrajectoryController ctrl;
  jtac::ControllerConfig config;
  config.joint_names = {"a", "b", "c"};
  ctrl.configure(config, params_);
  ctrl.activate();
  jtac::JointVector q(3);
  q << 0.3, -1.2, 2.0;
  jtac::ControllerOutput out;
  ASSERT_EQ(ctrl.update(1.0, kDt, q, jtac::JointVector::Zero(3), {}, out), jtac::UpdateStatus::kOk);
  EXPECT_EQ(out.mode, ControllerMode::kIdle);
  EXPECT_EQ(out.command.position_rad, q);
  EXPECT_EQ(out.command.velocity_rad_s, jtac::JointVector::Zero(3));
}

TEST_F(Engine, ActivatedAtACommandedPositionHoldsItNotTheMeasurement) {
  jtac::TrajectoryController ctrl;
  jtac::ControllerConfig config;
  config.joint_names = {"a", "b", "c"};
  ctrl.configure(config, params_);
  jtac::JointVector commanded(3);
  commanded << 0.3, -1.2, 2.0;
  const jtac::JointVector measured = commanded + jtac::JointVector::Constant(3, 2e-4);  // lagging arm
  ctrl.activate(commanded);
  jtac::ControllerOutput out;
  for (int k = 0; k < 5; ++k) {
    ASSERT_EQ(ctrl.update(1.0 + k * kDt, kDt, measured, jtac::JointVector::Zero(3), {}, out),
              jtac::UpdateStatus::kOk);
    EXPECT_EQ(out.command.position_rad, commanded);
    EXPECT_EQ(out.command.velocity_rad_s, jtac::JointVector::Zero(3));
  }
  // A re-activation without a command forgets it: the measurement again.
  ctrl.deactivate(2.0);
  ctrl.activate();
  ASSERT_EQ(ctrl.update(2.1, kDt, measured, jtac::JointVector::Zero(3), {}, out), jtac::UpdateStatus::kOk);
  EXPECT_EQ(out.command.position_rad, measured);
  // A non-finite or wrongly sized command falls back to the measurement.
  jtac::JointVector bad = commanded;
  bad[1] = std::numeric_limits<double>::quiet_NaN();
  const jtac::JointVector wrong_size = jtac::JointVector::Zero(2);
  for (const jtac::JointVector* command : std::array<const jtac::JointVector*, 2>{&bad, &wrong_size}) {
    ctrl.deactivate(3.0);
    ctrl.activate(*command);
    ASSERT_EQ(ctrl.update(3.1, kDt, measured, jtac::JointVector::Zero(3), {}, out), jtac::UpdateStatus::kOk);
    EXPECT_EQ(out.command.position_rad, measured);
  }
}

TEST_F(Engine, TracksAQuinticGoalThroughEveryWaypointAndSucceedsAtRest) {
  const auto goal = move(0.5, 1.0);
  const double t0 = t_ + kDt;  // taken (time_from_start = 0) at the next cycle
  const auto id = submit(goal);
  double max_error = 0.0;
  for (int i = 0; i < 1000; ++i) {
    step();
    const double tau = t_ - t0;
    for (const auto& p : goal.points) {  // the command passes each waypoint at its time
      if (std::abs(tau - p.time_from_start_s) < 1e-9) {
        max_error = std::max(max_error, std::abs(out_.command.position_rad[0] - p.positions_rad[0]));
      }
    }
  }
  EXPECT_LT(max_error, 1e-9);
  const Event done = run_until(EventType::kGoalSucceeded, id, 0.1);
  EXPECT_EQ(done.code, ResultCode::kSuccessful);
  EXPECT_NEAR(out_.command.position_rad[2], 0.5, 1e-9);
  EXPECT_EQ(out_.command.velocity_rad_s.norm(), 0.0);
  ASSERT_NE(find(EventType::kGoalStarted, id), nullptr);
  EXPECT_EQ(out_.mode, ControllerMode::kIdle);
}

TEST_F(Engine, PathToleranceBrakesWithinStopAccelerationsThenAborts) {
  const auto id = submit(move(1.0, 1.0));
  run(0.5);  // mid-motion: peak velocity 1.875 rad/s
  const double v0 = out_.command.velocity_rad_s[1];
  ASSERT_GT(v0, 1.5);
  measurement_offset_[1] = 0.08;  // the robot falls behind on joint b
  double max_decel = 0.0;
  double v_prev = out_.command.velocity_rad_s[1];
  const double t_violation = t_ + kDt;
  const Event* stop = nullptr;
  while (stop == nullptr || out_.command.velocity_rad_s.norm() > 0.0) {
    step();
    max_decel = std::max(max_decel, std::abs(out_.command.velocity_rad_s[1] - v_prev) / kDt);
    v_prev = out_.command.velocity_rad_s[1];
    stop = find(EventType::kStopStarted, id);
    ASSERT_LT(t_ - t_violation, 2.0);
  }
  EXPECT_EQ(stop->detail, EventDetail::kPathTolerance);
  EXPECT_EQ(stop->joint, 1);
  EXPECT_NEAR(stop->stop_duration_s, v0 / kStopAccel, 0.01);
  EXPECT_DOUBLE_EQ(stop->limit, 0.05);
  EXPECT_LE(max_decel, kStopAccel + 1e-6);  // never a cut to zero
  // Minimum time: v0 / a, within a cycle.
  EXPECT_NEAR(t_ - t_violation, v0 / kStopAccel, 2 * kDt);
  const Event result = run_until(EventType::kGoalAborted, id, 0.01);
  EXPECT_EQ(result.code, ResultCode::kPathToleranceViolated);
  // The measurement lags the reference by the offset minus one cycle of motion.
  EXPECT_NEAR(result.value, 0.08 - v0 * kDt, 1e-3);
  EXPECT_NE(jtac::describe(result, ctrl_.joint_names()).find("joint 'b' deviates 0.078"), std::string::npos)
      << jtac::describe(result, ctrl_.joint_names());
}

TEST_F(Engine, GoalToleranceIsCheckedOnceAtTheEndWithoutSettlingTime) {
  auto goal = move(0.3, 0.5);
  goal.goal_tolerance_rad = {0.01, 0.01, 0.01};
  const auto id = submit(goal);
  run(0.45);
  measurement_offset_[2] = -0.02;  // inside the path tolerance, outside the goal tolerance
  const Event result = run_until(EventType::kGoalAborted, id, 0.2);
  EXPECT_EQ(result.code, ResultCode::kGoalToleranceViolated);
  EXPECT_EQ(result.joint, 2);
  EXPECT_NEAR(result.value, 0.02, 1e-6);
}

TEST_F(Engine, SettlingSucceedsAsSoonAsTheArmIsInsideTheGoalTolerance) {
  auto goal = move(0.3, 0.5);
  goal.goal_tolerance_rad = {0.01, 0.01, 0.01};
  goal.goal_time_tolerance_s = 0.5;
  const auto id = submit(goal);
  run(0.45);
  measurement_offset_[0] = 0.03;
  run(0.1);  // past the end: settling
  EXPECT_EQ(out_.mode, ControllerMode::kSettling);
  EXPECT_EQ(find(EventType::kGoalAborted, id), nullptr);
  measurement_offset_[0] = 0.005;  // the robot catches up
  const double t_caught_up = t_;
  const Event result = run_until(EventType::kGoalSucceeded, id, 0.1);
  EXPECT_LE(result.time_s - t_caught_up, 2 * kDt + 1e-9);
}

TEST_F(Engine, SettlingRunsOutWithGoalToleranceViolatedAndStretchesWithTheTimeScale) {
  for (const double percent : {100.0, 50.0}) {
    params_.time_scale_percentage = percent;
    ASSERT_EQ(ctrl_.set_parameters(params_), "");
    run(2.0);  // let the filter reach the new scale
    measurement_offset_.setZero();
    auto goal = move(0.2, 0.4);
    goal.goal_tolerance_rad = {0.01, 0.01, 0.01};
    goal.goal_time_tolerance_s = 0.3;
    const auto id = submit(goal);
    const double t_submit = t_;
    double t_end = 0.0;
    while (out_.mode != ControllerMode::kSettling) {
      measurement_offset_[1] = out_.trajectory_time_s > 0.35 ? 0.02 : 0.0;
      step();
      t_end = t_;
      ASSERT_LT(t_end - t_submit, 5.0);
    }
    const Event result = run_until(EventType::kGoalAborted, id, 2.0);
    EXPECT_EQ(result.code, ResultCode::kGoalToleranceViolated);
    EXPECT_NEAR(result.time_s - t_end, 0.3 * 100.0 / percent, 3 * kDt) << percent << " %";
  }
}

TEST_F(Engine, CancelBrakesAndReportsCanceledAtRest) {
  const auto id = submit(move(1.0, 1.0));
  run(0.4);
  ctrl_.request_cancel(id);
  step();
  ASSERT_NE(find(EventType::kStopStarted, id), nullptr);
  EXPECT_EQ(find(EventType::kGoalCanceled, id), nullptr);  // not before the arm is at rest
  const Event result = run_until(EventType::kGoalCanceled, id, 2.0);
  EXPECT_EQ(out_.command.velocity_rad_s.norm(), 0.0);
  EXPECT_EQ(result.detail, EventDetail::kCanceled);
}

TEST_F(Engine, StitchesAGoalPlannedFromTheActivePathWithoutABump) {
  const auto first = submit(move(1.0, 2.0));
  run(0.7);
  // The second goal continues from the reference one cycle ahead (what a planner would send).
  jtac::TrajectoryGoal second;
  second.joint_names = {"c", "a", "b"};  // any order
  const double v = out_.reference.velocity_rad_s[0];
  const double q_next = out_.reference.position_rad[0] + v * kDt;
  second.points.push_back(point(kDt, {q_next, q_next, q_next}, {v, v, v}));
  second.points.push_back(point(1.0, {q_next + 0.3, q_next + 0.3, q_next + 0.3}, {0, 0, 0}));
  const jtac::JointVector q_before = out_.command.position_rad;
  const jtac::JointVector v_before = out_.command.velocity_rad_s;
  const auto id = submit(second);
  step();
  // The new path starts exactly where the old one would have been this cycle.
  EXPECT_LT((out_.command.position_rad - q_before).cwiseAbs().maxCoeff(), kDt * std::abs(v) + 1e-6);
  EXPECT_LT((out_.command.velocity_rad_s - v_before).cwiseAbs().maxCoeff(), 0.01);
  const Event* replaced = find(EventType::kGoalAborted, first);
  ASSERT_NE(replaced, nullptr);
  EXPECT_EQ(replaced->code, ResultCode::kGoalAbortedDueToStitching);
  EXPECT_EQ(out_.goal_id, id);
  run_until(EventType::kGoalSucceeded, id, 2.0);
}

TEST_F(Engine, ADiscontinuousStitchIsRejectedAndTheActiveGoalContinues) {
  const auto first = submit(move(1.0, 1.0));
  run(0.3);
  jtac::TrajectoryGoal jump;
  jump.joint_names = {"a", "b", "c"};
  jump.points.push_back(point(0.0, {-0.5, -0.5, -0.5}));
  jump.points.push_back(point(1.0, {0.0, 0.0, 0.0}));
  const auto id = submit(jump);
  step();
  const Event* rejected = find(EventType::kGoalAborted, id);
  ASSERT_NE(rejected, nullptr);
  EXPECT_EQ(rejected->code, ResultCode::kInvalidGoal);
  EXPECT_EQ(rejected->detail, EventDetail::kStitchPositionJump);
  EXPECT_EQ(rejected->joint, 0);
  EXPECT_GT(rejected->value, 0.5);
  EXPECT_EQ(out_.goal_id, first);
  run_until(EventType::kGoalSucceeded, first, 1.0);
}

TEST_F(Engine, AGoalDuringSettlingIsAbortedAndTheActiveOneStopped) {
  auto goal = move(0.2, 0.3);
  goal.goal_tolerance_rad = {0.01, 0.01, 0.01};
  goal.goal_time_tolerance_s = 1.0;
  const auto first = submit(goal);
  run(0.25);
  measurement_offset_[0] = 0.03;
  run(0.1);
  ASSERT_EQ(out_.mode, ControllerMode::kSettling);
  const auto second = submit(move(0.1, 0.5));
  step();
  const Event* rejected = find(EventType::kGoalAborted, second);
  ASSERT_NE(rejected, nullptr);
  EXPECT_EQ(rejected->detail, EventDetail::kGoalDuringSettling);
  const Event result = run_until(EventType::kGoalAborted, first, 0.1);
  EXPECT_EQ(result.code, ResultCode::kGoalAbortedDueToStitching);
}

// Stop-and-replan as MoveIt does it: cancel, then the replanned goal arrives while the arm still
// brakes. It is held until the brake ends and then started from rest.
class StopAndReplan : public Engine {
 protected:
  // Cancels `goal` mid-motion; returns where the brake will bring the arm to rest (the stop's own
  // plan from the last command) and its predicted duration.
  jtac::JointVector cancel_and_predict_rest(std::uint64_t goal, double& stop_duration_s) {
    const jtac::JointVector q = out_.command.position_rad;
    const jtac::JointVector v = out_.command.velocity_rad_s;
    ctrl_.request_cancel(goal);
    step();
    EXPECT_EQ(out_.mode, ControllerMode::kStopping);
    jtac::StopTrajectory stop;
    stop.start(q, v, jtac::JointVector::Constant(3, kStopAccel));
    stop_duration_s = stop.duration();
    jtac::JointVector q_rest(3), v_rest(3), a_rest(3);
    stop.sample(stop.duration(), q_rest, v_rest, a_rest);
    return q_rest;
  }

  // What a planner sends: a t = 0 point at `q0` at rest, then a quintic move by `delta` (MoveIt's
  // shape: positions, velocities, accelerations, the first point at time 0).
  static jtac::TrajectoryGoal replan_from(const jtac::JointVector& q0, double delta, double duration_s) {
    jtac::TrajectoryGoal goal;
    goal.joint_names = {"a", "b", "c"};
    goal.points.push_back(point(0.0, {q0[0], q0[1], q0[2]}, {0, 0, 0}, {0, 0, 0}));
    for (int k = 1; k <= 4; ++k) {
      const double s = k / 4.0;
      const double p = 10 * std::pow(s, 3) - 15 * std::pow(s, 4) + 6 * std::pow(s, 5);
      const double v = (30 * std::pow(s, 2) - 60 * std::pow(s, 3) + 30 * std::pow(s, 4)) / duration_s;
      const double a = (60 * s - 180 * std::pow(s, 2) + 120 * std::pow(s, 3)) / (duration_s * duration_s);
      goal.points.push_back(point(s * duration_s, {q0[0] + delta * p, q0[1] + delta * p, q0[2] + delta * p},
                                  {delta * v, delta * v, delta * v}, {delta * a, delta * a, delta * a}));
    }
    return goal;
  }
};

TEST_F(StopAndReplan, AGoalPlannedFromTheRestPositionIsHeldThroughTheBrakeAndStartsAtRestWithoutAStep) {
  const auto first = submit(move(1.0, 1.0));
  run(0.5);  // mid-motion: 1.875 rad/s on every joint
  const double t_cancel = t_;
  double stop_duration_s = 0.0;
  const jtac::JointVector q_rest = cancel_and_predict_rest(first, stop_duration_s);
  ASSERT_NEAR(stop_duration_s, 1.875 / kStopAccel, 1e-3);
  run(0.1);  // the planner's latency: the replanned goal lands mid-brake
  ASSERT_EQ(out_.mode, ControllerMode::kStopping);
  const auto second = submit(replan_from(q_rest, 0.2, 1.0));
  EXPECT_TRUE(ctrl_.submit_goal(move(0.1, 1.0), t_).busy);  // one goal held at a time
  // Through the brake: not started, not refused, the stop runs as planned (v only shrinks).
  double v_prev = out_.command.velocity_rad_s.cwiseAbs().maxCoeff();
  double max_dv = 0.0;
  double t_started = 0.0;
  double t_canceled = 0.0;
  while (t_ < t_cancel + 2.0 && t_started == 0.0) {
    step();
    const double v = out_.command.velocity_rad_s.cwiseAbs().maxCoeff();
    max_dv = std::max(max_dv, std::abs(v - v_prev));
    v_prev = v;
    if (t_canceled == 0.0 && find(EventType::kGoalCanceled, first) != nullptr) {
      t_canceled = t_;
      EXPECT_EQ(out_.command.velocity_rad_s.norm(), 0.0);  // the cancel's result comes at rest
      EXPECT_EQ(find(EventType::kGoalStarted, second), nullptr);
    }
    if (const Event* started = find(EventType::kGoalStarted, second); started != nullptr) {
      t_started = started->time_s;
    }
  }
  EXPECT_EQ(find(EventType::kGoalAborted, second), nullptr);
  ASSERT_GT(t_canceled, 0.0);
  ASSERT_GT(t_started, 0.0);
  // Taken the cycle after the brake ended, within the predicted stop time.
  EXPECT_NEAR(t_started, t_canceled + kDt, 1e-9);
  EXPECT_LE(t_started - t_cancel, stop_duration_s + 2 * kDt);
  // It starts where the arm rests, at rest: no position jump, no velocity step.
  EXPECT_LT((out_.reference.position_rad - q_rest).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_LE(max_dv, kStopAccel * kDt + 1e-9);
  const double peak_accel = 5.7735 * 0.2;  // the quintic's peak |a| = 10/sqrt(3)·Δ/T² [rad/s²]
  for (int i = 0; i < 1100 && find(EventType::kGoalSucceeded, second) == nullptr; ++i) {
    const jtac::JointVector v_before = out_.command.velocity_rad_s;
    step();
    EXPECT_LE((out_.command.velocity_rad_s - v_before).cwiseAbs().maxCoeff(), peak_accel * kDt + 1e-6);
  }
  ASSERT_NE(find(EventType::kGoalSucceeded, second), nullptr);
  EXPECT_LT((out_.command.position_rad - q_rest - jtac::JointVector::Constant(3, 0.2)).cwiseAbs().maxCoeff(),
            1e-9);
}

TEST_F(StopAndReplan, AGoalNotContinuousWithTheRestPositionIsRefusedAfterTheBrakeWithTheJump) {
  const auto first = submit(move(1.0, 1.0));
  run(0.5);
  double stop_duration_s = 0.0;
  const jtac::JointVector q_rest = cancel_and_predict_rest(first, stop_duration_s);
  // Planned from where the arm was at the cancel: the brake carries it on by v·T/2 = 0.44 rad.
  const jtac::JointVector q_planned = out_.command.position_rad;
  const auto second = submit(replan_from(q_planned, 0.2, 1.0));
  run(stop_duration_s - 0.05);
  EXPECT_EQ(find(EventType::kGoalAborted, second), nullptr);  // held, not refused while braking
  run_until(EventType::kGoalCanceled, first, 0.2);
  const Event refused = run_until(EventType::kGoalAborted, second, 0.01);
  EXPECT_EQ(refused.code, ResultCode::kInvalidGoal);
  EXPECT_EQ(refused.detail, EventDetail::kStartPositionJump);
  EXPECT_EQ(refused.joint, 0);
  EXPECT_NEAR(refused.value, std::abs(q_rest[0] - q_planned[0]), 1e-9);
  EXPECT_DOUBLE_EQ(refused.limit, params_.start_position_tolerance_rad);
  EXPECT_EQ(find(EventType::kGoalStarted, second), nullptr);
  run(0.1);  // nothing moves
  EXPECT_EQ(out_.mode, ControllerMode::kIdle);
  EXPECT_LT((out_.command.position_rad - q_rest).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_EQ(out_.command.velocity_rad_s.norm(), 0.0);
}

TEST_F(StopAndReplan, ACancelAndItsReplacementInTheSameCycleBrakeFirst) {
  const auto first = submit(move(1.0, 1.0));
  run(0.5);
  const jtac::JointVector q = out_.command.position_rad;
  const jtac::JointVector v = out_.command.velocity_rad_s;
  jtac::StopTrajectory stop;
  stop.start(q, v, jtac::JointVector::Constant(3, kStopAccel));
  jtac::JointVector q_rest(3), v_rest(3), a_rest(3);
  stop.sample(stop.duration(), q_rest, v_rest, a_rest);
  // Both reach the control thread before its next cycle: the cancel wins, the goal waits.
  ctrl_.request_cancel(first);
  const auto second = submit(replan_from(q_rest, 0.2, 1.0));
  step();
  EXPECT_EQ(out_.mode, ControllerMode::kStopping);
  EXPECT_EQ(find(EventType::kGoalAborted, first), nullptr);  // not replaced by stitching: canceled
  EXPECT_EQ(find(EventType::kGoalStarted, second), nullptr);
  run_until(EventType::kGoalCanceled, first, stop.duration() + 0.01);
  const Event started = run_until(EventType::kGoalStarted, second, 0.01);
  EXPECT_GT(started.time_s, 0.0);
  EXPECT_LT((out_.reference.position_rad - q_rest).cwiseAbs().maxCoeff(), 1e-6);
  run_until(EventType::kGoalSucceeded, second, 1.1);
}

TEST_F(StopAndReplan, AHeldGoalCanBeCanceledBeforeItStarts) {
  const auto first = submit(move(1.0, 1.0));
  run(0.5);
  double stop_duration_s = 0.0;
  const jtac::JointVector q_rest = cancel_and_predict_rest(first, stop_duration_s);
  const auto second = submit(replan_from(q_rest, 0.2, 1.0));
  step();
  ctrl_.request_cancel(second);
  step();
  const Event* canceled = find(EventType::kGoalCanceled, second);
  ASSERT_NE(canceled, nullptr);
  EXPECT_EQ(out_.mode, ControllerMode::kStopping);  // the first goal's brake goes on
  run_until(EventType::kGoalCanceled, first, stop_duration_s + 0.01);
  run(0.1);
  EXPECT_EQ(find(EventType::kGoalStarted, second), nullptr);
  EXPECT_EQ(out_.mode, ControllerMode::kIdle);
}

TEST_F(Engine, DeactivationAbortsAtOnceAndLeavesTheLastSetpoint) {
  const auto id = submit(move(1.0, 1.0));
  run(0.5);
  const jtac::JointVector last = out_.command.position_rad;
  ctrl_.deactivate(t_);
  drain();
  const Event* aborted = find(EventType::kGoalAborted, id);
  ASSERT_NE(aborted, nullptr);
  EXPECT_EQ(aborted->code, ResultCode::kInvalidState);
  EXPECT_EQ(ctrl_.update(t_ + kDt, kDt, q_, dq_, {}, out_), jtac::UpdateStatus::kInactive);
  EXPECT_EQ(out_.command.position_rad, last);
  EXPECT_EQ(ctrl_.submit_goal(move(0.1, 1.0), t_).code, ResultCode::kInvalidState);
}

TEST_F(Engine, DeactivationWhileBrakingKeepsTheStopsOwnReason) {
  const auto id = submit(move(1.0, 1.0));
  run(0.5);
  measurement_offset_[0] = 0.1;
  step();
  step();  // the lagging measurement arrives one cycle later
  ASSERT_EQ(out_.mode, ControllerMode::kStopping);
  ctrl_.deactivate(t_);
  drain();
  const Event* aborted = find(EventType::kGoalAborted, id);
  ASSERT_NE(aborted, nullptr);
  EXPECT_EQ(aborted->code, ResultCode::kPathToleranceViolated);
}

TEST_F(Engine, NonFiniteMeasurementDuringMotionBrakesAndNamesJointAndInterface) {
  const auto id = submit(move(1.0, 1.0));
  run(0.3);
  dq_[2] = std::numeric_limits<double>::quiet_NaN();
  t_ += kDt;
  ctrl_.update(t_, kDt, q_, dq_, {}, out_);
  drain();
  const Event* stop = find(EventType::kStopStarted, id);
  ASSERT_NE(stop, nullptr);
  EXPECT_EQ(stop->detail, EventDetail::kNonFiniteMeasuredVelocity);
  EXPECT_EQ(stop->joint, 2);
  EXPECT_TRUE(out_.command.position_rad.allFinite());
  q_ = out_.command.position_rad;
  dq_ = out_.command.velocity_rad_s;
  const Event result = run_until(EventType::kGoalAborted, id, 2.0);
  EXPECT_EQ(result.code, ResultCode::kPathToleranceViolated);
  EXPECT_NE(jtac::describe(result, ctrl_.joint_names())
                .find("measured velocity of joint 'c' (state interface velocity) is nan; braking"),
            std::string::npos);
}

TEST_F(Engine, NonFiniteJointOffsetIsAnAdmittanceErrorAndNeverReachesTheCommand) {
  const auto id = submit(move(1.0, 1.0));
  run(0.3);
  jtac::JointVector offset = jtac::JointVector::Zero(3);
  offset[1] = std::numeric_limits<double>::infinity();
  jtac::CycleSeams seams;
  seams.joint_offset_rad = &offset;
  step(seams);
  EXPECT_TRUE(out_.command.position_rad.allFinite());
  const Event* stop = find(EventType::kStopStarted, id);
  ASSERT_NE(stop, nullptr);
  EXPECT_EQ(stop->code, ResultCode::kAdmittanceError);
  EXPECT_EQ(stop->joint, 1);
  run_until(EventType::kGoalAborted, id, 2.0);
}

TEST_F(Engine, AnExternalStopRequestBrakesWithItsCode) {
  const auto id = submit(move(1.0, 1.0));
  run(0.3);
  jtac::CycleSeams seams;
  seams.stop_requested = true;
  seams.stop_code = ResultCode::kForceTorqueThresholdExceeded;
  seams.stop_index = 2;
  seams.stop_value = 51.0;
  seams.stop_limit = 45.0;
  step(seams);
  const Event result = run_until(EventType::kGoalAborted, id, 2.0);
  EXPECT_EQ(result.code, ResultCode::kForceTorqueThresholdExceeded);
  EXPECT_DOUBLE_EQ(result.value, 51.0);
}

TEST_F(Engine, TimeScaleZeroHoldsStillAndHalfSpeedTakesTwiceAsLong) {
  params_.time_scale_percentage = 0.0;
  ctrl_.set_parameters(params_);
  run(3.0);  // 180 %/s, then the lag's tail down to the 1e-6 % snap
  const auto id = submit(move(0.5, 5.0));
  run(1.0);
  EXPECT_EQ(out_.trajectory_time_s, 0.0);
  EXPECT_NEAR(out_.command.position_rad[0], 0.0, 1e-12);
  params_.time_scale_percentage = 50.0;
  ctrl_.set_parameters(params_);
  run(2.0);  // the lag (0.1 s constant, 180 %/s) has long settled
  const double tau_before = out_.trajectory_time_s;
  run(0.1);
  EXPECT_NEAR(out_.trajectory_time_s - tau_before, 0.05, 1e-6);
  EXPECT_NEAR(out_.time_scale, 0.5, 1e-6);
  run_until(EventType::kGoalSucceeded, id, 11.0);
}

TEST_F(Engine, ScaledReferenceDerivativesStayConsistentWhileTheScaleRamps) {
  // v = dq/dτ·s and a = d²q/dτ²·s² + dq/dτ·ṡ must be the real time derivatives of the reference,
  // also while s changes (JTC leaves them unscaled).
  submit(move(1.0, 4.0));
  run(1.0);
  params_.time_scale_percentage = 30.0;
  ctrl_.set_parameters(params_);
  double worst_v = 0.0;
  double worst_a = 0.0;
  int smooth_cycles = 0;
  jtac::JointTrajectoryState prev = out_.reference;
  double s_prev = out_.time_scale;
  double sdot_prev = 0.0;
  for (int i = 0; i < 1500; ++i) {  // the ramp 100 → 30 % and the lag's tail
    step();
    // Trapezoidal rule: over one cycle, Δq ≈ dt·(v_prev + v)/2 and Δv ≈ dt·(a_prev + a)/2.
    const double v_fd = (out_.reference.position_rad[0] - prev.position_rad[0]) / kDt;
    worst_v =
        std::max(worst_v, std::abs(v_fd - 0.5 * (out_.reference.velocity_rad_s[0] + prev.velocity_rad_s[0])));
    // ṡ steps where the rate limit engages or releases; compare accelerations only where it is smooth.
    const double sdot = (out_.time_scale - s_prev) / kDt;
    if (std::abs(sdot - sdot_prev) < 0.05) {
      const double a_fd = (out_.reference.velocity_rad_s[0] - prev.velocity_rad_s[0]) / kDt;
      worst_a = std::max(worst_a, std::abs(a_fd - 0.5 * (out_.reference.acceleration_rad_s2[0] +
                                                         prev.acceleration_rad_s2[0])));
      ++smooth_cycles;
    }
    prev = out_.reference;
    s_prev = out_.time_scale;
    sdot_prev = sdot;
  }
  EXPECT_GT(smooth_cycles, 1400);
  EXPECT_LT(worst_v, 1e-4);  // [rad/s]
  EXPECT_LT(worst_a, 1e-2);  // [rad/s²]
  EXPECT_NEAR(out_.time_scale, 0.3, 1e-6);
}

TEST_F(Engine, AFutureStartWaitsHoldingThenExecutes) {
  auto goal = move(0.2, 0.5);
  goal.start_time_s = t_ + 0.3;
  const auto id = submit(goal);
  run(0.2);
  EXPECT_EQ(out_.mode, ControllerMode::kWaiting);
  EXPECT_EQ(out_.command.position_rad[0], 0.0);
  const Event done = run_until(EventType::kGoalSucceeded, id, 1.0);
  EXPECT_NEAR(done.time_s, goal.start_time_s + 0.5, 2 * kDt);
}

TEST_F(Engine, AGoalStartingAwayFromTheCommandIsRejectedNamingTheJump) {
  jtac::TrajectoryGoal goal;
  goal.joint_names = {"a", "b", "c"};
  goal.points.push_back(point(0.0, {0.0, 0.2, 0.0}));
  goal.points.push_back(point(1.0, {0.0, 0.3, 0.0}));
  const auto id = submit(goal);
  step();
  const Event* rejected = find(EventType::kGoalAborted, id);
  ASSERT_NE(rejected, nullptr);
  EXPECT_EQ(rejected->detail, EventDetail::kStartPositionJump);
  EXPECT_EQ(jtac::describe(*rejected, ctrl_.joint_names()),
            "trajectory does not start at the current command: joint 'b' jumps 0.2 rad (tolerance 0.05 rad)");
}

TEST_F(Engine, ContinuousJointsUseShortestDifferencesAndOneWholeTurnOffsetPerGoal) {
  configure({"c"});
  // The planner writes joint c three turns away; the command must stay in its own branch.
  jtac::TrajectoryGoal goal;
  goal.joint_names = {"a", "b", "c"};
  const double turns = 6.0 * std::numbers::pi;
  goal.points.push_back(point(0.5, {0.0, 0.0, turns + 0.3}, {0, 0, 0}));
  const auto id = submit(goal);
  double max_step = 0.0;
  double prev = out_.command.position_rad[2];
  for (int i = 0; i < 400; ++i) {
    // Feedback wraps into [-pi, pi): no false full-turn tracking error.
    step();
    q_[2] = std::remainder(q_[2] + 2.0 * std::numbers::pi, 2.0 * std::numbers::pi);
    max_step = std::max(max_step, std::abs(out_.command.position_rad[2] - prev));
    prev = out_.command.position_rad[2];
  }
  EXPECT_LT(max_step, 0.01);
  const Event done = run_until(EventType::kGoalSucceeded, id, 1.0);
  EXPECT_EQ(done.code, ResultCode::kSuccessful);
  EXPECT_NEAR(out_.command.position_rad[2], 0.3, 1e-9);
}

TEST_F(Engine, IntakeRejectionsNameFieldJointIndexAndValue) {
  jtac::TrajectoryGoal goal = move(0.1, 1.0);
  goal.joint_names[1] = "elbow";
  auto r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kInvalidJoints);
  EXPECT_EQ(r.message, "trajectory.joint_names[1] = 'elbow' is not a joint of this controller");
  goal = move(0.1, 1.0);
  goal.points[2].velocities_rad_s[1] = std::numeric_limits<double>::quiet_NaN();
  r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kInvalidGoal);
  EXPECT_EQ(r.message, "trajectory.points[2].velocities[1] (joint 'b') is nan");
  goal = move(0.1, 1.0);
  goal.points[1].effort = {1.0, 2.0, 3.0};
  r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kInvalidGoal);
  EXPECT_EQ(r.message,
            "trajectory.points[1].effort has 3 values: jtac commands joint positions and does not execute "
            "efforts; send the point without effort");
  // Finite but absurd: refused before interpolation can overflow or leave a stop that never ends.
  goal = move(0.1, 1.0);
  goal.points[3].positions_rad[0] = 1e300;
  r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kInvalidGoal);
  EXPECT_EQ(r.message,
            "trajectory.points[3].positions[0] (joint 'a') = 1e+300: beyond ±1000000, not a value a joint "
            "can take");
  goal = move(0.1, 1.0);
  goal.points[2].time_from_start_s = std::nextafter(goal.points[1].time_from_start_s, 1.0);
  r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kInvalidGoal);
  EXPECT_NE(
      r.message.find("trajectory.points[2].time_from_start = 0.5 s is not at least 1e-06 s after points[1]"),
      std::string::npos)
      << r.message;
  // A stamp whose whole trajectory lies in the past is judged by the cycle that takes the goal.
  goal = move(0.1, 1.0);
  goal.start_time_s = t_ - 5.0;
  const auto old = submit(goal);
  step();
  const Event* past = find(EventType::kGoalAborted, old);
  ASSERT_NE(past, nullptr);
  EXPECT_EQ(past->code, ResultCode::kOldHeaderTimestamp);
  EXPECT_NEAR(past->value, 4.0, 0.01);  // [s] ended 4 s (of trajectory time) before it was taken
}

// ---------------------------------------------------------------- seams: stamps under time scaling

// The same path (stamped) re-sent: the replacement must continue exactly where the active one is.
class StitchUnderScaling : public Engine {
 protected:
  // A rest-to-rest move of 0.1 rad over 4 s from where the arm is now, stamped at the next cycle.
  jtac::TrajectoryGoal path() const {
    jtac::TrajectoryGoal goal = move(0.1, 4.0);
    goal.start_time_s = t_ + kDt;
    return goal;
  }

  void set_scale(double percent) {
    auto p = params_;
    p.time_scale_percentage = percent;
    ASSERT_EQ(ctrl_.set_parameters(p), "");
  }

  // Runs `seconds` and returns the largest |velocity| commanded [rad/s].
  double run_peak_velocity(double seconds) {
    double peak = 0.0;
    for (int i = 0; i < static_cast<int>(std::lround(seconds / kDt)); ++i) {
      step();
      peak = std::max(peak, out_.command.velocity_rad_s.cwiseAbs().maxCoeff());
    }
    return peak;
  }

  // The move's own peak velocity: 15/8 · 0.1 rad / 4 s.
  static constexpr double kPathPeak_rad_s = 1.875 * 0.1 / 4.0;
};

TEST_F(StitchUnderScaling, ASameStampReplacementWhilePausedContinuesWhereThePathStopped) {
  const auto same = path();
  submit(same);
  run(1.0);
  set_scale(0.0);
  run(1.0);  // paused 1 s into the path (the lag has settled at 0 %)
  const double tau_active = out_.trajectory_time_s;
  const double q_paused = out_.command.position_rad[0];
  ASSERT_GT(tau_active, 0.9);
  const auto id = submit(same);
  step();
  ASSERT_NE(find(EventType::kGoalStarted, id), nullptr) << "the replacement was refused";
  // One more cycle at the scale's remaining 0.08 % (the lag approaches 0 exponentially).
  EXPECT_NEAR(out_.trajectory_time_s, tau_active, 1e-6);
  EXPECT_NEAR(out_.command.position_rad[0], q_paused, 1e-7);
  set_scale(100.0);
  EXPECT_LE(run_peak_velocity(4.0), kPathPeak_rad_s * 1.0001);  // it never runs back
  EXPECT_NE(find(EventType::kGoalSucceeded, id), nullptr);
}

TEST_F(StitchUnderScaling, ASameStampReplacementAfterASlowDownIsAccepted) {
  const auto same = path();
  submit(same);
  run(1.0);
  set_scale(50.0);
  run(1.0);
  const double tau_active = out_.trajectory_time_s;
  const auto id = submit(same);
  step();
  ASSERT_NE(find(EventType::kGoalStarted, id), nullptr) << "the replacement was refused";
  // τ of this cycle = the active τ plus one cycle at (nearly) 50 %.
  EXPECT_NEAR(out_.trajectory_time_s, tau_active + 0.5 * kDt, 1e-7);
}

TEST_F(StitchUnderScaling, AHalfDonePathStampedLongAgoIsNotOldWhilePaused) {
  const auto same = path();
  submit(same);
  run(2.0);
  set_scale(0.0);
  run(3.0);  // 5 s since the stamp, more than the path's 4 s; 2.29 s of it elapsed (2 s + the ramp)
  const double tau_active = out_.trajectory_time_s;
  const auto id = submit(same);
  step();
  ASSERT_NE(find(EventType::kGoalStarted, id), nullptr) << "refused as old";
  EXPECT_NEAR(out_.trajectory_time_s, tau_active, 1e-9);
  set_scale(100.0);
  EXPECT_EQ(run_until(EventType::kGoalSucceeded, id, 3.0).code, ResultCode::kSuccessful);
}

TEST_F(StitchUnderScaling, AFutureStampStartsAfterTheScaledWait) {
  // A stamp 0.5 s ahead at 50 %: the path starts at the stamp and runs at half speed from there.
  set_scale(50.0);
  run(1.0);
  auto goal = path();
  goal.start_time_s = t_ + 0.5;
  submit(goal);
  run(0.45);
  EXPECT_EQ(out_.mode, ControllerMode::kWaiting);
  run(1.0);
  EXPECT_EQ(out_.mode, ControllerMode::kExecuting);
  EXPECT_NEAR(out_.trajectory_time_s, 0.5 * (t_ - goal.start_time_s), 1e-6);
}

// ---------------------------------------------------------------- seams: positions-only goals

TEST_F(Engine, APositionsOnlyGoalOfAnySpeedStartsAndRunsWithoutVelocitySteps) {
  // 0.5 rad in 1 s, then a slow stretch, then fast again: linear interpolation refused it at the start
  // (0.5 rad/s > start_velocity_tolerance) and stepped the velocity at every point.
  jtac::TrajectoryGoal goal;
  goal.joint_names = {"a", "b", "c"};
  goal.points = {point(0.0, {0.0, 0.0, 0.0}), point(1.0, {0.5, -0.5, 0.2}), point(2.0, {0.55, -0.5, 0.3}),
                 point(2.5, {0.9, -0.2, 0.3})};
  const auto id = submit(goal);
  double peak_accel = 0.0;  // largest |Δv| / dt [rad/s²]
  double v_prev = 0.0;
  for (int i = 0; i < 2600; ++i) {
    step();
    peak_accel = std::max(peak_accel, std::abs(out_.command.velocity_rad_s[0] - v_prev) / kDt);
    v_prev = out_.command.velocity_rad_s[0];
  }
  EXPECT_EQ(run_until(EventType::kGoalSucceeded, id, 0.1).code, ResultCode::kSuccessful);
  EXPECT_LT(peak_accel, 6.0);  // a C2 spline through these points: |a| <= 5.2 rad/s² on joint a
  EXPECT_NEAR(out_.command.position_rad[0], 0.9, 1e-12);
  EXPECT_EQ(out_.command.velocity_rad_s[0], 0.0);
}

TEST_F(Engine, APositionsOnlySplinePassesEveryPointAndIsC2) {
  jtac::TrajectoryGoal goal;
  goal.joint_names = {"a", "b", "c"};
  // The first point lies ahead: the spline starts at the command, at rest.
  goal.points = {point(0.5, {0.2, 0.0, 0.0}), point(1.0, {0.1, 0.1, 0.0}), point(1.5, {0.4, 0.1, -0.1})};
  submit(goal);
  const double t_start = t_ + kDt;
  jtac::JointVector a_prev = jtac::JointVector::Zero(3);
  double max_jerk_step = 0.0;  // the largest change of acceleration in one cycle [rad/s²]
  for (int i = 0; i < 1600; ++i) {
    step();
    const double tau = t_ - t_start;
    for (const auto& p : goal.points) {
      if (std::abs(tau - p.time_from_start_s) < 1e-9) {
        for (int j = 0; j < 3; ++j) {
          EXPECT_NEAR(out_.command.position_rad[j], p.positions_rad[static_cast<std::size_t>(j)], 1e-12);
        }
      }
    }
    if (i > 0 && tau < 1.5) {  // C2 inside; the end (at rest) is C1: the acceleration steps to 0 there
      max_jerk_step =
          std::max(max_jerk_step, (out_.command.acceleration_rad_s2 - a_prev).cwiseAbs().maxCoeff());
    }
    a_prev = out_.command.acceleration_rad_s2;
  }
  // C2: the acceleration changes by jerk · dt per cycle, never steps (jerk here < 100 rad/s³).
  EXPECT_LT(max_jerk_step, 0.1);
}

TEST_F(Engine, APositionsOnlyGoalStitchedWhileMovingStartsAtTheCommandedVelocity) {
  submit(move(0.5, 1.0));
  run(0.5);
  const jtac::JointVector v_now = out_.command.velocity_rad_s;
  ASSERT_GT(v_now[0], 0.5);
  jtac::TrajectoryGoal goal;
  goal.joint_names = {"a", "b", "c"};
  const jtac::JointVector q = out_.command.position_rad + out_.command.velocity_rad_s * kDt;
  goal.points = {point(0.0, {q[0], q[1], q[2]}), point(1.0, {1.0, 1.0, 1.0})};
  const auto id = submit(goal);
  const jtac::JointVector v_before = out_.command.velocity_rad_s;
  step();
  ASSERT_NE(find(EventType::kGoalStarted, id), nullptr);
  EXPECT_LT((out_.command.velocity_rad_s - v_before).cwiseAbs().maxCoeff(), 0.01);
}

// ---------------------------------------------------------------- seams: non-finite input before motion

TEST_F(Engine, ANonFiniteMeasurementAtIntakeFailsTheGoalBeforeMotion) {
  const jtac::JointVector held = out_.command.position_rad;
  q_[1] = std::numeric_limits<double>::quiet_NaN();
  const auto id = submit(move(0.5, 1.0));
  t_ += kDt;
  ctrl_.update(t_, kDt, q_, dq_, {}, out_);
  drain();
  const Event* result = find(EventType::kGoalAborted, id);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->code, ResultCode::kInvalidGoal);
  EXPECT_EQ(result->detail, EventDetail::kNonFiniteMeasuredPosition);
  EXPECT_EQ(find(EventType::kGoalStarted, id), nullptr);
  EXPECT_EQ(find(EventType::kStopStarted, id), nullptr);
  EXPECT_EQ(
      jtac::describe(*result, ctrl_.joint_names()),
      "measured position of joint 'b' (state interface position) is nan: the goal is refused before any "
      "motion");
  EXPECT_EQ(out_.command.position_rad, held);
  EXPECT_EQ(out_.mode, ControllerMode::kIdle);
}

TEST_F(Engine, AnInputFaultFromAnotherComponentFailsANewGoalBeforeMotion) {
  jtac::CycleSeams seams;
  seams.input_fault = EventDetail::kNonFiniteWrench;
  seams.input_fault_index = 2;
  seams.input_fault_value = std::numeric_limits<double>::infinity();
  const auto id = submit(move(0.5, 1.0));
  step(seams);
  const Event* result = find(EventType::kGoalAborted, id);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->code, ResultCode::kInvalidGoal);
  EXPECT_EQ(jtac::describe(*result, ctrl_.joint_names()),
            "force/torque reading of tip 0 axis Fz (state interface force.z) is inf: the goal is refused "
            "before any "
            "motion");
}

// ---------------------------------------------------------------- seams: the connecting segment

class ConnectingSegment : public Engine {
 protected:
  void SetUp() override { configure({}, /*robot_limits=*/true); }

  // One point `delta` away at `t_first`, with velocities (a cubic segment from the command).
  static jtac::TrajectoryGoal ahead(double delta, double t_first) {
    jtac::TrajectoryGoal goal;
    goal.joint_names = {"a", "b", "c"};
    goal.points = {point(t_first, {delta, 0.0, 0.0}, {0.0, 0.0, 0.0})};
    return goal;
  }
};

TEST_F(ConnectingSegment, BeyondTheRobotsAccelerationLimitIsRefusedWithTheNumbers) {
  // 0.3 rad in 0.2 s from rest: the cubic needs 6 · 0.3 / 0.2² = 45 rad/s².
  const auto id = submit(ahead(0.3, 0.2));
  step();
  const Event* result = find(EventType::kGoalAborted, id);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->code, ResultCode::kInvalidGoal);
  EXPECT_EQ(result->detail, EventDetail::kConnectingAcceleration);
  EXPECT_EQ(result->joint, 0);
  EXPECT_NEAR(result->value, 45.0, 1.0);
  EXPECT_EQ(out_.command.position_rad[0], 0.0);
  const std::string message = jtac::describe(*result, ctrl_.joint_names());
  EXPECT_EQ(
      message.rfind("the segment jtac inserts from the current command to trajectory.points[0] needs 45 "
                    "rad/s^2 on joint 'a' at t = ",
                    0),
      0U)
      << message;
  EXPECT_NE(message.find("above the robot's acceleration limit of 10 rad/s^2"), std::string::npos) << message;
}

TEST_F(ConnectingSegment, WithinTheLimitsIsFollowedAndStaysWithinThem) {
  const auto id = submit(ahead(0.3, 1.0));  // peak 0.45 rad/s, 1.8 rad/s²
  double peak_v = 0.0;
  for (int i = 0; i < 1000; ++i) {
    step();
    peak_v = std::max(peak_v, std::abs(out_.command.velocity_rad_s[0]));
  }
  EXPECT_NEAR(peak_v, 0.45, 0.001);
  EXPECT_EQ(run_until(EventType::kGoalSucceeded, id, 0.1).code, ResultCode::kSuccessful);
}

TEST_F(ConnectingSegment, APositionsOnlySplineBeyondTheRobotsLimitsIsRefusedNamingWhere) {
  // Rest to 0.2 rad and back to rest in 0.1 s steps: the spline needs about 56 rad/s² at 0.1 s.
  jtac::TrajectoryGoal goal;
  goal.joint_names = {"a", "b", "c"};
  goal.points = {point(0.0, {0.0, 0.0, 0.0}), point(0.1, {0.1, 0.0, 0.0}), point(0.2, {0.2, 0.0, 0.0}),
                 point(0.3, {0.2, 0.0, 0.0})};
  const auto id = submit(goal);
  step();
  const Event* result = find(EventType::kGoalAborted, id);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->code, ResultCode::kInvalidGoal);
  EXPECT_EQ(result->detail, EventDetail::kSplineAcceleration);
  EXPECT_GT(result->value, 10.0);
  const std::string message = jtac::describe(*result, ctrl_.joint_names());
  EXPECT_EQ(message.rfind("the spline jtac fits through the positions-only points needs ", 0), 0U) << message;
  EXPECT_NE(message.find("on joint 'a' at t = "), std::string::npos) << message;
  // The same points four times slower are within the limits and run.
  for (auto& p : goal.points) {
    p.time_from_start_s *= 4.0;
  }
  const auto slower = submit(goal);
  EXPECT_EQ(run_until(EventType::kGoalSucceeded, slower, 2.0).code, ResultCode::kSuccessful);
}

TEST_F(ConnectingSegment, AReSentPathStampedNowCannotPullTheArmBack) {
  // The active path's first point lies 0.05 s in; re-sent 1 s later stamped "now", its connecting
  // segment would go back to that point at many times the path's speed.
  jtac::TrajectoryGoal path;
  path.joint_names = {"a", "b", "c"};
  path.points = {point(0.05, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}), point(2.0, {0.1, 0.0, 0.0}, {0.0, 0.0, 0.0})};
  submit(path);
  run(1.0);
  const auto id = submit(path);
  step();
  const Event* result = find(EventType::kGoalAborted, id);
  ASSERT_NE(result, nullptr) << "the re-sent path was accepted";
  EXPECT_EQ(result->code, ResultCode::kInvalidGoal);
  EXPECT_EQ(result->detail, EventDetail::kConnectingAcceleration);
}

// A rest-to-rest quintic of joint 'a' by `delta` over `duration`, sampled at `samples` points from
// duration/samples on (jtac_py's Trajectory.quintic), shifted by `offset` [rad].
jtac::TrajectoryGoal sampled_quintic(double delta, double duration, int samples, double offset = 0.0) {
  jtac::TrajectoryGoal goal;
  goal.joint_names = {"a", "b", "c"};
  for (int k = 1; k <= samples; ++k) {
    const double s = static_cast<double>(k) / samples;
    const double p = s * s * s * (10.0 - 15.0 * s + 6.0 * s * s);
    const double v = 30.0 * s * s * (1.0 - 2.0 * s + s * s) / duration;
    const double a = (60.0 * s - 180.0 * s * s + 120.0 * s * s * s) / (duration * duration);
    goal.points.push_back(
        point(s * duration, {offset + delta * p, 0.0, 0.0}, {delta * v, 0.0, 0.0}, {delta * a, 0.0, 0.0}));
  }
  return goal;
}

TEST_F(ConnectingSegment, AFastPlanSampledFromItsFirstMillisecondsIsFollowedAndAJumpStillRefused) {
  // 1 rad in 0.25 s, first sample at 5 ms: the plan peaks at 92 rad/s² and 7.5 rad/s (the planner's
  // business); the segment from rest to its first point is the plan's own first 5 ms, 18 rad/s² at
  // 5 ms, above the robot's 10 rad/s² but no more than the plan needs there.
  const auto id = submit(sampled_quintic(1.0, 0.25, 50));
  step();
  ASSERT_EQ(find(EventType::kGoalAborted, id), nullptr)
      << jtac::describe(*find(EventType::kGoalAborted, id), ctrl_.joint_names());
  ASSERT_NE(find(EventType::kGoalStarted, id), nullptr);
  double worst_rad = 0.0;  // the command against the plan
  for (int i = 0; i < 250; ++i) {
    const double s = std::min(1.0, i * kDt / 0.25);
    worst_rad = std::max(
        worst_rad, std::abs(out_.command.position_rad[0] - s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)));
    step();
  }
  EXPECT_LT(worst_rad, 1e-9);
  EXPECT_EQ(run_until(EventType::kGoalSucceeded, id, 0.5).code, ResultCode::kSuccessful);
  // The same plan with its first point 50 mrad off: reaching it in 5 ms needs 19 rad/s, far beyond
  // the robot's limit and anything the plan needs near its start: refused before any motion.
  const double held = out_.command.position_rad[0];
  const auto jump = submit(sampled_quintic(1.0, 0.25, 50, held + 0.05));
  step();
  const Event* result = find(EventType::kGoalAborted, jump);
  ASSERT_NE(result, nullptr) << "the jump was accepted";
  EXPECT_EQ(result->code, ResultCode::kInvalidGoal);
  EXPECT_EQ(result->detail, EventDetail::kConnectingVelocity);
  EXPECT_EQ(result->joint, 0);
  EXPECT_GT(result->value, 15.0);
  EXPECT_EQ(result->limit, 2.62);
  EXPECT_EQ(out_.command.position_rad[0], held);
}

TEST_F(Engine, ParametersAreValidatedWithNamesAndAppliedAtACycleBoundary) {
  auto bad = params_;
  bad.stop_accelerations_rad_s2[2] = -1.0;
  EXPECT_EQ(ctrl_.set_parameters(bad), "stop_accelerations[2] (joint 'c') = -1: must be > 0 and finite");
  bad = params_;
  bad.time_scale_percentage = 120.0;
  EXPECT_EQ(ctrl_.set_parameters(bad), "time_scale_percentage = 120: must be in [0, 100]");
}

}  // namespace
