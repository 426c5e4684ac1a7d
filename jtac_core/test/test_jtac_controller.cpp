// The composed controller on the FR3 description: force/torque pipeline, thresholds, payload
// compensation, tare and admittance through the trajectory engine, on a kinematic loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "jtac_test_support.hpp"

namespace {

using jtac::Event;
using jtac::EventDetail;
using jtac::EventType;
using jtac::ResultCode;

constexpr double kDt = 0.001;

class Jtac : public ::testing::Test {
 protected:
  void SetUp() override { configure(true); }

  void configure(bool sensor, double update_rate_hz = 1000.0, bool check_stability = true) {
    jtac::JtacConfig config;
    config.update_rate_hz = update_rate_hz;
    config.check_admittance_stability = check_stability;
    config.trajectory.joint_names = jtac::test::arm_joint_names("fr3");
    config.trajectory.max_trajectory_points = 64;
    config.urdf_xml = jtac::test::read_text_file(JTAC_FR3_URDF);
    config.base_frame = "fr3_link0";
    config.tips = {{"fr3_ft_sensor", "fr3_ee"}};
    config.has_force_torque_sensor = sensor;
    params_.trajectory.stop_accelerations_rad_s2 = jtac::JointVector::Constant(7, 5.0);
    params_.trajectory.default_path_tolerance_rad = jtac::JointVector::Constant(7, 0.2);
    params_.trajectory.default_goal_tolerance_rad = jtac::JointVector::Constant(7, 0.2);
    ctrl_.configure(config, params_);
    kin_.configure(config.urdf_xml, "fr3_link0", jtac::test::arm_joint_names("fr3"));
    ctrl_.activate();
    q_.resize(7);
    q_ << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785;
    dq_ = jtac::JointVector::Zero(7);
    wrench_.fill(jtac::Vector6::Zero());
    step();
  }

  void step() {
    t_ += kDt;
    ctrl_.update(t_, kDt, q_, dq_, wrench_, out_);
    q_ = out_.trajectory.command.position_rad;  // kinematic loop
    dq_ = out_.trajectory.command.velocity_rad_s;
    Event e;
    while (ctrl_.poll_event(e)) {
      events_.push_back(e);
    }
  }

  void run(double seconds) {
    for (int i = 0; i < static_cast<int>(std::lround(seconds / kDt)); ++i) {
      step();
    }
  }

  // Steps until the engine is idle (at most until t = 20 s); the largest change of joint 4's
  // commanded velocity per period on the way [rad/s²].
  double peak_acceleration_until_idle() {
    double peak = 0.0;
    double previous = out_.trajectory.command.velocity_rad_s[3];
    while (out_.trajectory.mode != jtac::ControllerMode::kIdle && t_ < 20.0) {
      step();
      peak = std::max(peak, std::abs(out_.trajectory.command.velocity_rad_s[3] - previous) / kDt);
      previous = out_.trajectory.command.velocity_rad_s[3];
    }
    return peak;
  }

  const Event* find(EventType type, std::uint64_t goal_id = 0, bool any_goal = false) const {
    for (const auto& e : events_) {
      if (e.type == type && (any_goal || e.goal_id == goal_id)) {
        return &e;
      }
    }
    return nullptr;
  }

  // Holds the current position for `duration` seconds.
  jtac::JtacGoal hold(double duration) const {
    jtac::JtacGoal goal;
    goal.trajectory.joint_names = jtac::test::arm_joint_names("fr3");
    jtac::GoalPoint p;
    p.time_from_start_s = duration;
    const jtac::JointVector q = out_.trajectory.reference.position_rad;
    p.positions_rad.assign(q.data(), q.data() + 7);
    p.velocities_rad_s.assign(7, 0.0);
    goal.trajectory.points.push_back(p);
    return goal;
  }

  static jtac::TipGoal compliant(double mass, double stiffness, std::vector<bool> axes) {
    jtac::TipGoal tip;
    tip.mass.assign(6, mass);
    tip.stiffness.assign(6, stiffness);
    tip.damping.assign(6, 2.0 * std::sqrt(mass * stiffness));
    tip.selected_axes = std::move(axes);
    return tip;
  }

  // Position of the ee frame of the command relative to the reference, in sensor axes [m].
  Eigen::Vector3d deflection() const {
    const int ee = kin_.frame_index("fr3_ee");
    Eigen::Isometry3d T_cmd;
    Eigen::Isometry3d T_ref;
    kin_.forward(out_.trajectory.command.position_rad, ee, T_cmd);
    kin_.forward(out_.trajectory.reference.position_rad, ee, T_ref);
    return T_cmd.linear().transpose() * (T_cmd.translation() - T_ref.translation());
  }

  std::uint64_t submit(const jtac::JtacGoal& goal) {
    const auto r = ctrl_.submit_goal(goal, t_);
    EXPECT_EQ(r.code, ResultCode::kSuccessful) << r.message;
    return r.goal_id;
  }

  jtac::JointTrajectoryAdmittanceController ctrl_;
  jtac::JtacParameters params_;
  jtac::JtacOutput out_;
  jtac::Kinematics kin_;
  jtac::JointVector q_;
  jtac::JointVector dq_;
  jtac::TipWrenches wrench_{};
  std::vector<Event> events_;
  double t_ = 10.0;
};

TEST_F(Jtac, APushDeflectsTheToolByForceOverStiffnessAndReleaseReturnsIt) {
  auto goal = hold(6.0);
  goal.tips = {compliant(5.0, 500.0, {true, true, true, false, false, false})};
  submit(goal);
  run(0.05);
  wrench_[0] << 10.0, 0.0, -4.0, 0.0, 0.0, 0.0;  // on the tool, in sensor axes
  run(2.5);
  const Eigen::Vector3d d = deflection();
  EXPECT_NEAR(d.x(), 10.0 / 500.0, 2e-4);
  EXPECT_NEAR(d.z(), -4.0 / 500.0, 2e-4);
  EXPECT_LT(std::abs(d.y()), 2e-4);
  wrench_[0].setZero();
  run(2.5);
  EXPECT_LT(deflection().norm(), 1e-4);
}

TEST_F(Jtac, TheThresholdBrakesWithForceTorqueThresholdExceeded) {
  auto goal = hold(5.0);
  goal.tips = {compliant(5.0, 500.0, {true, true, true, false, false, false})};
  goal.absolute_force_torque_threshold = {30, 30, 30, 5, 5, 5};
  const auto id = submit(goal);
  run(0.1);
  wrench_[0] << 0.0, 0.0, 35.0, 0.0, 0.0, 0.0;
  run(1.0);
  const Event* result = find(EventType::kGoalAborted, id);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->code, ResultCode::kForceTorqueThresholdExceeded);
  EXPECT_EQ(jtac::describe(*result, ctrl_.joint_names()),
            "force/torque threshold exceeded: tip 0 axis Fz reads 35 (threshold 30)");
}

TEST_F(Jtac, PayloadWeightIsCompensatedButStillCountsForTheThreshold) {
  const double mass = 2.0;
  auto goal = hold(3.0);
  goal.tips = {compliant(5.0, 500.0, {true, true, true, false, false, false})};
  goal.tips[0].end_effector_mass_kg = mass;
  goal.tips[0].end_effector_cog_m = {0.0, 0.0, 0.05};
  const auto id = submit(goal);
  run(0.01);
  // The sensor reads the payload's weight (what the tool exerts on the sensor) at this pose.
  Eigen::Isometry3d T_base_sensor;
  kin_.forward(q_, kin_.frame_index("fr3_ft_sensor"), T_base_sensor);
  const Eigen::Matrix3d R_sensor_base = T_base_sensor.linear().transpose();
  const Eigen::Vector3d force = R_sensor_base * (mass * Eigen::Vector3d(0, 0, -9.81));
  wrench_[0].head<3>() = force;
  wrench_[0].tail<3>() = Eigen::Vector3d(0, 0, 0.05).cross(force);
  run(2.0);
  EXPECT_LT(deflection().norm(), 1e-6);  // compensated: no compliant motion
  EXPECT_EQ(find(EventType::kGoalAborted, id), nullptr);
  run(1.5);
  ASSERT_NE(find(EventType::kGoalSucceeded, id), nullptr);
}

TEST_F(Jtac, TareAveragesTheReadingWhileIdleAndIsRefusedWhileExecuting) {
  wrench_[0] << 1.0, -2.0, 3.0, 0.1, 0.2, -0.3;
  EXPECT_EQ(ctrl_.request_zero_fts(0), "");
  run(0.02);
  ASSERT_NE(find(EventType::kTareSucceeded, 0, true), nullptr);
  EXPECT_LT(out_.wrench_filtered_sensor[0].norm(), 1e-12);
  submit(hold(1.0));
  run(0.01);
  EXPECT_NE(ctrl_.request_zero_fts(0).find("a goal is executing"), std::string::npos);
}

// A moving goal for the hand-over tests: joint 4 by 0.5 rad over 2 s, a quintic sampled every 50 ms.
jtac::JtacGoal moving_goal(const jtac::JointVector& q0) {
  jtac::JtacGoal goal;
  goal.trajectory.joint_names = jtac::test::arm_joint_names("fr3");
  for (int k = 1; k <= 40; ++k) {
    const double s = k / 40.0;
    jtac::GoalPoint p;
    p.time_from_start_s = 2.0 * s;
    p.positions_rad.assign(q0.data(), q0.data() + 7);
    p.velocities_rad_s.assign(7, 0.0);
    p.accelerations_rad_s2.assign(7, 0.0);
    p.positions_rad[3] += 0.5 * s * s * s * (10 - 15 * s + 6 * s * s);
    p.velocities_rad_s[3] = 0.5 * 30 * s * s * (1 - s) * (1 - s) / 2.0;
    p.accelerations_rad_s2[3] = 0.5 * 60 * s * (1 - s) * (1 - 2 * s) / 4.0;
    goal.trajectory.points.push_back(p);
  }
  return goal;
}

TEST_F(Jtac, AHandOverBrakesAMovingGoalWithinTheStopAccelerationsAndEndsItInvalidState) {
  const std::uint64_t id = submit(moving_goal(out_.trajectory.command.position_rad));
  run(1.0);
  ASSERT_GT(std::abs(out_.trajectory.command.velocity_rad_s[3]), 0.3);
  ctrl_.request_handover_stop();
  EXPECT_LE(peak_acceleration_until_idle(), 5.0 * (1 + 1e-9));
  const Event* aborted = find(EventType::kGoalAborted, id);
  ASSERT_NE(aborted, nullptr);
  EXPECT_EQ(aborted->code, ResultCode::kInvalidState);
  EXPECT_EQ(aborted->detail, jtac::EventDetail::kHandedOver);
  EXPECT_NE(jtac::describe(*aborted, ctrl_.joint_names()).find("handed over"), std::string::npos);
  EXPECT_EQ(out_.trajectory.command.velocity_rad_s.norm(), 0.0);
}

TEST_F(Jtac, APeerStopBrakesTheGoalWithinTheStopAccelerationsOnceAndTheNextGoalRuns) {
  const std::uint64_t id = submit(moving_goal(out_.trajectory.command.position_rad));
  run(1.0);
  ASSERT_GT(std::abs(out_.trajectory.command.velocity_rad_s[3]), 0.3);
  ctrl_.request_peer_stop();
  EXPECT_LE(peak_acceleration_until_idle(), 5.0 * (1 + 1e-9));
  const Event* aborted = find(EventType::kGoalAborted, id);
  ASSERT_NE(aborted, nullptr);
  EXPECT_EQ(aborted->code, ResultCode::kInvalidState);
  EXPECT_EQ(aborted->detail, jtac::EventDetail::kPeerFault);
  EXPECT_NE(jtac::describe(*aborted, ctrl_.joint_names()).find("another arm of the group"),
            std::string::npos);
  EXPECT_EQ(out_.trajectory.command.velocity_rad_s.norm(), 0.0);
  // One-shot: the next goal is not braked by the request already served.
  const std::uint64_t next = submit(moving_goal(out_.trajectory.command.position_rad));
  run(6.0);
  EXPECT_NE(find(EventType::kGoalSucceeded, next), nullptr);
}

TEST_F(Jtac, AHandOverDuringACancelKeepsTheCancel) {
  const std::uint64_t id = submit(moving_goal(out_.trajectory.command.position_rad));
  run(1.0);
  ctrl_.request_cancel(id);
  run(0.02);
  ctrl_.request_handover_stop();
  run(0.5);
  EXPECT_NE(find(EventType::kGoalCanceled, id), nullptr);
  EXPECT_EQ(find(EventType::kGoalAborted, id), nullptr);
}

TEST_F(Jtac, ATareIsRefusedWhileInactiveAndOnePendingAtADeactivationIsAnsweredFailed) {
  EXPECT_EQ(ctrl_.request_zero_fts(0), "");
  ctrl_.deactivate(t_);
  Event e;
  while (ctrl_.poll_event(e)) {
    events_.push_back(e);
  }
  const Event* failed = find(EventType::kTareFailed, 0, true);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->detail, jtac::EventDetail::kDeactivated);
  EXPECT_NE(jtac::describe(*failed, ctrl_.joint_names()).find("before the tare completed"),
            std::string::npos);
  EXPECT_NE(ctrl_.request_zero_fts(0).find("not running"), std::string::npos);
  ctrl_.activate(out_.trajectory.command.position_rad);
  step();
  EXPECT_EQ(ctrl_.request_zero_fts(0), "");
}

TEST_F(Jtac, NonFiniteWrenchDuringAGoalIsAnAdmittanceError) {
  auto goal = hold(3.0);
  goal.tips = {compliant(5.0, 500.0, {true, true, true, false, false, false})};
  const auto id = submit(goal);
  run(0.1);
  wrench_[0][4] = std::numeric_limits<double>::quiet_NaN();
  run(0.5);
  const Event* result = find(EventType::kGoalAborted, id);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->code, ResultCode::kAdmittanceError);
  EXPECT_TRUE(out_.trajectory.command.position_rad.allFinite());
}

TEST_F(Jtac, ANonFiniteWrenchWhenAGoalArrivesFailsItBeforeMotion) {
  wrench_[0][2] = std::numeric_limits<double>::quiet_NaN();
  const jtac::JointVector held = out_.trajectory.command.position_rad;
  const auto id = submit(hold(1.0));
  step();
  const Event* result = find(EventType::kGoalAborted, id);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->code, ResultCode::kInvalidGoal);
  EXPECT_EQ(result->detail, EventDetail::kNonFiniteWrench);
  EXPECT_EQ(find(EventType::kGoalStarted, id), nullptr);
  EXPECT_EQ(find(EventType::kStopStarted, id), nullptr);
  EXPECT_EQ(jtac::describe(*result, ctrl_.joint_names()),
            "force/torque reading of tip 0 axis Fz (state interface force.z) is nan: the goal is refused "
            "before any "
            "motion");
  EXPECT_EQ(out_.trajectory.command.position_rad, held);
  // Once the reading is finite again, the same goal runs.
  wrench_[0][2] = 0.0;
  const auto again = submit(hold(0.2));
  run(0.3);
  EXPECT_NE(find(EventType::kGoalSucceeded, again), nullptr);
}

TEST_F(Jtac, StitchingMayNotChangeANonZeroPayload) {
  auto first = hold(5.0);
  first.tips = {compliant(5.0, 500.0, {true, false, false, false, false, false})};
  first.tips[0].end_effector_mass_kg = 1.0;
  first.tips[0].end_effector_cog_m = {0.0, 0.0, 0.02};
  submit(first);
  run(0.1);
  auto second = hold(2.0);
  second.tips = first.tips;
  second.tips[0].end_effector_cog_m = {0.0, 0.0, 0.03};
  const auto id = submit(second);
  run(0.01);
  const Event* rejected = find(EventType::kGoalAborted, id);
  ASSERT_NE(rejected, nullptr);
  EXPECT_EQ(rejected->code, ResultCode::kInvalidGoal);
  EXPECT_EQ(rejected->detail, EventDetail::kStitchPayloadMismatch);
}

TEST_F(Jtac, ARefusedGoalsAdmittanceNeverAppliesAndTheNextGoalIsTakenWithItsOwn) {
  const auto first = submit(hold(5.0));  // stiff: no compliant axis
  run(0.1);
  // Compliant, but its first point (at once) jumps 0.3 rad away from the active path: refused when taken.
  auto jump = hold(2.0);
  jtac::GoalPoint start = jump.trajectory.points[0];
  start.time_from_start_s = 0.0;
  start.positions_rad[0] += 0.3;
  jump.trajectory.points.insert(jump.trajectory.points.begin(), start);
  jump.tips = {compliant(5.0, 500.0, {true, true, true, false, false, false})};
  const auto refused = submit(jump);
  run(0.01);
  const Event* abort = find(EventType::kGoalAborted, refused);
  ASSERT_NE(abort, nullptr);
  EXPECT_EQ(abort->code, ResultCode::kInvalidGoal);
  EXPECT_EQ(out_.trajectory.goal_id, first);
  wrench_[0] << 10.0, 0.0, 0.0, 0.0, 0.0, 0.0;
  run(1.0);
  EXPECT_LT(deflection().norm(), 1e-3) << "the refused goal's compliance (20 mm at 10 N) must not apply";
  // The refused goal's set is gone: the next goal is accepted at once and brings its own compliance.
  auto next = hold(3.0);
  next.tips = {compliant(5.0, 500.0, {true, false, false, false, false, false})};
  const jtac::SubmitResult r = ctrl_.submit_goal(next, t_);
  ASSERT_EQ(r.code, ResultCode::kSuccessful) << r.message;
  EXPECT_FALSE(r.busy);
  run(2.0);
  EXPECT_EQ(out_.trajectory.goal_id, r.goal_id);
  EXPECT_NEAR(deflection().x(), 10.0 / 500.0, 1e-3);
}

TEST_F(Jtac, GoalValidationNamesTheFieldAndAxis) {
  auto goal = hold(1.0);
  goal.tips = {compliant(5.0, 500.0, {true, true, true, false, false, false})};
  goal.tips[0].mass[1] = 0.0;
  auto r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kInvalidGoal);
  EXPECT_EQ(r.message, "admittance_parameters.mass[1] (y) = 0: must be > 0 on a selected axis");
  goal.tips = {compliant(5.0, 500.0, {true, false, false, false, false, false})};
  goal.tips[0].stiffness[4] = -1.0;
  r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.message, "admittance_parameters.stiffness[4] (ry) = -1: must be finite and >= 0");
  goal.tips[0] = compliant(5.0, 500.0, {true, false, false, false, false, false});
  goal.tips[0].end_effector_frame = "fr3_hand";
  r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.message,
            "admittance_parameters.end_effector_frame = 'fr3_hand' is not one of the ee_frames [fr3_ee]");
  goal.tips[0].end_effector_frame = "";
  goal.tips[0].end_effector_mass_kg = 1.0;
  r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.message,
            "admittance_parameters.end_effector_cog has 0 values, expected 3 (x y z in the ee frame)");
  goal.tips[0].end_effector_mass_kg = 0.0;
  goal.absolute_force_torque_threshold = {45, 45, std::nan(""), 10, 10, 10};
  r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.message, "absolute_force_torque_threshold[2] (Fz) = nan: must be > 0");
}

// M = 0.1 kg, D = 32 N·s/m on x y z: at 1 kHz K_max = (4M − 2hD)/h² = 336000 N/m.
jtac::TipGoal translational(double stiffness, double mass = 0.1, double damping = 32.0) {
  jtac::TipGoal tip;
  tip.mass.assign(6, mass);
  tip.stiffness.assign(6, stiffness);
  tip.damping.assign(6, damping);
  tip.selected_axes = {true, true, true, false, false, false};
  return tip;
}

TEST_F(Jtac, AnAdmittanceSetUnstableAtTheRateIsRejectedNamingTipAxisSetRateAndBound) {
  auto goal = hold(1.0);
  goal.tips = {translational(400000.0)};
  auto r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kInvalidGoal);
  for (const char* part :
       {"admittance_parameters (tip 'fr3_ee') axis x: ", "M = 0.1 kg", "K = 400000 N/m", "D = 32 N·s/m",
        "at 1000 Hz", "is unstable",
        "the largest stable stiffness for this mass and damping at this rate is 336000 N/m",
        "accepted up to 302400 N/m"}) {
    EXPECT_NE(r.message.find(part), std::string::npos) << part << " not in: " << r.message;
  }
  // Within the 10 % margin of the bound: stable, still rejected.
  goal.tips = {translational(320000.0)};
  r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kInvalidGoal);
  EXPECT_NE(r.message.find("within the 10 % margin"), std::string::npos) << r.message;
  // The same tip named by frame, on a rotational axis (units N·m/rad) at 125 Hz.
  configure(true, 125.0);
  goal = hold(1.0);
  goal.tips = {translational(0.0)};
  goal.tips[0].end_effector_frame = "fr3_ee";
  goal.tips[0].selected_axes = {false, false, false, false, true, false};
  goal.tips[0].stiffness[4] = 6000.0;
  goal.tips[0].damping[4] = 4.0;
  r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kInvalidGoal);
  EXPECT_NE(r.message.find("admittance_parameters (tip 'fr3_ee') axis ry: M = 0.1 kg·m², K = 6000 N·m/rad, "
                           "D = 4 N·m·s/rad at 125 Hz is unstable"),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("is 5250 N·m/rad"), std::string::npos) << r.message;
}

TEST_F(Jtac, ALightlyDampedSetIsAcceptedWithAWarningNamingTheAxis) {
  configure(true, 125.0);
  auto goal = hold(0.5);
  goal.tips = {translational(4000.0, 0.1, 4.0)};  // ζ = 4 / (2·√400) = 0.1
  const auto r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kSuccessful) << r.message;
  EXPECT_NE(r.goal_id, 0u);
  // x y z share the set: one text for the three.
  EXPECT_EQ(r.warning.find("admittance_parameters (tip 'fr3_ee') axes x y z: M = 0.1 kg, K = 4000 N/m"), 0u)
      << r.warning;
  EXPECT_NE(r.warning.find("damping ratio 0.1 < 0.2"), std::string::npos) << r.warning;
  EXPECT_EQ(r.warning.find(';'), std::string::npos) << r.warning;
  // Critically damped: no warning.
  run(0.1);
  goal.tips = {translational(4000.0, 1.0, 2.0 * std::sqrt(4000.0))};
  const auto quiet = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(quiet.code, ResultCode::kSuccessful) << quiet.message;
  EXPECT_EQ(quiet.warning, "");
}

TEST_F(Jtac, AJointDampingThatDestabilisesTheHoldSpringIsRejected) {
  // At 125 Hz the 10 Hz hold spring (unit mass, d = 2ω = 125.7/s) keeps h·(d + joint_damping) ≤ 1.8
  // only for joint_damping ≤ 99.3/s.
  configure(true, 125.0);
  auto goal = hold(0.5);
  goal.joint_damping_per_s = 150.0;
  auto r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kInvalidGoal);
  EXPECT_NE(
      r.message.find("admittance_parameters.joint_damping = 150/s at 125 Hz makes the spring that holds "
                     "the unselected axes (10 Hz, critically damped) unstable"),
      std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("at or below 99.3"), std::string::npos) << r.message;
  goal.joint_damping_per_s = 90.0;
  r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kSuccessful) << r.message;
}

TEST_F(Jtac, WithTheCheckOffForTestsAnUnstableSetIsAcceptedAndGrowsByItsSpectralRadius) {
  configure(true, 1000.0, false);
  const double K = 1.2 * 336000.0;
  const auto predicted = jtac::check_axis_stability(0.1, K, 32.0, kDt);
  ASSERT_EQ(predicted.verdict, jtac::AdmittanceVerdict::kUnstable);
  auto goal = hold(2.0);
  goal.tips = {translational(K)};
  const auto id = submit(goal);
  run(0.01);
  wrench_[0] << 0.0, 0.0, 1.0, 0.0, 0.0, 0.0;  // 1 N for one cycle: 10 µm
  step();
  wrench_[0].setZero();
  run(0.003);
  const double early = out_.joint_offset_rad.norm();
  run(0.005);
  const double later = out_.joint_offset_rad.norm();
  // Five cycles apart, while the offset is still small (< 1 mm: the kinematics are linear), it grew
  // by the predicted ρ per cycle (to 2 %: the damped least squares mapping is not exactly 1).
  EXPECT_NEAR(std::pow(later / early, 1.0 / 5.0), predicted.spectral_radius,
              0.02 * predicted.spectral_radius);
  run(1.0);
  EXPECT_EQ(find(EventType::kGoalSucceeded, id), nullptr);  // it diverged and was stopped
  // The check switched on refuses the same set.
  configure(true, 1000.0, true);
  EXPECT_EQ(ctrl_.submit_goal(goal, t_).code, ResultCode::kInvalidGoal);
}

// ---------------------------------------------------------------- external-reference mode

class JtacExternal : public Jtac {
 protected:
  // Switches from goal mode to the external-reference mode with `tips` (validated as a goal's).
  void start(std::vector<jtac::TipGoal> tips, std::vector<double> threshold = {}) {
    jtac::JtacGoal admittance;
    admittance.tips = std::move(tips);
    admittance.absolute_force_torque_threshold = std::move(threshold);
    jtac::AdmittanceGoal prepared;
    std::string warning;
    ASSERT_EQ(ctrl_.prepare_admittance(admittance, prepared, warning), "");
    ctrl_.deactivate(t_);
    ctrl_.activate_external(q_, prepared);
    reference_.set_zero(7);
    reference_.position_rad = q_;
  }

  jtac::UpdateStatus step_external(bool tracking = true) {
    t_ += kDt;
    const jtac::UpdateStatus status = ctrl_.update_external(t_, kDt, q_, reference_, wrench_, tracking, out_);
    q_ = out_.trajectory.command.position_rad;  // kinematic loop
    Event e;
    while (ctrl_.poll_event(e)) {
      events_.push_back(e);
    }
    return status;
  }

  void run_external(double seconds, bool tracking = true) {
    for (int i = 0; i < static_cast<int>(std::lround(seconds / kDt)); ++i) {
      step_external(tracking);
    }
  }

  jtac::JointTrajectoryState reference_;
};

TEST_F(JtacExternal, WithoutAWrenchTheCommandIsTheReferenceExactly) {
  start({compliant(5.0, 500.0, {true, true, true, false, false, false})});
  EXPECT_TRUE(ctrl_.external_active());
  const jtac::JointVector q0 = q_;
  double largest = 0.0;
  for (int i = 0; i < 2000; ++i) {
    const double s = 0.001 * i;  // a swing of every joint: 0.2 rad at 1 rad/s
    for (int j = 0; j < 7; ++j) {
      reference_.position_rad[j] = q0[j] + 0.2 * std::sin(s + j);
      reference_.velocity_rad_s[j] = 0.2 * std::cos(s + j);
      reference_.acceleration_rad_s2[j] = -0.2 * std::sin(s + j);
    }
    ASSERT_EQ(step_external(), jtac::UpdateStatus::kOk);
    const auto& c = out_.trajectory.command;
    largest = std::max({largest, (c.position_rad - reference_.position_rad).cwiseAbs().maxCoeff(),
                        (c.velocity_rad_s - reference_.velocity_rad_s).cwiseAbs().maxCoeff(),
                        (c.acceleration_rad_s2 - reference_.acceleration_rad_s2).cwiseAbs().maxCoeff()});
  }
  EXPECT_EQ(largest, 0.0);
  EXPECT_EQ(out_.trajectory.reference.position_rad, reference_.position_rad);
  EXPECT_EQ(out_.external_stop, ResultCode::kSuccessful);
  EXPECT_TRUE(events_.empty());
}

TEST_F(JtacExternal, AConstantPushDeflectsByForceOverStiffnessFrozenWhileNotTracking) {
  start({compliant(5.0, 500.0, {true, true, true, false, false, false})});
  run_external(0.05);
  wrench_[0] << 10.0, 0.0, -4.0, 0.0, 0.0, 0.0;  // on the tool, in sensor axes [N]
  run_external(2.5);
  const Eigen::Vector3d d = deflection();
  EXPECT_NEAR(d.x(), 10.0 / 500.0, 2e-4);
  EXPECT_NEAR(d.z(), -4.0 / 500.0, 2e-4);
  EXPECT_LT(std::abs(d.y()), 2e-4);
  // The reference stands still (braking, holding): the offset is frozen, as during a goal's stop.
  const jtac::JointVector frozen = out_.joint_offset_rad;
  wrench_[0].setZero();
  run_external(0.5, false);
  EXPECT_EQ(out_.joint_offset_rad, frozen);
  run_external(2.5);
  EXPECT_LT(deflection().norm(), 1e-4);
}

TEST_F(JtacExternal, TheAdmittanceSetIsValidatedExactlyAsAGoals) {
  const auto intake = [&](const jtac::JtacGoal& g) {
    jtac::AdmittanceGoal prepared;
    std::string warning;
    const std::string message = ctrl_.prepare_admittance(g, prepared, warning);
    const auto r = ctrl_.submit_goal(g, t_);
    EXPECT_EQ(message, r.message);
    EXPECT_EQ(warning, r.warning);
    run(0.01);
    return message;
  };
  auto goal = hold(0.005);
  goal.tips = {translational(400000.0)};  // above K_max at 1 kHz
  EXPECT_NE(intake(goal).find("admittance_parameters (tip 'fr3_ee') axis x: "), std::string::npos);
  goal.tips = {compliant(5.0, 500.0, {true, true, true, false, false, false})};
  goal.tips[0].mass[1] = 0.0;
  EXPECT_EQ(intake(goal), "admittance_parameters.mass[1] (y) = 0: must be > 0 on a selected axis");
  configure(true, 125.0);
  goal = hold(0.005);
  goal.tips = {translational(4000.0, 0.1, 4.0)};  // accepted, lightly damped
  EXPECT_EQ(intake(goal), "");
  jtac::AdmittanceGoal prepared;
  std::string warning;
  ctrl_.prepare_admittance(goal, prepared, warning);
  EXPECT_NE(warning.find("damping ratio 0.1 < 0.2"), std::string::npos) << warning;
}

TEST_F(JtacExternal, AThresholdStopIsLatchedReportedOnceAndFreezesTheOffset) {
  start({compliant(5.0, 500.0, {true, true, true, false, false, false})}, {30, 30, 30, 5, 5, 5});
  run_external(0.05);
  wrench_[0] << 0.0, 0.0, 20.0, 0.0, 0.0, 0.0;
  run_external(0.3);
  EXPECT_EQ(out_.external_stop, ResultCode::kSuccessful);
  EXPECT_NE(ctrl_.request_zero_fts(0).find("a stream with admittance is open"), std::string::npos);
  wrench_[0] << 0.0, 0.0, 35.0, 0.0, 0.0, 0.0;
  step_external();
  EXPECT_EQ(out_.external_stop, ResultCode::kForceTorqueThresholdExceeded);
  const jtac::JointVector frozen = out_.joint_offset_rad;
  EXPECT_GT(frozen.norm(), 1e-3);
  run_external(0.5);
  wrench_[0].setZero();
  run_external(0.5);
  EXPECT_EQ(out_.external_stop, ResultCode::kForceTorqueThresholdExceeded);  // latched
  EXPECT_EQ(out_.joint_offset_rad, frozen);
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].type, EventType::kGoalAborted);
  EXPECT_EQ(events_[0].goal_id, 0u);
  EXPECT_EQ(jtac::describe(events_[0], ctrl_.joint_names()),
            "force/torque threshold exceeded: tip 0 axis Fz reads 35 (threshold 30)");
  // A goal is refused while the mode runs; back in goal mode, goals and tares are taken again.
  EXPECT_EQ(ctrl_.submit_goal(hold(0.1), t_).code, ResultCode::kInvalidState);
  ctrl_.deactivate(t_);
  EXPECT_FALSE(ctrl_.external_active());
  ctrl_.activate(q_);
  run(0.01);
  EXPECT_EQ(ctrl_.request_zero_fts(0), "");
  submit(hold(0.1));
}

TEST_F(Jtac, WithoutASensorItIsAPlainTrajectoryControllerThatRefusesCompliance) {
  configure(false);
  auto goal = hold(0.5);
  goal.tips = {compliant(5.0, 500.0, {true, false, false, false, false, false})};
  const auto r = ctrl_.submit_goal(goal, t_);
  EXPECT_EQ(r.code, ResultCode::kInvalidGoal);
  EXPECT_NE(r.message.find("no force/torque sensor is configured"), std::string::npos) << r.message;
  const auto id = submit(hold(0.5));
  run(0.6);
  EXPECT_NE(find(EventType::kGoalSucceeded, id), nullptr);
}

}  // namespace
