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
// Sizes are fixed (seven joints, a six-axis wrench) and every name carries its unit.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace jtac::hw {

/// Joints of a Franka arm (FR3, Panda).
inline constexpr int kNumJoints = 7;

/// One value per joint, joint1 first.
using JointArray = std::array<double, kNumJoints>;

/// A wrench [Fx Fy Fz Tx Ty Tz] in [N N N N·m N·m N·m].
using WrenchArray = std::array<double, 6>;

/// The FR3's usual home pose [rad] (also the `home` keyframe of jtac_py/robots/fr3.xml).
inline constexpr JointArray kFr3HomeRad = {
    0.0, -0.7853981633974483, 0.0, -2.356194490192345, 0.0, 1.5707963267948966, 0.7853981633974483};

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

/// What the robot reports once per device tick.
struct DeviceState {
  /// Sequence number = robot time in device periods: tick n is n periods after the first tick.
  std::uint64_t tick = 0;
  /// Robot time [s] = tick · period_s().
  double time_s = 0.0;
  /// Host steady clock (CLOCK_MONOTONIC) when the state was received [ns]; 0 = not stamped. Set by
  /// the reader (AsyncInterface), not by the device: the controller thread phase-locks on it.
  std::int64_t host_receive_ns = 0;
  /// Ticks the reader never saw because it came late (real-time mode), since the start.
  std::uint64_t ticks_missed_by_reader = 0;
  /// Ticks that started without a new command and re-applied the previous one, since the start.
  std::uint64_t ticks_without_new_command = 0;

  /// Measured joint positions [rad].
  JointArray q_rad{};
  /// Measured joint velocities [rad/s].
  JointArray dq_rad_s{};
  /// The robot's echo of the desired joint positions it applied at this tick [rad].
  JointArray q_d_rad{};
  /// The robot's echo of the desired joint velocities it applied at this tick [rad/s].
  JointArray dq_d_rad_s{};
  /// The robot's echo of the desired joint accelerations at this tick [rad/s²]. With q_d and dq_d
  /// it is the state the robot differences the next command against (Franka: the backward
  /// differences of what it applied, extrapolated cycles included), so a client can continue from
  /// it "even in case of packet losses" (libfranka docs/overview.rst).
  JointArray ddq_d_rad_s2{};
  /// Joint torques the drives applied at this tick, gravity included [N·m].
  JointArray tau_J_Nm{};
  /// Joint torques caused by external wrenches on the arm (positive: in the joint's direction) [N·m].
  JointArray tau_ext_Nm{};

  /// True when the device has a force/torque sensor; wrench_sensor_N_Nm is meaningless otherwise.
  bool has_wrench = false;
  /// Force/torque sensor reading, in sensor axes, torque about the sensor origin: the wrench the tool
  /// side exerts on the sensor (a payload at rest reads +m·g rotated into the sensor frame).
  WrenchArray wrench_sensor_N_Nm{};

  /// True once a command with motion_finished has been applied.
  bool motion_finished = false;
};

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
