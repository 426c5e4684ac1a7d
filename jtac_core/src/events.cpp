#include "jtac_core/events.hpp"

#include <cstdio>

namespace jtac {

namespace {

std::string axis_name(int axis) {
  static const char* const kNames[] = {"Fx", "Fy", "Fz", "Tx", "Ty", "Tz"};
  return axis >= 0 && axis < 6 ? kNames[axis] : "?";
}

// ros2_control's names of a force/torque sensor's state interfaces.
std::string interface_name(int axis) {
  static const char* const kNames[] = {"force.x", "force.y", "force.z", "torque.x", "torque.y", "torque.z"};
  return axis >= 0 && axis < 6 ? kNames[axis] : "?";
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// A non-finite input caught before a goal moved fails it; one caught during motion brakes.
std::string outcome(const Event& e) {
  return e.code == ResultCode::kInvalidGoal ? ": the goal is refused before any motion"
                                            : "; braking to a stop";
}

}  // namespace

static std::string describe_reason(const Event& e, const std::vector<std::string>& joint_names);

std::string describe(const Event& e, const std::vector<std::string>& joint_names) {
  if (e.type == EventType::kTareSucceeded) {
    return "sensor of tip " + std::to_string(e.joint) + " tared (offset force " + number(e.value) + " N)";
  }
  if (e.type == EventType::kTareFailed && e.detail == EventDetail::kDeactivated) {
    return "tare failed: the trajectory controller stopped (or handed the arm to another control law) "
           "before the tare completed; the previous offset stays";
  }
  if (e.type == EventType::kTareFailed && e.detail == EventDetail::kNonFiniteWrench) {
    return "tare failed: a non-finite reading arrived during the averaging window; the previous offset stays";
  }
  if (e.type == EventType::kStopStarted) {
    return "braking to a stop in " + number(e.stop_duration_s) + " s: " + describe_reason(e, joint_names);
  }
  return describe_reason(e, joint_names);
}

static std::string describe_reason(const Event& e, const std::vector<std::string>& joint_names) {
  const std::string joint = (e.joint >= 0 && static_cast<std::size_t>(e.joint) < joint_names.size())
                                ? "joint '" + joint_names[static_cast<std::size_t>(e.joint)] + "'"
                                : std::string("joint #") + std::to_string(e.joint);
  switch (e.detail) {
    case EventDetail::kNone:
      if (e.type == EventType::kGoalStarted) {
        return "goal started (time_from_start 0 at t = " + number(e.value) + " s)";
      }
      return e.type == EventType::kGoalSucceeded ? "goal reached" : "";
    case EventDetail::kPathTolerance:
      return "path tolerance violated: " + joint + " deviates " + number(e.value) +
             " rad from the reference (tolerance " + number(e.limit) + " rad)";
    case EventDetail::kGoalTolerance:
      return "goal tolerance violated: " + joint + " ended " + number(e.value) +
             " rad from the goal (tolerance " + number(e.limit) + " rad)";
    case EventDetail::kCanceled:
      return "canceled; the arm braked to a stop";
    case EventDetail::kNonFiniteMeasuredPosition:
      return "measured position of " + joint + " (state interface position) is " + number(e.value) +
             outcome(e);
    case EventDetail::kNonFiniteMeasuredVelocity:
      return "measured velocity of " + joint + " (state interface velocity) is " + number(e.value) +
             outcome(e);
    case EventDetail::kNonFiniteCommand:
      return "position command of " + joint + " came out as " + number(e.value) +
             "; held the last finite command and braked to a stop";
    case EventDetail::kNonFiniteJointOffset:
      return "admittance joint offset of " + joint + " is " + number(e.value) + "; braking to a stop";
    case EventDetail::kStartPositionJump:
      return "trajectory does not start at the current command: " + joint + " jumps " + number(e.value) +
             " rad (tolerance " + number(e.limit) + " rad)";
    case EventDetail::kStartVelocityJump:
      return "trajectory does not start at the current velocity: " + joint + " jumps " + number(e.value) +
             " rad/s (tolerance " + number(e.limit) + " rad/s)";
    case EventDetail::kStitchPositionJump:
      return "cannot stitch: at the stitch time " + joint + " jumps " + number(e.value) + " rad (tolerance " +
             number(e.limit) + " rad); the active goal continues";
    case EventDetail::kStitchVelocityJump:
      return "cannot stitch: at the stitch time the velocity of " + joint + " jumps " + number(e.value) +
             " rad/s (tolerance " + number(e.limit) + " rad/s); the active goal continues";
    case EventDetail::kGoalDuringSettling:
      return "a new goal arrived while the active one was settling: the new goal is aborted and the arm "
             "stopped";
    case EventDetail::kTrajectoryInThePast:
      return "the whole trajectory lies in the past: it ended " + number(e.value) +
             " s before it could start";
    case EventDetail::kReplacedByStitching:
      return "replaced by goal " + number(e.value) + " (stitched)";
    case EventDetail::kDeactivated:
      return "the controller was deactivated while the goal was pending";
    case EventDetail::kHandedOver:
      return "the arm was handed over to another control law: the goal braked to rest and ended";
    case EventDetail::kPeerFault:
      return "another arm of the group stopped by itself: the goal braked to rest and ended";
    case EventDetail::kForceTorqueThreshold:
      return "force/torque threshold exceeded: tip " + std::to_string(e.joint / 6) + " axis " +
             axis_name(e.joint % 6) + " reads " + number(e.value) + " (threshold " + number(e.limit) + ")";
    case EventDetail::kNonFiniteWrench:
      return "force/torque reading of tip " + std::to_string(e.joint / 6) + " axis " +
             axis_name(e.joint % 6) + " (state interface " + interface_name(e.joint % 6) + ") is " +
             number(e.value) + outcome(e);
    case EventDetail::kAdmittanceNonFinite:
      return "the admittance integrator produced a non-finite offset for " + joint + "; braking to a stop";
    case EventDetail::kStitchPayloadMismatch:
      return "cannot stitch: the goal changes the payload (end_effector_mass, end_effector_cog or gravity) "
             "of tip " +
             std::to_string(e.joint) + "; both goals must agree unless both masses are zero";
    case EventDetail::kTareWhileExecuting:
      return "tare refused: a goal is executing; zero the sensor while the arm is idle and unloaded";
    case EventDetail::kConnectingVelocity:
    case EventDetail::kConnectingAcceleration:
    case EventDetail::kSplineVelocity:
    case EventDetail::kSplineAcceleration: {
      const bool velocity =
          e.detail == EventDetail::kConnectingVelocity || e.detail == EventDetail::kSplineVelocity;
      const bool connecting =
          e.detail == EventDetail::kConnectingVelocity || e.detail == EventDetail::kConnectingAcceleration;
      const char* unit = velocity ? " rad/s" : " rad/s^2";
      return std::string(connecting
                             ? "the segment jtac inserts from the current command to trajectory.points[0]"
                             : "the spline jtac fits through the positions-only points") +
             " needs " + number(e.value) + unit + " on " + joint + " at t = " + number(e.trajectory_time_s) +
             " s of the trajectory (at full speed), above the robot's " +
             (velocity ? "velocity" : "acceleration") + " limit of " + number(e.limit) + unit +
             (connecting
                  ? " and what the trajectory itself needs around its first point: give the first point a "
                    "later time_from_start, or start the trajectory at the current position"
                  : ": space the points further apart in time, or give velocities");
    }
    case EventDetail::kExternalStop:
      return "stop requested (" + std::string(to_string(e.code)) + ")" +
             (e.joint >= 0 ? ": axis " + std::to_string(e.joint) + " value " + number(e.value) + " limit " +
                                 number(e.limit)
                           : std::string());
  }
  return "";
}

}  // namespace jtac
