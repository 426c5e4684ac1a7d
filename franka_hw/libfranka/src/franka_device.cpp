// FrankaDevice: libfranka's ActiveControl behind the Device contract (see franka_device.hpp).
#include "franka_hw/franka_device.hpp"
#include "jtac_rt/numeric.hpp"

#include <franka/control_types.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <exception>
#include <typeinfo>

namespace jtac::hw {

namespace {

using jtac::all_finite;

// Itanium-ABI names of the two ActiveControl implementations we drive (libfranka's
// active_motion_generator.h, which the PyPI header set lacks: compare the dynamic type by name).
constexpr const char* kJointPositionsGenerator = "N6franka21ActiveMotionGeneratorINS_14JointPositionsEEE";
constexpr const char* kJointVelocitiesGenerator = "N6franka21ActiveMotionGeneratorINS_15JointVelocitiesEEE";

}  // namespace

void map_franka_state(const franka::RobotState& robot, bool use_estimated_wrench,
                      DeviceState& state) noexcept {
  state.q_rad = robot.q;
  state.dq_rad_s = robot.dq;
  state.q_d_rad = robot.q_d;
  state.dq_d_rad_s = robot.dq_d;
  state.ddq_d_rad_s2 = robot.ddq_d;
  state.tau_J_Nm = robot.tau_J;
  // libfranka: the torque the robot exerts against the environment; ours: the external torque on the arm.
  for (std::size_t j = 0; j < state.tau_ext_Nm.size(); ++j) {
    state.tau_ext_Nm[j] = -robot.tau_ext_hat_filtered[j];
  }
  state.has_wrench = use_estimated_wrench;
  if (use_estimated_wrench) {
    // K_F_ext_hat_K: in K's axes about K's origin, positive = applied by the robot to the environment;
    // ours: the wrench the tool side exerts on the sensor (frame K), i.e. the environment's on the arm.
    for (std::size_t i = 0; i < state.wrench_sensor_N_Nm.size(); ++i) {
      state.wrench_sensor_N_Nm[i] = -robot.K_F_ext_hat_K[i];
    }
  } else {
    state.wrench_sensor_N_Nm.fill(0.0);
  }
  state.motion_finished = false;
}

void FrankaTickCounter::on_state(std::uint64_t robot_time_ms, bool command_written,
                                 DeviceState& state) noexcept {
  if (!started_) {
    started_ = true;
    first_time_ms_ = robot_time_ms;
    last_tick_ = 0;
  } else {
    const std::uint64_t tick = std::max(franka_tick(robot_time_ms, first_time_ms_), last_tick_);
    const std::uint64_t delta = tick - last_tick_;
    if (delta > 1) {
      ticks_missed_by_reader_ += delta - 1;
    }
    // The command written after the previous state applies at its next tick; every other tick of the
    // gap re-applied the command in force.
    if (delta > 0) {
      ticks_without_new_command_ += command_written ? delta - 1 : delta;
    }
    last_tick_ = tick;
  }
  state.tick = last_tick_;
  state.time_s = static_cast<double>(last_tick_) * kFrankaPeriodS;
  state.ticks_missed_by_reader = ticks_missed_by_reader_;
  state.ticks_without_new_command = ticks_without_new_command_;
}

std::optional<FrankaControlMode> franka_control_mode(const franka::ActiveControlBase& control) noexcept {
  const char* name = typeid(control).name();
  if (std::strcmp(name, kJointPositionsGenerator) == 0) {
    return FrankaControlMode::kJointPosition;
  }
  if (std::strcmp(name, kJointVelocitiesGenerator) == 0) {
    return FrankaControlMode::kJointVelocity;
  }
  return std::nullopt;
}

FrankaDevice::FrankaDevice(franka::ActiveControlBase& control, const FrankaDeviceConfig& config) noexcept
    : control_(&control), config_(config) {}

FrankaDevice::FrankaDevice(const FrankaDeviceConfig& config) noexcept : config_(config) {}

bool FrankaDevice::attach(franka::ActiveControlBase& control) noexcept {
  if (released_.load(std::memory_order_acquire)) {
    return false;
  }
  franka::ActiveControlBase* none = nullptr;
  return control_.compare_exchange_strong(none, &control, std::memory_order_acq_rel);
}

std::string_view FrankaDevice::last_error() const noexcept {
  if (!has_error_.load(std::memory_order_acquire)) {
    return {};
  }
  return {error_.data(), ::strnlen(error_.data(), error_.size())};
}

void FrankaDevice::fail(const char* where, const char* what) noexcept {
  if (has_error_.load(std::memory_order_relaxed)) {
    return;  // the first error is the cause; the buffer is never rewritten once published
  }
  // "<where>: <what>" into the fixed buffer, truncated, always terminated: no allocation.
  const std::size_t capacity = error_.size() - 1;
  std::size_t n = std::min(std::strlen(where), capacity);
  std::memcpy(error_.data(), where, n);
  for (const char* p = ": "; *p != '\0' && n < capacity; ++p) {
    error_[n++] = *p;
  }
  const char* message = what != nullptr ? what : "(no message)";
  const std::size_t rest = std::min(std::strlen(message), capacity - n);
  std::memcpy(error_.data() + n, message, rest);
  error_[n + rest] = '\0';
  has_error_.store(true, std::memory_order_release);
}

void FrankaDevice::send(const JointArray& values, bool motion_finished) {
  franka::ActiveControlBase* control = control_.load(std::memory_order_relaxed);  // checked by the caller
  if (config_.mode == FrankaControlMode::kJointPosition) {
    franka::JointPositions command(values);
    command.motion_finished = motion_finished;
    control->writeOnce(command);
  } else {
    franka::JointVelocities command(values);
    command.motion_finished = motion_finished;
    control->writeOnce(command);
  }
}

void FrankaDevice::release() noexcept {
  released_.store(true, std::memory_order_release);
  control_.store(nullptr, std::memory_order_release);
}

DeviceStatus FrankaDevice::read_once(DeviceState& state) noexcept {
  franka::ActiveControlBase* control = control_.load(std::memory_order_acquire);
  if (control == nullptr) {
    if (released_.load(std::memory_order_acquire)) {
      return DeviceStatus::kNotConfigured;
    }
    // Not started yet: poll for attach() every 50 µs, never spinning a SCHED_FIFO thread.
    const timespec pause{0, 50'000};
    ::nanosleep(&pause, nullptr);
    return DeviceStatus::kWaiting;
  }
  if (has_error_.load(std::memory_order_relaxed)) {
    return DeviceStatus::kDeviceError;
  }
  if (motion_finished_) {
    // libfranka's control is over: a readOnce now would wait for a motion that no longer runs.
    state.motion_finished = true;
    return DeviceStatus::kMotionFinished;
  }
  try {
    const std::pair<franka::RobotState, franka::Duration> read = control->readOnce();
    const franka::RobotState& robot = read.first;
    ticks_.on_state(robot.time.toMSec(), command_written_, state);
    map_franka_state(robot, config_.use_estimated_wrench, state);
    command_written_ = false;
    last_q_d_rad_ = robot.q_d;
    have_state_ = true;
    command_success_rate_.store(robot.control_command_success_rate, std::memory_order_relaxed);
    return DeviceStatus::kOk;
  } catch (const std::exception& error) {
    fail("readOnce", error.what());
  } catch (...) {
    fail("readOnce", "unknown exception");
  }
  return DeviceStatus::kDeviceError;
}

DeviceStatus FrankaDevice::write_once(const DeviceCommand& command) noexcept {
  if (control_.load(std::memory_order_acquire) == nullptr) {
    return DeviceStatus::kNotConfigured;
  }
  if (has_error_.load(std::memory_order_relaxed)) {
    return DeviceStatus::kDeviceError;
  }
  if (motion_finished_) {
    return DeviceStatus::kMotionFinished;
  }
  const bool position = config_.mode == FrankaControlMode::kJointPosition;
  const JointArray& values = position ? command.q_d_rad : command.dq_d_rad_s;
  const bool valid = all_finite(command.q_d_rad) && all_finite(command.dq_d_rad_s);
  try {
    if (!valid) {
      // Refused; the previous command goes out again so that it stays in force (not a lost packet).
      if (have_sent_) {
        send(sent_, false);
        command_written_ = true;
      } else if (position && have_state_) {
        send(last_q_d_rad_, false);
        sent_ = last_q_d_rad_;
        have_sent_ = true;
        command_written_ = true;
      } else if (!position) {
        send(JointArray{}, false);
        sent_ = JointArray{};
        have_sent_ = true;
        command_written_ = true;
      }
      return DeviceStatus::kInvalidCommand;
    }
    send(values, command.motion_finished);
    sent_ = values;
    have_sent_ = true;
    command_written_ = true;
    motion_finished_ = command.motion_finished;
    return DeviceStatus::kOk;
  } catch (const std::exception& error) {
    fail("writeOnce", error.what());
  } catch (...) {
    fail("writeOnce", "unknown exception");
  }
  return DeviceStatus::kDeviceError;
}

DeviceStatus FrankaDevice::finish_motion(DeviceState& state) noexcept {
  const DeviceStatus read = read_once(state);
  if (read != DeviceStatus::kOk) {
    return read;
  }
  DeviceCommand last;
  const bool position = config_.mode == FrankaControlMode::kJointPosition;
  last.q_d_rad = position && have_sent_ ? sent_ : last_q_d_rad_;
  last.dq_d_rad_s = JointArray{};
  last.motion_finished = true;
  return write_once(last);
}

}  // namespace jtac::hw
