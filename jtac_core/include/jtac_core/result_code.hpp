// Result codes of a trajectory goal, the same numbers as the public MoveIt Pro
// FollowJointTrajectoryWithAdmittance action (and control_msgs/FollowJointTrajectory for 0..-5),
// so clients of either agree on what a result means.
#pragma once

#include <cstdint>
#include <string_view>

namespace jtac {

/// Outcome of a goal; the numeric values are part of the wire protocol.
enum class ResultCode : std::int32_t {
  kSuccessful = 0,
  kInvalidGoal = -1,
  kInvalidJoints = -2,
  kOldHeaderTimestamp = -3,
  kPathToleranceViolated = -4,
  kGoalToleranceViolated = -5,
  kAdmittanceError = -6,
  kForceTorqueThresholdExceeded = -7,
  kGoalAbortedDueToStitching = -8,
  /// jtac extension: the controller was deactivated while the goal was pending (action status
  /// ABORTED). A goal already braking for its own reason keeps that reason instead.
  kInvalidState = -9,
};

/// The action constant's name for a code (e.g. "PATH_TOLERANCE_VIOLATED"); real-time safe.
constexpr std::string_view to_string(ResultCode code) noexcept {
  switch (code) {
    case ResultCode::kSuccessful:
      return "SUCCESSFUL";
    case ResultCode::kInvalidGoal:
      return "INVALID_GOAL";
    case ResultCode::kInvalidJoints:
      return "INVALID_JOINTS";
    case ResultCode::kOldHeaderTimestamp:
      return "OLD_HEADER_TIMESTAMP";
    case ResultCode::kPathToleranceViolated:
      return "PATH_TOLERANCE_VIOLATED";
    case ResultCode::kGoalToleranceViolated:
      return "GOAL_TOLERANCE_VIOLATED";
    case ResultCode::kAdmittanceError:
      return "ADMITTANCE_ERROR";
    case ResultCode::kForceTorqueThresholdExceeded:
      return "FORCE_TORQUE_THRESHOLD_EXCEEDED";
    case ResultCode::kGoalAbortedDueToStitching:
      return "GOAL_ABORTED_DUE_TO_STITCHING";
    case ResultCode::kInvalidState:
      return "INVALID_STATE";
  }
  return "UNKNOWN";
}

}  // namespace jtac
