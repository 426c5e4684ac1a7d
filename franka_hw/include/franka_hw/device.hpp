// The hardware contract: one robot arm that, like libfranka's ActiveControl, hands out a state every
// device period (1 kHz on a Franka) and takes one joint position/velocity command per state.
//
// Packet semantics (libfranka's readOnce()/writeOnce()):
// - read_once() returns the state of the next device tick. In real-time mode it blocks until that
//   tick; a reader that comes late gets the newest state, and the ticks it never saw are counted.
// - write_once() hands over the command for the coming tick. The robot applies the newest command
//   it has when a tick starts and echoes it in the q_d_rad / dq_d_rad_s of the state of that tick;
//   a tick that starts with no new command re-applies the previous one and is counted.
// - Neither call throws, allocates or takes a blocking lock: both return a DeviceStatus. Both are
//   called from one thread (the hardware real-time thread).
//
// Sizes are fixed (the robot descriptions' joint count, a six-axis wrench) and every name carries its
// unit. A new device implements this contract in a library of its own (franka_hw/README.md).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "franka_hw/robot_limits.hpp"

namespace jtac::hw {

/// Joints of an arm: the count every robot of jtac_py/robots/tables.py has (robot_limits.hpp,
/// generated; the generator refuses robots that differ).
inline constexpr int kNumJoints = robot_limits::kNumJoints;

/// One value per joint, joint1 first.
using JointArray = std::array<double, kNumJoints>;

/// A wrench [Fx Fy Fz Tx Ty Tz] in [N N N N·m N·m N·m].
using WrenchArray = std::array<double, 6>;

/// The FR3's usual home pose [rad] (robot_limits.hpp, from tables.py `q_home_rad`; also the `home`
/// keyframe of jtac_py/robots/fr3.xml).
inline constexpr JointArray kFr3HomeRad = robot_limits::fr3::kHomeRad;

/// Outcome of read_once() / write_once().
enum class DeviceStatus : std::uint8_t {
  kOk = 0,
  /// The device was never configured (or its configuration failed).
  kNotConfigured,
  /// The command held a non-finite value: refused, the previous command stays in force.
  kInvalidCommand,
  /// A command came after one with motion_finished set: refused, the final command stays held.
  kMotionFinished,
  /// The device failed (a simulator that diverged, a robot that reported an error); the state
  /// returned with it must not be trusted.
  kDeviceError,
  /// No state yet: the device waits for its motion to start (a Franka whose control is started
  /// once the hardware thread is already serving it). Nothing was read; call again.
  kWaiting,
};

/// The enumerator's name without the k (e.g. "InvalidCommand"); real-time safe.
constexpr std::string_view to_string(DeviceStatus status) noexcept {
  switch (status) {
    case DeviceStatus::kOk:
      return "Ok";
    case DeviceStatus::kNotConfigured:
      return "NotConfigured";
    case DeviceStatus::kInvalidCommand:
      return "InvalidCommand";
    case DeviceStatus::kMotionFinished:
      return "MotionFinished";
    case DeviceStatus::kDeviceError:
      return "DeviceError";
    case DeviceStatus::kWaiting:
      return "Waiting";
  }
  return "Unknown";
}

// clang-format off
/// What the robot reports once per device tick (DeviceState), one field a line:
/// FIELD(type, member, init, python_name, doc), `doc` with the unit. The bindings' Device.read_once()
/// dict walks it (for_each_device_state_field).
#define JTAC_DEVICE_STATE_FIELDS(FIELD)                                                                    \
  FIELD(std::uint64_t, tick, = 0, "tick",                                                                  \
        "sequence number = robot time in device periods: tick n is n periods after the first tick")        \
  FIELD(double, time_s, = 0.0, "time", "robot time = tick · period_s() [s]")                               \
  FIELD(std::int64_t, host_receive_ns, = 0, "host_receive_ns",                                             \
        "host steady clock (CLOCK_MONOTONIC) when the state was received [ns]; 0 = not stamped. Set by "   \
        "the reader (AsyncInterface), not by the device: the controller thread phase-locks on it")         \
  FIELD(std::uint64_t, ticks_missed_by_reader, = 0, "ticks_missed_by_reader",                              \
        "ticks the reader never saw because it came late (real-time mode), since the start")               \
  FIELD(std::uint64_t, ticks_without_new_command, = 0, "ticks_without_new_command",                        \
        "ticks that started without a new command and re-applied the previous one, since the start")       \
  FIELD(JointArray, q_rad, {}, "q", "measured joint positions [rad]")                                      \
  FIELD(JointArray, dq_rad_s, {}, "dq", "measured joint velocities [rad/s]")                               \
  FIELD(JointArray, q_d_rad, {}, "q_d", "the robot's echo of the desired joint positions it applied at this tick [rad]") \
  FIELD(JointArray, dq_d_rad_s, {}, "dq_d",                                                                \
        "the robot's echo of the desired joint velocities it applied at this tick [rad/s]")                \
  FIELD(JointArray, ddq_d_rad_s2, {}, "ddq_d",                                                             \
        "the robot's echo of the desired joint accelerations at this tick [rad/s²]. With q_d and dq_d it " \
        "is the state the robot differences the next command against (Franka: the backward differences "   \
        "of what it applied, extrapolated cycles included), so a client can continue from it even in "     \
        "case of packet losses (libfranka docs/overview.rst)")                                             \
  FIELD(JointArray, tau_J_Nm, {}, "tau_J", "joint torques the drives applied at this tick, gravity included [N·m]") \
  FIELD(JointArray, tau_ext_Nm, {}, "tau_ext",                                                             \
        "joint torques caused by external wrenches on the arm (positive: in the joint's direction) [N·m]") \
  FIELD(bool, has_wrench, = false, "has_wrench",                                                           \
        "true when the device has a force/torque sensor; wrench_sensor_N_Nm is meaningless otherwise")     \
  FIELD(WrenchArray, wrench_sensor_N_Nm, {}, "wrench",                                                     \
        "force/torque sensor reading, in sensor axes, torque about the sensor origin: the wrench the tool " \
        "side exerts on the sensor (a payload at rest reads +m·g rotated into the sensor frame) [N, N·m]") \
  FIELD(bool, motion_finished, = false, "motion_finished", "true once a command with motion_finished has been applied")
// clang-format on

/// A field table's FIELD as a member declaration (franka_hw's records).
#define JTAC_HW_DECLARE_FIELD(type, member, init, python_name, doc) type member init;

/// What the robot reports once per device tick (fields: JTAC_DEVICE_STATE_FIELDS).
struct DeviceState {
  JTAC_DEVICE_STATE_FIELDS(JTAC_HW_DECLARE_FIELD)
};

/// Calls `visit(python_name, &DeviceState::member)` for every field, in table order.
template <class Visitor>
void for_each_device_state_field(Visitor&& visit) {
#define JTAC_HW_VISIT_FIELD(type, member, init, python_name, doc) visit(python_name, &DeviceState::member);
  JTAC_DEVICE_STATE_FIELDS(JTAC_HW_VISIT_FIELD)
#undef JTAC_HW_VISIT_FIELD
}

/// What the controller sends once per device tick.
struct DeviceCommand {
  /// Desired joint positions [rad].
  JointArray q_d_rad{};
  /// Desired joint velocities [rad/s].
  JointArray dq_d_rad_s{};
  /// Last command of the motion (libfranka's motion_finished); later commands are refused.
  bool motion_finished = false;
};

/// A robot arm with libfranka's packet semantics (see the top of this file).
class Device {
 public:
  virtual ~Device() = default;

  /// Fills `state` with the next tick's state (real-time mode: blocks until that tick). Real-time
  /// safe: noexcept, no allocation, no blocking lock.
  virtual DeviceStatus read_once(DeviceState& state) noexcept = 0;

  /// Hands over the command for the coming tick. Real-time safe: noexcept, no allocation, no
  /// blocking lock.
  virtual DeviceStatus write_once(const DeviceCommand& command) noexcept = 0;

  /// Device period [s] (0.001 on a Franka).
  virtual double period_s() const noexcept = 0;

 protected:
  Device() = default;
  Device(const Device&) = default;
  Device& operator=(const Device&) = default;
};

}  // namespace jtac::hw
