#include "jtac_core/events.hpp"

#include <cstdio>

namespace jtac {

namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

}  // namespace

static std::string describe_reason(const Event& e, const std::vector<std::string>& joint_names);

std::string describe(const Event& e, const std::vector<std::string>& joint_names) {
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
      return "measured position of " + joint + " is " + number(e.value) + "; braking to a stop";
    case EventDetail::kNonFiniteMeasuredVelocity:
      return "measured velocity of " + joint + " is " + number(e.value) + "; braking to a stop";
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
    case EventDetail::kArrivedWhileBraking:
      return "the arm is braking to a stop for another goal; send the goal again once it has stopped";
    case EventDetail::kTrajectoryInThePast:
      return "the whole trajectory lies in the past: it ended " + number(e.value) +
             " s before it could start";
    case EventDetail::kReplacedByStitching:
      return "replaced by goal " + number(e.value) + " (stitched)";
    case EventDetail::kDeactivated:
      return "the controller was deactivated while the goal was pending";
    case EventDetail::kExternalStop:
      return "stop requested (" + std::string(to_string(e.code)) + ")" +
             (e.joint >= 0 ? ": axis " + std::to_string(e.joint) + " value " + number(e.value) + " limit " +
                                 number(e.limit)
                           : std::string());
  }
  return "";
}

}  // namespace jtac
