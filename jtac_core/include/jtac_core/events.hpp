// What the real-time side reports to the non-real-time side: goal outcomes and stops.
//
// An Event is plain data (codes and numbers, no strings), so the real-time thread can queue it
// without allocating; describe() turns it into the human-readable message on the other side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jtac_core/result_code.hpp"

namespace jtac {

/// What happened.
enum class EventType : std::uint8_t {
  kGoalStarted,    ///< the goal's trajectory is now the active one (value = start time [s])
  kGoalSucceeded,  ///< result SUCCESSFUL, the arm is at rest
  kGoalAborted,    ///< result with `code`, the arm is at rest (or the controller was deactivated)
  kGoalCanceled,   ///< canceled by request, the arm is at rest
  kStopStarted,    ///< a minimum-time stop began for `detail` (numbers as in the result); the result follows
  kTareSucceeded,  ///< sensor `joint` (tip index) tared; value = |offset force| [N]
  kTareFailed,     ///< sensor `joint` not tared (detail says why); the previous offset stays
};

/// Why, with `joint`, `value` and `limit` giving the numbers.
enum class EventDetail : std::uint8_t {
  kNone,
  kPathTolerance,              ///< |reference − measured| of `joint` = value > limit [rad]
  kGoalTolerance,              ///< |final − measured| of `joint` = value > limit [rad]
  kCanceled,                   ///< cancel requested
  kNonFiniteMeasuredPosition,  ///< measured position of `joint` is `value`
  kNonFiniteMeasuredVelocity,  ///< measured velocity of `joint` is `value`
  kNonFiniteCommand,           ///< the command of `joint` came out as `value`; the last finite one is held
  kNonFiniteJointOffset,       ///< the per-cycle joint offset of `joint` is `value`
  kStartPositionJump,          ///< trajectory start vs current command of `joint`: |Δq| = value > limit
  kStartVelocityJump,          ///< likewise for velocity [rad/s]
  kStitchPositionJump,         ///< new goal vs active path at the stitch time: |Δq| = value > limit
  kStitchVelocityJump,         ///< likewise for velocity [rad/s]
  kGoalDuringSettling,         ///< a new goal came while the active one was settling
  kTrajectoryInThePast,        ///< the whole trajectory ended `value` s before it was taken
  kReplacedByStitching,        ///< this goal was replaced by goal `value`
  kDeactivated,                ///< the controller was deactivated (no stop trajectory)
  kExternalStop,               ///< a stop requested through the cycle input (admittance, F/T)
  kForceTorqueThreshold,       ///< filtered wrench of tip `joint`/6, axis `joint`%6 = value > limit [N, Nm]
  kNonFiniteWrench,            ///< wrench reading of tip `joint`/6, axis `joint`%6 is `value`
  kAdmittanceNonFinite,        ///< the admittance integrator produced a non-finite offset for joint `joint`
  kStitchPayloadMismatch,      ///< stitching changes the payload (mass, cog, gravity) of tip `joint`
  kTareWhileExecuting,         ///< a tare was requested while a goal executes
  kConnectingVelocity,         ///< the segment to the first point needs `value` rad/s on `joint` > limit
  kConnectingAcceleration,     ///< likewise for acceleration [rad/s²]
  kSplineVelocity,             ///< the positions-only spline needs `value` rad/s on `joint` > limit
  kSplineAcceleration,         ///< likewise for acceleration [rad/s²]
  kHandedOver,                 ///< the loop hands the arm to another control law: braked to rest first
  kPeerFault,                  ///< another arm of the same group stopped by itself: braked to rest
};

/// One report from the real-time side.
struct Event {
  EventType type = EventType::kGoalStarted;
  EventDetail detail = EventDetail::kNone;
  ResultCode code = ResultCode::kSuccessful;
  std::uint64_t goal_id = 0;
  int joint = -1;  ///< controller joint index, −1 when not about one joint
  double value = 0.0;
  double limit = 0.0;
  double time_s = 0.0;             ///< controller clock at the event
  double stop_duration_s = 0.0;    ///< kStopStarted: time to standstill [s]
  double trajectory_time_s = 0.0;  ///< the limit checks: where in the trajectory the peak lies [s]
};

/// Human-readable message for an event, naming the joint. Not real-time (allocates).
std::string describe(const Event& event, const std::vector<std::string>& joint_names);

}  // namespace jtac
