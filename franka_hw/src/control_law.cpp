#include "franka_hw/control_law.hpp"

namespace jtac::hw {

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
  // Eigen does not zero-initialise: a controller without a sensor never writes these.
  for (int k = 0; k < kMaxTips; ++k) {
    wrenches_[static_cast<std::size_t>(k)].setZero();
    out_.wrench_filtered_sensor[static_cast<std::size_t>(k)].setZero();
    out_.wrench_control[static_cast<std::size_t>(k)].setZero();
  }
}

void JtacLaw::activate(const DeviceState& state) noexcept {
  // The engine starts holding what the robot is being commanded (its echoed q_d), not the measured
  // position: an arm off its command (servo error, a push, still settling after the last motion)
  // must not be pulled to where it happens to be. A non-finite q_d falls back to the measurement.
  for (int i = 0; i < kNumJoints; ++i) {
    q_[i] = state.q_d_rad[static_cast<std::size_t>(i)];
  }
  controller_.activate(q_);
}

void JtacLaw::deactivate(double time_s) noexcept { controller_.deactivate(time_s); }

UpdateStatus JtacLaw::update(const DeviceState& state, double time_s, double period_s,
                             LawOutput& out) noexcept {
  for (int i = 0; i < kNumJoints; ++i) {
    q_[i] = state.q_rad[static_cast<std::size_t>(i)];
    dq_[i] = state.dq_rad_s[static_cast<std::size_t>(i)];
  }
  for (int i = 0; i < 6; ++i) {
    wrenches_[0][i] = state.has_wrench ? state.wrench_sensor_N_Nm[static_cast<std::size_t>(i)] : 0.0;
  }
  const UpdateStatus status = controller_.update(time_s, period_s, q_, dq_, wrenches_, out_);
  copy_joints(out_.trajectory.command.position_rad, out.q_cmd_rad);
  copy_joints(out_.trajectory.command.velocity_rad_s, out.dq_cmd_rad_s);
  copy_joints(out_.trajectory.reference.position_rad, out.q_ref_rad);
  copy_joints(out_.trajectory.reference.velocity_rad_s, out.dq_ref_rad_s);
  copy_joints(out_.trajectory.error_rad, out.error_rad);
  copy_joints(out_.joint_offset_rad, out.joint_offset_rad);
  for (int i = 0; i < 6; ++i) {
    out.wrench_filtered_N_Nm[static_cast<std::size_t>(i)] = out_.wrench_filtered_sensor[0][i];
    out.wrench_control_N_Nm[static_cast<std::size_t>(i)] = out_.wrench_control[0][i];
  }
  out.mode = out_.trajectory.mode;
  out.goal_id = out_.trajectory.goal_id;
  out.time_scale = out_.trajectory.time_scale;
  return status;
}

}  // namespace jtac::hw
