#include "jtac_loop/control_law.hpp"

#include <cmath>

namespace jtac::loop {

namespace {

template <class Vector>
void copy_joints(const Vector& from, JointArray& to) noexcept {
  for (int i = 0; i < kNumJoints; ++i) {
    to[static_cast<std::size_t>(i)] = i < from.size() ? from[i] : 0.0;
  }
}

}  // namespace

JtacLaw::JtacLaw(JointTrajectoryAdmittanceController& controller) : controller_(controller) {
  out_.trajectory.command.set_zero(kNumJoints);
  out_.trajectory.reference.set_zero(kNumJoints);
  out_.trajectory.error_rad.setZero(kNumJoints);
  out_.joint_offset_rad.setZero(kNumJoints);
  reference_.set_zero(kNumJoints);
  // Eigen does not zero-initialise: a controller without a sensor never writes these.
  for (int k = 0; k < kMaxTips; ++k) {
    const auto tip = static_cast<std::size_t>(k);
    wrenches_[tip].setZero();
    out_.wrench_filtered_sensor[tip].setZero();
    out_.wrench_control[tip].setZero();
    sources_[tip].store(k == 0 ? WrenchSource::kDevice : WrenchSource::kExternal, std::memory_order_relaxed);
  }
}

void JtacLaw::set_wrench_sources(const std::array<WrenchSource, kMaxTips>& sources) noexcept {
  for (std::size_t k = 0; k < sources.size(); ++k) {
    sources_[k].store(sources[k], std::memory_order_release);
  }
}

WrenchSource JtacLaw::wrench_source(int tip) const noexcept {
  if (tip < 0 || tip >= kMaxTips) {
    return WrenchSource::kNone;
  }
  return sources_[static_cast<std::size_t>(tip)].load(std::memory_order_acquire);
}

bool JtacLaw::feed_wrench(int tip, const WrenchArray& wrench_N_Nm) {
  if (tip >= controller_.num_tips() || wrench_source(tip) != WrenchSource::kExternal) {
    return false;
  }
  const std::lock_guard<std::mutex> lock(feed_mutex_);  // LatestValue has one writer
  LatestValue<WrenchArray>& feed = feeds_[static_cast<std::size_t>(tip)];
  feed.write_buffer() = wrench_N_Nm;
  feed.publish();
  return true;
}

JointArray handover_position(const DeviceState& state, const LawHandover& from) noexcept {
  for (const double q : from.q_rad) {
    if (!std::isfinite(q)) {
      return state.q_rad;
    }
  }
  return from.q_rad;
}

void JtacLaw::activate(const DeviceState& state, const LawHandover& from) noexcept {
  // The engine starts holding the handed-over command (at a start: what the robot is being
  // commanded, its echoed q_d), not the measured position: an arm off its command (servo error, a
  // push, still settling after the last motion) must not be pulled to where it happens to be.
  const JointArray q = handover_position(state, from);
  for (int i = 0; i < kNumJoints; ++i) {
    q_[i] = q[static_cast<std::size_t>(i)];
  }
  controller_.activate(q_);
  at_rest_ = true;
}

void JtacLaw::deactivate(double time_s) noexcept { controller_.deactivate(time_s); }

void JtacLaw::begin_handover(double /*time_s*/) noexcept { controller_.request_handover_stop(); }

void JtacLaw::brake_for_peer(double /*time_s*/) noexcept { controller_.request_peer_stop(); }

bool JtacLaw::at_rest() const noexcept { return at_rest_; }

void JtacLaw::activate_external(const DeviceState& state, const JointArray& q_rad,
                                const AdmittanceGoal& admittance) noexcept {
  LawHandover from;
  from.q_rad = q_rad;
  const JointArray q = handover_position(state, from);
  for (int i = 0; i < kNumJoints; ++i) {
    q_[i] = q[static_cast<std::size_t>(i)];
  }
  controller_.activate_external(q_, admittance);
}

void JtacLaw::read_inputs(const DeviceState& state, LawOutput& out) noexcept {
  for (int i = 0; i < kNumJoints; ++i) {
    q_[i] = state.q_rad[static_cast<std::size_t>(i)];
    dq_[i] = state.dq_rad_s[static_cast<std::size_t>(i)];
  }
  const int num_tips = controller_.num_tips();
  for (int k = 0; k < kMaxTips; ++k) {
    const auto tip = static_cast<std::size_t>(k);
    WrenchArray& raw = out.wrench_raw_N_Nm[tip];
    raw = {};
    switch (k < num_tips ? sources_[tip].load(std::memory_order_acquire) : WrenchSource::kNone) {
      case WrenchSource::kDevice:
        if (state.has_wrench) {
          raw = state.wrench_sensor_N_Nm;
        }
        break;
      case WrenchSource::kExternal:
        if (const WrenchArray* fresh = feeds_[tip].take_new()) {
          external_N_Nm_[tip] = *fresh;
        }
        raw = external_N_Nm_[tip];
        break;
      case WrenchSource::kNone:
        break;
    }
    for (int i = 0; i < 6; ++i) {
      wrenches_[tip][i] = raw[static_cast<std::size_t>(i)];
    }
  }
}

void JtacLaw::write_output(LawOutput& out) const noexcept {
  copy_joints(out_.trajectory.command.position_rad, out.q_cmd_rad);
  copy_joints(out_.trajectory.command.velocity_rad_s, out.dq_cmd_rad_s);
  copy_joints(out_.trajectory.reference.position_rad, out.q_ref_rad);
  copy_joints(out_.trajectory.reference.velocity_rad_s, out.dq_ref_rad_s);
  copy_joints(out_.trajectory.error_rad, out.error_rad);
  copy_joints(out_.joint_offset_rad, out.joint_offset_rad);
  const int num_tips = controller_.num_tips();
  out.num_tips = num_tips;
  for (std::size_t tip = 0; tip < static_cast<std::size_t>(kMaxTips); ++tip) {
    for (int i = 0; i < 6; ++i) {
      const bool configured = tip < static_cast<std::size_t>(num_tips);
      out.wrench_filtered_N_Nm[tip][static_cast<std::size_t>(i)] =
          configured ? out_.wrench_filtered_sensor[tip][i] : 0.0;
      out.wrench_control_N_Nm[tip][static_cast<std::size_t>(i)] =
          configured ? out_.wrench_control[tip][i] : 0.0;
    }
  }
  out.mode = out_.trajectory.mode;
  out.goal_id = out_.trajectory.goal_id;
  out.time_scale = out_.trajectory.time_scale;
  out.trajectory_time_s = out_.trajectory.trajectory_time_s;
}

UpdateStatus JtacLaw::update(const DeviceState& state, double time_s, double period_s,
                             LawOutput& out) noexcept {
  read_inputs(state, out);
  const UpdateStatus status = controller_.update(time_s, period_s, q_, dq_, wrenches_, out_);
  write_output(out);
  const ControllerMode mode = out_.trajectory.mode;
  at_rest_ = mode == ControllerMode::kIdle || mode == ControllerMode::kInactive;
  return status;
}

UpdateStatus JtacLaw::update_external(const DeviceState& state, double time_s, double period_s,
                                      const JointArray& q_ref_rad, const JointArray& dq_ref_rad_s,
                                      const JointArray& ddq_ref_rad_s2, bool tracking,
                                      LawOutput& out) noexcept {
  read_inputs(state, out);
  for (int i = 0; i < kNumJoints; ++i) {
    const auto j = static_cast<std::size_t>(i);
    reference_.position_rad[i] = q_ref_rad[j];
    reference_.velocity_rad_s[i] = dq_ref_rad_s[j];
    reference_.acceleration_rad_s2[i] = ddq_ref_rad_s2[j];
  }
  const UpdateStatus status =
      controller_.update_external(time_s, period_s, q_, reference_, wrenches_, tracking, out_);
  write_output(out);
  return status;
}

void fill_plain_output(const DeviceState& state, const JointArray& q_cmd_rad, const JointArray& dq_cmd_rad_s,
                       LawOutput& out) noexcept {
  out.q_cmd_rad = q_cmd_rad;
  out.dq_cmd_rad_s = dq_cmd_rad_s;
  out.q_ref_rad = q_cmd_rad;
  out.dq_ref_rad_s = dq_cmd_rad_s;
  for (std::size_t j = 0; j < out.error_rad.size(); ++j) {
    out.error_rad[j] = q_cmd_rad[j] - state.q_rad[j];
  }
  out.joint_offset_rad = {};
  out.num_tips = state.has_wrench ? 1 : 0;
  out.wrench_raw_N_Nm = {};
  out.wrench_filtered_N_Nm = {};
  out.wrench_control_N_Nm = {};
  if (state.has_wrench) {
    out.wrench_raw_N_Nm[0] = state.wrench_sensor_N_Nm;
    out.wrench_filtered_N_Nm[0] = state.wrench_sensor_N_Nm;
  }
}

}  // namespace jtac::loop
