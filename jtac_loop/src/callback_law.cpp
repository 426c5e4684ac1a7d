#include "jtac_loop/callback_law.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "jtac_rt/numeric.hpp"

namespace jtac::loop {

namespace {

std::string joint_label(const std::vector<std::string>& names, int joint) {
  if (joint >= 0 && static_cast<std::size_t>(joint) < names.size()) {
    return names[static_cast<std::size_t>(joint)];
  }
  return "joint " + std::to_string(joint);
}

std::int64_t steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

CallbackLaw::CallbackLaw(const CallbackLawConfig& config)
    : name_(config.name.empty() ? std::string("callback") : config.name),
      function_(config.function),
      num_params_(config.num_params),
      num_memory_(config.num_memory),
      joint_names_(config.joint_names) {
  if (function_ == nullptr) {
    throw std::invalid_argument("law '" + name_ + "': function is null");
  }
  if (num_params_ < 0 || num_memory_ < 0) {
    throw std::invalid_argument("law '" + name_ + "': num_params and num_memory must be >= 0, got " +
                                std::to_string(num_params_) + " and " + std::to_string(num_memory_));
  }
  if (!config.params.empty() && config.params.size() != static_cast<std::size_t>(num_params_)) {
    throw std::invalid_argument("law '" + name_ + "': params has " + std::to_string(config.params.size()) +
                                " values, num_params is " + std::to_string(num_params_));
  }
  for (std::size_t i = 0; i < config.params.size(); ++i) {
    if (!std::isfinite(config.params[i])) {
      throw std::invalid_argument("law '" + name_ + "': params[" + std::to_string(i) + "] is " +
                                  std::to_string(config.params[i]));
    }
  }
  if (!joint_names_.empty() && joint_names_.size() != static_cast<std::size_t>(kNumJoints)) {
    throw std::invalid_argument("law '" + name_ + "': joint_names has " +
                                std::to_string(joint_names_.size()) + " names, expected " +
                                std::to_string(kNumJoints));
  }
  for (int j = 0; j < kNumJoints; ++j) {
    const double a = config.stop_accelerations_rad_s2[static_cast<std::size_t>(j)];
    if (!(std::isfinite(a) && a > 0.0)) {
      throw std::invalid_argument("law '" + name_ + "': stop_accelerations_rad_s2 of " +
                                  joint_label(joint_names_, j) + " must be finite and > 0, got " +
                                  std::to_string(a));
    }
    stop_limits_[j] = a;
  }
  if (!config.urdf_xml.empty()) {
    kinematics_.configure(config.urdf_xml, config.base_frame, config.joint_names);
    if (kinematics_.num_joints() != kNumJoints) {
      throw std::invalid_argument("law '" + name_ + "': the kinematics has " +
                                  std::to_string(kinematics_.num_joints()) + " joints, expected " +
                                  std::to_string(kNumJoints));
    }
    tcp_frame_ = kinematics_.frame_index(config.tcp_frame);
    has_kinematics_ = true;
  }
  for (std::vector<double>& buffer : params_in_.buffers()) {
    buffer.assign(static_cast<std::size_t>(num_params_), 0.0);
    std::copy(config.params.begin(), config.params.end(), buffer.begin());
  }
  // The set in force until the first set_params(): the initial one, in a buffer the writer never
  // touches (its own is another of the three).
  params_in_.publish();
  params_ = params_in_.take_new();
  memory_.assign(static_cast<std::size_t>(num_memory_), 0.0);
}

std::string CallbackLaw::set_params(std::span<const double> params) {
  if (params.size() != static_cast<std::size_t>(num_params_)) {
    return "law '" + name_ + "': set_params got " + std::to_string(params.size()) +
           " values, num_params is " + std::to_string(num_params_);
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!std::isfinite(params[i])) {
      return "law '" + name_ + "': params[" + std::to_string(i) + "] is " + std::to_string(params[i]);
    }
  }
  std::vector<double>& buffer = params_in_.write_buffer();
  std::copy(params.begin(), params.end(), buffer.begin());
  params_in_.publish();
  return {};
}

void CallbackLaw::activate(const DeviceState& state, const LawHandover& from) noexcept {
  // Hold the handed-over command (at a start: what the robot is being commanded, its echoed q_d)
  // until the law says otherwise, as the other laws start.
  q_cmd_ = handover_position(state, from);
  dq_cmd_ = {};
  last_good_time_s_ = state.time_s;
  last_time_s_ = state.time_s;
  braking_ = false;
  std::fill(memory_.begin(), memory_.end(), 0.0);
  failed_.store(false, std::memory_order_release);
  error_ = CallbackLawError{};
  active_ = true;
}

void CallbackLaw::deactivate(double /*time_s*/) noexcept { active_ = false; }

void CallbackLaw::begin_handover(double /*time_s*/) noexcept {
  if (!braking_) {
    start_brake();
  }
}

bool CallbackLaw::at_rest() const noexcept {
  return braking_ && last_time_s_ - stop_start_s_ >= stop_.duration();
}

void CallbackLaw::set_stop_accelerations(const JointArray& a_rad_s2) noexcept {
  for (int j = 0; j < kNumJoints; ++j) {
    const double a = a_rad_s2[static_cast<std::size_t>(j)];
    if (std::isfinite(a) && a > 0.0) {
      stop_limits_[j] = a;
    }
  }
}

void CallbackLaw::start_brake() noexcept {
  // Brake from the last good command, at its velocity and from its time (so this cycle already
  // brakes), within the stop accelerations.
  for (int j = 0; j < kNumJoints; ++j) {
    stop_q_[j] = q_cmd_[static_cast<std::size_t>(j)];
    stop_v_[j] = dq_cmd_[static_cast<std::size_t>(j)];
  }
  stop_.start(stop_q_, stop_v_, stop_limits_);
  stop_start_s_ = last_good_time_s_;
  braking_ = true;
}

bool CallbackLaw::update_kinematics(const DeviceState& state) noexcept {
  if (!has_kinematics_) {
    pose_row_major_ = {1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0};
    jacobian_row_major_.fill(0.0);
    return true;
  }
  for (int j = 0; j < kNumJoints; ++j) {
    q_[j] = state.q_rad[static_cast<std::size_t>(j)];
  }
  if (kinematics_.forward_and_jacobian(q_, tcp_frame_, T_base_tcp_, J_base_tcp_) != KinematicsStatus::kOk) {
    return false;
  }
  const Eigen::Matrix4d& T = T_base_tcp_.matrix();
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) {
      pose_row_major_[static_cast<std::size_t>(4 * r + c)] = T(r, c);
    }
  }
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < kNumJoints; ++c) {
      jacobian_row_major_[static_cast<std::size_t>(kNumJoints * r + c)] = J_base_tcp_(r, c);
    }
  }
  return true;
}

UpdateStatus CallbackLaw::update(const DeviceState& state, double time_s, double period_s,
                                 LawOutput& out) noexcept {
  if (!active_) {
    return UpdateStatus::kInactive;
  }
  if (const std::vector<double>* fresh = params_in_.take_new()) {
    params_ = fresh;
    params_taken_.fetch_add(1, std::memory_order_relaxed);
  }
  last_time_s_ = time_s;
  if (!braking_) {
    if (!update_kinematics(state)) {
      // The measurement itself is not finite: nothing sensible to hand the law.
      int joint = 0;
      while (joint + 1 < kNumJoints && std::isfinite(state.q_rad[static_cast<std::size_t>(joint)])) {
        ++joint;
      }
      fail(time_s, 0, joint, state.q_rad[static_cast<std::size_t>(joint)], true);
    } else {
      wrench_ = state.has_wrench ? state.wrench_sensor_N_Nm : WrenchArray{};
      q_try_ = q_cmd_;
      dq_try_ = dq_cmd_;
      const std::int64_t start_ns = steady_ns();
      const int code = function_(time_s, period_s, state.q_rad.data(), state.dq_rad_s.data(),
                                 state.q_d_rad.data(), state.tau_ext_Nm.data(), wrench_.data(),
                                 pose_row_major_.data(), jacobian_row_major_.data(), params_->data(),
                                 num_params_, memory_.data(), num_memory_, q_try_.data(), dq_try_.data());
      const auto elapsed_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, steady_ns() - start_ns));
      calls_.fetch_add(1, std::memory_order_relaxed);
      call_ns_total_.fetch_add(elapsed_ns, std::memory_order_relaxed);
      store_max(call_ns_max_, elapsed_ns);
      int bad_joint = -1;
      double bad_value = 0.0;
      for (int j = 0; j < kNumJoints && bad_joint < 0; ++j) {
        const auto i = static_cast<std::size_t>(j);
        if (!std::isfinite(q_try_[i])) {
          bad_joint = j;
          bad_value = q_try_[i];
        } else if (!std::isfinite(dq_try_[i])) {
          bad_joint = j;
          bad_value = dq_try_[i];
        }
      }
      if (code != 0 || bad_joint >= 0) {
        fail(time_s, code, bad_joint, bad_value, false);
      } else {
        q_cmd_ = q_try_;
        dq_cmd_ = dq_try_;
        last_good_time_s_ = time_s;
      }
    }
  }
  if (braking_) {
    stop_.sample(time_s - stop_start_s_, stop_q_, stop_v_, stop_a_);
    for (int j = 0; j < kNumJoints; ++j) {
      q_cmd_[static_cast<std::size_t>(j)] = stop_q_[j];
      dq_cmd_[static_cast<std::size_t>(j)] = stop_v_[j];
    }
  }
  fill_output(state, out);
  out.mode = !braking_ ? ControllerMode::kExecuting
                       : (time_s - stop_start_s_ < stop_.duration() ? ControllerMode::kStopping
                                                                    : ControllerMode::kIdle);
  return UpdateStatus::kOk;
}

void CallbackLaw::fail(double time_s, int code, int joint, double value, bool measurement) noexcept {
  error_.failed = true;
  error_.code = code;
  error_.joint = joint;
  error_.value = value;
  error_.time_s = time_s;
  const char* joint_name = (joint >= 0 && static_cast<std::size_t>(joint) < joint_names_.size())
                               ? joint_names_[static_cast<std::size_t>(joint)].c_str()
                               : "";
  if (measurement) {
    std::snprintf(
        error_.message.data(), error_.message.size(),
        "law '%s' not called at t = %.3f s: the measured position of joint %d%s%s%s is %g: the arm stops",
        name_.c_str(), time_s, joint, joint_name[0] != '\0' ? " (" : "", joint_name,
        joint_name[0] != '\0' ? ")" : "", value);
  } else if (code != 0) {
    std::snprintf(error_.message.data(), error_.message.size(),
                  "law '%s' returned error code %d at t = %.3f s: the arm stops", name_.c_str(), code,
                  time_s);
  } else {
    std::snprintf(error_.message.data(), error_.message.size(),
                  "law '%s' commanded a non-finite value at t = %.3f s: joint %d%s%s%s = %g: the arm stops",
                  name_.c_str(), time_s, joint, joint_name[0] != '\0' ? " (" : "", joint_name,
                  joint_name[0] != '\0' ? ")" : "", value);
  }
  if (!braking_) {
    start_brake();
  }
  failed_.store(true, std::memory_order_release);
}

void CallbackLaw::fill_output(const DeviceState& state, LawOutput& out) const noexcept {
  fill_plain_output(state, q_cmd_, dq_cmd_, out);
  out.goal_id = 0;
  out.time_scale = 1.0;
  out.trajectory_time_s = 0.0;
}

CallbackLawError CallbackLaw::error() const noexcept {
  if (!failed()) {
    return {};
  }
  return error_;  // written before failed_ was set, and not again in this activation
}

// ------------------------------------------------------------------------------- reference laws

extern "C" int jtac_sine_law(double time_s, double /*period_s*/, const double* /*q_rad*/,
                             const double* /*dq_rad_s*/, const double* q_d_rad, const double* /*tau_ext_Nm*/,
                             const double* /*wrench_N_Nm*/, const double* /*T_base_tcp*/,
                             const double* /*jacobian*/, const double* params, std::int64_t num_params,
                             double* memory, std::int64_t num_memory, double* q_cmd_rad,
                             double* dq_cmd_rad_s) {
  if (num_params < 3 || num_memory < 9) {
    return 1;
  }
  if (memory[0] == 0.0) {
    memory[0] = 1.0;
    memory[1] = time_s;
    for (int j = 0; j < kNumJoints; ++j) {
      memory[2 + j] = q_d_rad[j];
    }
  }
  const double amplitude_rad = params[0];
  const double omega_rad_s = params[1];
  const auto joint = static_cast<int>(params[2]);
  if (joint < 0 || joint >= kNumJoints) {
    return 2;
  }
  const double tau_s = time_s - memory[1];
  for (int j = 0; j < kNumJoints; ++j) {
    q_cmd_rad[j] = memory[2 + j];
    dq_cmd_rad_s[j] = 0.0;
  }
  q_cmd_rad[joint] += amplitude_rad * std::sin(omega_rad_s * tau_s);
  dq_cmd_rad_s[joint] = amplitude_rad * omega_rad_s * std::cos(omega_rad_s * tau_s);
  return 0;
}

extern "C" int jtac_joint_impedance_law(double /*time_s*/, double period_s, const double* /*q_rad*/,
                                        const double* /*dq_rad_s*/, const double* q_d_rad,
                                        const double* tau_ext_Nm, const double* /*wrench_N_Nm*/,
                                        const double* /*T_base_tcp*/, const double* /*jacobian*/,
                                        const double* params, std::int64_t num_params, double* memory,
                                        std::int64_t num_memory, double* q_cmd_rad, double* dq_cmd_rad_s) {
  if (num_params < 3 * kNumJoints || num_memory < 1 + 3 * kNumJoints) {
    return 1;
  }
  double* q0 = memory + 1;
  double* x = q0 + kNumJoints;
  double* v = x + kNumJoints;
  if (memory[0] == 0.0) {
    memory[0] = 1.0;
    for (int j = 0; j < kNumJoints; ++j) {
      q0[j] = q_d_rad[j];
      x[j] = 0.0;
      v[j] = 0.0;
    }
  }
  for (int j = 0; j < kNumJoints; ++j) {
    const double k = params[j];
    const double d = params[kNumJoints + j];
    const double m = params[2 * kNumJoints + j];
    const double a = (tau_ext_Nm[j] - d * v[j] - k * x[j]) / m;
    v[j] += a * period_s;
    x[j] += v[j] * period_s;
    q_cmd_rad[j] = q0[j] + x[j];
    dq_cmd_rad_s[j] = v[j];
  }
  return 0;
}

}  // namespace jtac::loop
