// A real Franka arm (FR3) behind the Device contract of device.hpp: libfranka's ActiveControl, started
// for joint position control (or joint velocity control) and driven one packet at a time.
//
//   read_once()  → ActiveControlBase::readOnce(): blocks until the robot's next state (1 kHz), maps it;
//   write_once() → ActiveControlBase::writeOnce(JointPositions | JointVelocities), motion_finished
//                  passed on (libfranka then finishes the motion: that one call waits a few ms).
//
// Who owns what: the caller starts the control (e.g. pylibfranka's Robot.start_joint_position_control
// (ControllerMode.JointImpedance)) and keeps it, and the robot, alive as long as this device; the
// device only borrows the ActiveControlBase. Nothing else may call readOnce/writeOnce meanwhile.
//
// Start-up: once libfranka's startMotion() returns, the robot is in Move and expects a command every
// millisecond (libfranka's Robot::Impl::startMotion waits for the state to show the new modes; the
// robot's communication check counts from there). So the motion must start when the hardware thread
// already serves the device: a device may be made without a control, read_once() then returns
// kWaiting (after a 50 µs sleep, so a SCHED_FIFO thread never spins) until attach() hands it the
// control, and the first readOnce/writeOnce follow within microseconds of the Move.
//
// Mapping of franka::RobotState to DeviceState (map_franka_state(), FrankaTickCounter):
// - tick = RobotState::time [ms] − the time of the first state read, i.e. robot time in 1 ms periods;
//   time_s = tick · 0.001. A gap in the robot's time (the reader came late) is counted in
//   ticks_missed_by_reader; ticks_without_new_command counts the ticks that started without a command
//   written since the previous state (our own count: libfranka's control_command_success_rate is a
//   fraction over the last 100 commands, not a count; its latest value is command_success_rate()).
// - q, dq, q_d, dq_d, tau_J as the robot reports them.
// - tau_ext_Nm = −tau_ext_hat_filtered. libfranka estimates the external torque as tau_J minus the
//   model's torques, i.e. the torque the robot exerts against the environment; our convention is the
//   torque of the external wrench on the arm (MujocoDevice: Jᵀ·F of a push), hence the sign.
// - Wrench (only with use_estimated_wrench, else has_wrench = false): the robot's model-based estimate
//   K_F_ext_hat_K, negated. libfranka gives the wrench acting on the stiffness frame K, in K's axes,
//   torque about K's origin, with "forces applied by the robot to the environment positive" (pulling
//   the tool along +z_K reads −z). Our convention is the wrench the tool side exerts on the sensor (a
//   payload at rest reads +m·g): the environment's wrench on the arm, the opposite sign. The sensor
//   frame is therefore K: put K at the flange (F_T_EE · EE_T_K = identity, Robot.set_K) so that it is
//   the `<robot>_ft_sensor` frame of jtac's robot models. O_F_ext_hat_K (base axes) is not used: the
//   controller expects the reading in the sensor's own axes. The estimate excludes the load configured
//   in the robot (Desk's end effector, Robot.set_load), includes everything else (an unconfigured tool
//   reads as its weight) and is zero near singularities.
//
// Errors: libfranka throws (franka::ControlException with the reflex, e.g. "Motion aborted by reflex!
// ["communication_constraints_violation"]", NetworkException, ...). read_once()/write_once() catch
// everything, copy the message into a fixed buffer and return kDeviceError, then and on every later call
// (the motion is over; recover with Robot.automatic_error_recovery() and start a new control and a new
// device). The first message is kept; last_error() reads it from any thread.
//
// Real time: read_once()/write_once() are noexcept, allocate nothing themselves and take no lock (the
// error path copies into the preallocated buffer; the exception itself was allocated by libfranka).
// What libfranka does inside readOnce/writeOnce (UDP, its log) is libfranka's.
#pragma once

#include <franka/active_control_base.h>
#include <franka/robot_state.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "franka_hw/device.hpp"

namespace jtac::hw {

/// The libfranka command type of the ActiveControl (what it was started for).
enum class FrankaControlMode : std::uint8_t {
  /// Robot::startJointPositionControl: commands are franka::JointPositions (q_d_rad).
  kJointPosition,
  /// Robot::startJointVelocityControl: commands are franka::JointVelocities (dq_d_rad_s).
  kJointVelocity,
};

/// Configuration of a FrankaDevice.
struct FrankaDeviceConfig {
  /// What the ActiveControl was started for.
  FrankaControlMode mode = FrankaControlMode::kJointPosition;
  /// Report −K_F_ext_hat_K as the F/T reading (has_wrench = true), see the top of this file.
  bool use_estimated_wrench = false;
};

/// The Franka's device period [s]: one state and one command per millisecond.
inline constexpr double kFrankaPeriodS = 0.001;

/// Ticks of the robot clock [ms] since the first state: robot time in device periods. A time before
/// the first one (which a strictly increasing robot clock never gives) is tick 0. Real-time safe.
constexpr std::uint64_t franka_tick(std::uint64_t robot_time_ms, std::uint64_t first_time_ms) noexcept {
  return robot_time_ms > first_time_ms ? robot_time_ms - first_time_ms : 0;
}

/// Fills the joint arrays, tau_ext and (with use_estimated_wrench) the wrench of `state` from one
/// robot state, with the signs and frames described at the top of this file; leaves the tick fields
/// alone. Real-time safe.
void map_franka_state(const franka::RobotState& robot, bool use_estimated_wrench,
                      DeviceState& state) noexcept;

/// Tick bookkeeping across the states a reader receives (the counters of DeviceState).
class FrankaTickCounter {
 public:
  /// Takes the robot time [ms] of a new state and whether a command was written since the previous
  /// state; sets tick, time_s, ticks_missed_by_reader and ticks_without_new_command of `state`.
  /// A state whose time does not advance keeps the previous tick (a duplicate). Real-time safe.
  void on_state(std::uint64_t robot_time_ms, bool command_written, DeviceState& state) noexcept;

  /// Back to "no state seen yet".
  void reset() noexcept { *this = FrankaTickCounter{}; }

 private:
  bool started_ = false;
  std::uint64_t first_time_ms_ = 0;
  std::uint64_t last_tick_ = 0;
  std::uint64_t ticks_missed_by_reader_ = 0;
  std::uint64_t ticks_without_new_command_ = 0;
};

/// The command type an ActiveControl was started for, from its dynamic type
/// (franka::ActiveMotionGenerator<JointPositions | JointVelocities>); nullopt for anything else
/// (torque control, Cartesian motion generators, other implementations).
std::optional<FrankaControlMode> franka_control_mode(const franka::ActiveControlBase& control) noexcept;

/// A Franka arm through libfranka's ActiveControl (see the top of this file).
class FrankaDevice : public Device {
 public:
  /// Capacity of the error message buffer, terminating zero included [bytes].
  static constexpr std::size_t kErrorCapacity = 512;

  /// Borrows `control` (which must outlive the device), started for config.mode.
  FrankaDevice(franka::ActiveControlBase& control, const FrankaDeviceConfig& config) noexcept;
  /// A device whose motion is not started yet: read_once() waits (kWaiting) until attach().
  explicit FrankaDevice(const FrankaDeviceConfig& config) noexcept;
  FrankaDevice(const FrankaDevice&) = delete;
  FrankaDevice& operator=(const FrankaDevice&) = delete;
  ~FrankaDevice() override = default;

  /// Hands a device made without a control its control (started for config.mode, outliving the
  /// device), from any thread: the hardware thread's next read_once() uses it. False (and nothing
  /// changes) when the device already has one or was released.
  bool attach(franka::ActiveControlBase& control) noexcept;

  /// Forgets the control: read_once()/write_once() return kNotConfigured from now on and never touch
  /// it, so that its owner may end it (pylibfranka cancels an unfinished motion and disconnects once
  /// the control and the Robot are gone). Only while no thread uses the device. Idempotent.
  void release() noexcept;
  /// True from attach() (or construction with a control) until release().
  bool holds_control() const noexcept { return control_.load(std::memory_order_acquire) != nullptr; }
  /// True after release().
  bool released() const noexcept { return released_.load(std::memory_order_acquire); }

  /// readOnce(): blocks until the robot's next state. kMotionFinished (state.motion_finished set, no
  /// call into libfranka) once a command with motion_finished was written; kDeviceError after an
  /// error. Real-time safe.
  DeviceStatus read_once(DeviceState& state) noexcept override;

  /// writeOnce() of the command for the coming tick. A non-finite value is refused (kInvalidCommand)
  /// and the previous command is sent again in its place, so it stays in force (before any command:
  /// the robot's last echoed q_d, or zero velocity). Real-time safe.
  DeviceStatus write_once(const DeviceCommand& command) noexcept override;

  /// Ends the motion the way libfranka's Robot::control ends one, with the motion's own last command
  /// marked motion_finished: reads the next state, then sends again, bit for bit, the last positions
  /// written (the robot's echoed q_d only when none was), or zero velocity. The echo is not the
  /// command: a robot may round it (franka-sim echoes within 0.04 µrad), and a last command off the
  /// previous one by even that is a step of tens of rad/s³ in the commanded jerk. Only while no
  /// thread drives the device; the status of the read, or of the write.
  DeviceStatus finish_motion(DeviceState& state) noexcept;

  /// 0.001 s.
  double period_s() const noexcept override { return kFrankaPeriodS; }

  /// What the ActiveControl was started for.
  FrankaControlMode mode() const noexcept { return config_.mode; }
  /// Whether the wrench is the robot's estimate (has_wrench).
  bool use_estimated_wrench() const noexcept { return config_.use_estimated_wrench; }

  /// True once read_once()/write_once() caught an error. Any thread.
  bool has_error() const noexcept { return has_error_.load(std::memory_order_acquire); }
  /// The first error ("readOnce: <libfranka's message>"), empty while there is none. Any thread; the
  /// view stays valid as long as the device (the buffer is written once, before the flag).
  std::string_view last_error() const noexcept;

  /// The robot's control_command_success_rate of the last state read: the fraction of the last 100
  /// commands that reached the robot in time [0, 1]. Any thread.
  double command_success_rate() const noexcept {
    return command_success_rate_.load(std::memory_order_relaxed);
  }

 private:
  /// Keeps the first error: "<where>: <what>", truncated to the buffer; later errors are dropped.
  void fail(const char* where, const char* what) noexcept;
  /// writeOnce of a position or velocity command (may throw: libfranka's).
  void send(const JointArray& values, bool motion_finished);

  // Null before attach() and after release(); written by the owner, read by the hardware thread.
  std::atomic<franka::ActiveControlBase*> control_{nullptr};
  std::atomic<bool> released_{false};
  FrankaDeviceConfig config_;

  // Real-time thread only.
  FrankaTickCounter ticks_;
  bool command_written_ = false;  // since the last state read
  bool have_sent_ = false;        // a command went out (sent_ holds it)
  JointArray sent_{};             // the last command sent: q [rad] or dq [rad/s] by mode
  bool have_state_ = false;
  JointArray last_q_d_rad_{};  // the robot's echoed q_d of the last state [rad]
  bool motion_finished_ = false;

  // Written once by the real-time thread before has_error_ is set; read by any thread after.
  std::array<char, kErrorCapacity> error_{};
  std::atomic<bool> has_error_{false};
  std::atomic<double> command_success_rate_{0.0};
};

}  // namespace jtac::hw
