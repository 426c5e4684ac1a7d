// pybind11 bindings of the trajectory engine's enums: segment kind, mode, update status, event type
// and detail. Conversion only: no algorithm here.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "jtac_core/events.hpp"
#include "jtac_core/interpolation.hpp"
#include "jtac_core/result_code.hpp"
#include "jtac_core/stop_trajectory.hpp"
#include "jtac_core/time_scaling.hpp"
#include "jtac_core/tolerances.hpp"
#include "jtac_core/trajectory.hpp"
#include "jtac_core/trajectory_controller.hpp"
#include "jtac_core/types.hpp"

#include "bind_trajectory.hpp"

namespace jtac_python {

void bind_trajectory_enums(py::module_& m) {
  py::enum_<jtac::SegmentKind>(m, "SegmentKind", "Order of the polynomial across one segment")
      .value("LINEAR", jtac::SegmentKind::kLinear)
      .value("CUBIC", jtac::SegmentKind::kCubic)
      .value("QUINTIC", jtac::SegmentKind::kQuintic);
  py::enum_<jtac::ControllerMode>(m, "ControllerMode", "What the engine is doing")
      .value("INACTIVE", jtac::ControllerMode::kInactive)
      .value("IDLE", jtac::ControllerMode::kIdle)
      .value("WAITING", jtac::ControllerMode::kWaiting)
      .value("EXECUTING", jtac::ControllerMode::kExecuting)
      .value("SETTLING", jtac::ControllerMode::kSettling)
      .value("STOPPING", jtac::ControllerMode::kStopping);
  py::enum_<jtac::UpdateStatus>(m, "UpdateStatus", "Status of one update()")
      .value("OK", jtac::UpdateStatus::kOk)
      .value("INACTIVE", jtac::UpdateStatus::kInactive)
      .value("BAD_INPUT", jtac::UpdateStatus::kBadInput)
      .value("HOLDING_COMMAND", jtac::UpdateStatus::kHoldingCommand);
  py::enum_<jtac::EventType>(m, "EventType", "What happened")
      .value("GOAL_STARTED", jtac::EventType::kGoalStarted)
      .value("GOAL_SUCCEEDED", jtac::EventType::kGoalSucceeded)
      .value("GOAL_ABORTED", jtac::EventType::kGoalAborted)
      .value("GOAL_CANCELED", jtac::EventType::kGoalCanceled)
      .value("STOP_STARTED", jtac::EventType::kStopStarted)
      .value("TARE_SUCCEEDED", jtac::EventType::kTareSucceeded)
      .value("TARE_FAILED", jtac::EventType::kTareFailed);
  py::enum_<jtac::EventDetail>(m, "EventDetail", "Why, with joint/value/limit giving the numbers")
      .value("NONE", jtac::EventDetail::kNone)
      .value("PATH_TOLERANCE", jtac::EventDetail::kPathTolerance)
      .value("GOAL_TOLERANCE", jtac::EventDetail::kGoalTolerance)
      .value("CANCELED", jtac::EventDetail::kCanceled)
      .value("NON_FINITE_MEASURED_POSITION", jtac::EventDetail::kNonFiniteMeasuredPosition)
      .value("NON_FINITE_MEASURED_VELOCITY", jtac::EventDetail::kNonFiniteMeasuredVelocity)
      .value("NON_FINITE_COMMAND", jtac::EventDetail::kNonFiniteCommand)
      .value("NON_FINITE_JOINT_OFFSET", jtac::EventDetail::kNonFiniteJointOffset)
      .value("START_POSITION_JUMP", jtac::EventDetail::kStartPositionJump)
      .value("START_VELOCITY_JUMP", jtac::EventDetail::kStartVelocityJump)
      .value("STITCH_POSITION_JUMP", jtac::EventDetail::kStitchPositionJump)
      .value("STITCH_VELOCITY_JUMP", jtac::EventDetail::kStitchVelocityJump)
      .value("GOAL_DURING_SETTLING", jtac::EventDetail::kGoalDuringSettling)
      .value("TRAJECTORY_IN_THE_PAST", jtac::EventDetail::kTrajectoryInThePast)
      .value("REPLACED_BY_STITCHING", jtac::EventDetail::kReplacedByStitching)
      .value("DEACTIVATED", jtac::EventDetail::kDeactivated)
      .value("EXTERNAL_STOP", jtac::EventDetail::kExternalStop)
      .value("FORCE_TORQUE_THRESHOLD", jtac::EventDetail::kForceTorqueThreshold)
      .value("NON_FINITE_WRENCH", jtac::EventDetail::kNonFiniteWrench)
      .value("ADMITTANCE_NON_FINITE", jtac::EventDetail::kAdmittanceNonFinite)
      .value("STITCH_PAYLOAD_MISMATCH", jtac::EventDetail::kStitchPayloadMismatch)
      .value("TARE_WHILE_EXECUTING", jtac::EventDetail::kTareWhileExecuting)
      .value("CONNECTING_VELOCITY", jtac::EventDetail::kConnectingVelocity)
      .value("CONNECTING_ACCELERATION", jtac::EventDetail::kConnectingAcceleration)
      .value("SPLINE_VELOCITY", jtac::EventDetail::kSplineVelocity)
      .value("SPLINE_ACCELERATION", jtac::EventDetail::kSplineAcceleration)
      .value("HANDED_OVER", jtac::EventDetail::kHandedOver)
      .value("PEER_FAULT", jtac::EventDetail::kPeerFault);
}

}  // namespace jtac_python
