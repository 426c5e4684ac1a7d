// The joint limits franka_hw's limiters enforce: one JointLimits row per robot, built from the
// generated robot_limits.hpp (jtac_py/robots/tables.py), and the lookup by robot name with which a
// caller takes a robot's whole row (velocity, acceleration, jerk, range and envelope together, never
// one robot's rates with another's range).
#pragma once

#include <array>
#include <string_view>

#include "franka_hw/device.hpp"
#include "franka_hw/robot_limits.hpp"

namespace jtac::hw {

/// Per-joint kinematic limits [rad/s, rad/s², rad/s³] and, where `position_based_velocity_limits`
/// is set, the FR3's position-based velocity envelope (libfranka >= 0.15 `JointVelocityLimitsConfig`,
/// from the robot URDF's `<limit>` and `<position_based_velocity_limits>` elements): at position q
///   v_upper(q) = min(dq_max, max(0, √(2·d·(q_max − q)) − c)) − tol
///   v_lower(q) = max(−dq_max, min(0, c − √(2·d·(q − q_min)))) + tol
/// with c = velocity_offset, d = deceleration_limit, tol = kJointVelocityLimitsToleranceRadS: near
/// the end of its range a joint may move toward it only as fast as it can still stop there.
struct JointLimits {
  JointArray dq_max_rad_s{};
  JointArray ddq_max_rad_s2{};
  JointArray dddq_max_rad_s3{};
  /// Whether the envelope below bounds the velocity (false: the constant dq_max alone, e.g. Panda).
  bool position_based_velocity_limits = false;
  /// The joint range the envelope is anchored at [rad] (URDF `<limit lower= upper=>`; a robot without
  /// an envelope: its published joint range).
  JointArray q_min_rad{};
  JointArray q_max_rad{};
  /// URDF `<position_based_velocity_limits velocity_offset=>` [rad/s].
  JointArray velocity_offset_rad_s{};
  /// URDF `<position_based_velocity_limits deceleration_limit=>` [rad/s²]; a joint with 0 here has
  /// no envelope.
  JointArray deceleration_limit_rad_s2{};
};

/// libfranka's kJointVelocityLimitsTolerance for the FR3 (kLimitEps + 0 lost packets × …) [rad/s]:
/// subtracted from the envelope's velocity, so the robot's bound is this much inside the formula.
inline constexpr double kJointVelocityLimitsToleranceRadS = 1e-3;

/// One robot's row: its name in jtac_py/robots ("fr3", "panda") and its limits.
struct RobotJointLimits {
  std::string_view robot;
  JointLimits limits;
};

// The JointLimits of robot_limits::<robot>: every field from the generated row of that one robot.
#define JTAC_JOINT_LIMITS_OF(robot)                                                                         \
  JointLimits {                                                                                             \
    .dq_max_rad_s = robot_limits::robot::kDqMaxRadS, .ddq_max_rad_s2 = robot_limits::robot::kDdqMaxRadS2,   \
    .dddq_max_rad_s3 = robot_limits::robot::kDddqMaxRadS3,                                                  \
    .position_based_velocity_limits = robot_limits::robot::kPositionBasedVelocityLimits,                    \
    .q_min_rad = robot_limits::robot::kEnvelopeQMinRad, .q_max_rad = robot_limits::robot::kEnvelopeQMaxRad, \
    .velocity_offset_rad_s = robot_limits::robot::kVelocityOffsetRadS,                                      \
    .deceleration_limit_rad_s2 = robot_limits::robot::kDecelerationLimitRadS2,                              \
  }
#define JTAC_ROBOT_JOINT_LIMITS_ROW(robot) RobotJointLimits{#robot, JTAC_JOINT_LIMITS_OF(robot)},

/// Every robot of robot_limits.hpp (JTAC_ROBOTS), in the generator's order.
inline constexpr std::array kRobotJointLimits = {JTAC_ROBOTS(JTAC_ROBOT_JOINT_LIMITS_ROW)};

/// The FR3's published joint limits (tables.py `FR3`: dq_max_rad_s, ddq_max_rad_s2, dddq_max_rad_s3
/// from [FD] joint_limits.yaml, [FCI]/[LF] >= 0.10 kMaxJointAcceleration/kMaxJointJerk) and its
/// position-based velocity envelope: the joint ranges, velocity offsets and deceleration limits of the
/// FR3 URDF that libfranka >= 0.15 reads them from (tables.py `velocity_bound_coeffs`, the same
/// numbers as libfranka >= 0.10's deprecated computeUpperLimitsJointVelocity, which folds in 2·d).
/// The envelope's range is the URDF's, a few mrad wider than the published joint range.
inline constexpr JointLimits kFr3Limits = JTAC_JOINT_LIMITS_OF(fr3);

/// The Panda's (FER) published joint limits (tables.py `PANDA`, [FCI]/[LF] 0.9) and its joint range;
/// its velocity bound is the constant dq_max (no position-based envelope: deceleration limits 0).
inline constexpr JointLimits kPandaLimits = JTAC_JOINT_LIMITS_OF(panda);

/// The robot whose row a configuration holds unless told otherwise (AsyncInterfaceConfig, the
/// bindings' default `robot`).
inline constexpr std::string_view kDefaultRobot = "fr3";

#undef JTAC_ROBOT_JOINT_LIMITS_ROW
#undef JTAC_JOINT_LIMITS_OF

/// The row of `robot` ("fr3", "panda": the names of jtac_py/robots), nullptr for a robot jtac does not
/// describe. Real-time safe.
constexpr const JointLimits* find_joint_limits(std::string_view robot) noexcept {
  for (const RobotJointLimits& row : kRobotJointLimits) {
    if (row.robot == robot) {
      return &row.limits;
    }
  }
  return nullptr;
}

}  // namespace jtac::hw
