// The composed controller's control cycle: the force/torque pipelines, the admittance step, the goal's
// staged admittance and the trajectory engine in goal mode (update), and the external-reference mode
// (activate_external, update_external). Everything here runs on the control thread: noexcept, no allocation,
// no lock.
#include "jtac_core/joint_trajectory_admittance_controller.hpp"

namespace jtac {

void JointTrajectoryAdmittanceController::take_parameters() noexcept {
  if (const JtacParameters* p = parameters_.take_new(); p != nullptr) {
    params_ = *p;
    apply_force_torque_parameters();
  }
}

void JointTrajectoryAdmittanceController::report_tare(int tip, EventType type, EventDetail detail,
                                                      double offset_force_N, double time_s) noexcept {
  Event e;
  e.type = type;
  e.detail = detail;
  e.joint = tip;
  e.value = offset_force_N;
  e.time_s = time_s;
  trajectory_.report(e);
}

void JointTrajectoryAdmittanceController::process_wrenches(double time_s, const JointVector& position_rad,
                                                           const TipWrenches& wrench_raw_sensor,
                                                           bool in_force, JtacOutput& out) noexcept {
  for (int k = 0; k < num_tips_; ++k) {
    const auto i = static_cast<std::size_t>(k);
    Eigen::Isometry3d T_base_sensor = Eigen::Isometry3d::Identity();
    const bool pose_ok =
        kinematics_.forward(position_rad, sensor_frames_[i], T_base_sensor) == KinematicsStatus::kOk;
    if (tare_requested_[i].exchange(false, std::memory_order_acq_rel)) {
      if (in_force) {
        report_tare(k, EventType::kTareFailed, EventDetail::kTareWhileExecuting, 0.0, time_s);
      } else {
        pipelines_[i].start_tare(params_.zero_fts_num_samples);
      }
    }
    const ForceTorqueResult r =
        pipelines_[i].process(wrench_raw_sensor[i], pose_ok ? Eigen::Matrix3d(T_base_sensor.linear())
                                                            : Eigen::Matrix3d::Identity());
    if (r.tare == TareStatus::kDone || r.tare == TareStatus::kFailedNonFinite) {
      const bool done = r.tare == TareStatus::kDone;
      report_tare(k, done ? EventType::kTareSucceeded : EventType::kTareFailed,
                  done ? EventDetail::kNone : EventDetail::kNonFiniteWrench,
                  pipelines_[i].tare().offset().head<3>().norm(), time_s);
    }
    out.wrench_filtered_sensor[i] = r.wrench_filtered_sensor;
    wrench_control_[i] = r.wrench_control;
    if (r.status == ForceTorqueStatus::kNonFinite && seams_.input_fault == EventDetail::kNone) {
      // Also while idle: a goal arriving now is refused before it moves anything.
      seams_.input_fault = EventDetail::kNonFiniteWrench;
      seams_.input_fault_index = 6 * k + (r.violated_axis >= 0 ? r.violated_axis : 0);
      seams_.input_fault_value = r.violated_axis >= 0 ? wrench_raw_sensor[i][r.violated_axis] : 0.0;
    }
    if (!in_force || seams_.stop_requested) {
      continue;
    }
    if (r.status == ForceTorqueStatus::kThresholdExceeded) {
      seams_.stop_requested = true;
      seams_.stop_code = ResultCode::kForceTorqueThresholdExceeded;
      seams_.stop_detail = EventDetail::kForceTorqueThreshold;
      seams_.stop_index = 6 * k + r.violated_axis;
      seams_.stop_value = r.wrench_filtered_sensor[r.violated_axis];
      seams_.stop_limit = pipelines_[i].parameters().threshold[r.violated_axis];
    } else if (r.status == ForceTorqueStatus::kNonFinite && pose_ok) {
      seams_.stop_requested = true;
      seams_.stop_code = ResultCode::kAdmittanceError;
      seams_.stop_detail = EventDetail::kNonFiniteWrench;
      seams_.stop_index = 6 * k + (r.violated_axis >= 0 ? r.violated_axis : 0);
      seams_.stop_value = r.violated_axis >= 0 ? wrench_raw_sensor[i][r.violated_axis] : 0.0;
    }
  }
}

void JointTrajectoryAdmittanceController::step_admittance(double period_s) noexcept {
  const AdmittanceStatus st =
      admittance_.step(period_s, previous_reference_rad_, wrench_control_, params_.jacobian_damping);
  if (st != AdmittanceStatus::kOk) {
    seams_.stop_requested = true;
    seams_.stop_code = ResultCode::kAdmittanceError;
    seams_.stop_detail = EventDetail::kAdmittanceNonFinite;
    seams_.stop_index = admittance_.bad_index();
  }
}

void JointTrajectoryAdmittanceController::refuse_payload_stitch(std::uint64_t pending_goal_id) noexcept {
  if (pending_goal_id == 0 || last_goal_id_ == 0) {
    return;  // nothing to stitch onto: a goal taken from rest may bring any payload
  }
  const StagedAdmittance* staged = staged_admittance_.peek();
  if (staged == nullptr || staged->goal_id != pending_goal_id) {
    return;
  }
  if (const int tip = current_goal_.first_payload_mismatch(staged->admittance); tip >= 0) {
    seams_.stitch_refused_goal_id = pending_goal_id;
    seams_.stitch_refusal_detail = EventDetail::kStitchPayloadMismatch;
    seams_.stitch_refusal_index = tip;
  }
}

const AdmittanceGoal* JointTrajectoryAdmittanceController::take_staged_admittance() noexcept {
  const StagedAdmittance* staged = staged_admittance_.peek();
  // Decided by the engine's own record, not by a look at its mailbox before the cycle: the set is
  // staged before its goal is published, so the goal may arrive between such a look and the engine's
  // intake. A set for a goal not yet decided stays; one the engine took goes with it; one it refused
  // is dropped (ids rise, so at most this cycle's goal is decided and not yet settled).
  if (staged == nullptr || staged->goal_id > trajectory_.last_consumed_goal_id()) {
    return nullptr;
  }
  const PreparedGoal* taken = trajectory_.active_goal();
  if (taken == nullptr || taken->goal_id != staged->goal_id) {
    staged_admittance_.decline();
    return nullptr;
  }
  return &staged_admittance_.take().admittance;
}

UpdateStatus JointTrajectoryAdmittanceController::update(double time_s, double period_s,
                                                         const JointVector& position_rad,
                                                         const JointVector& velocity_rad_s,
                                                         const TipWrenches& wrench_raw_sensor,
                                                         JtacOutput& out) noexcept {
  take_parameters();
  seams_ = CycleSeams{};
  const ControllerMode mode = last_mode_;  // as of the previous cycle
  const bool goal_active = last_goal_id_ != 0;
  const bool tracking = mode == ControllerMode::kExecuting || mode == ControllerMode::kSettling ||
                        mode == ControllerMode::kWaiting;
  if (has_sensor_) {
    process_wrenches(time_s, position_rad, wrench_raw_sensor, goal_active, out);
  }
  if (handover_stop_ && !seams_.stop_requested) {
    seams_.stop_requested = true;
    seams_.stop_code = ResultCode::kInvalidState;
    seams_.stop_detail = EventDetail::kHandedOver;
  }
  if (peer_stop_ && !seams_.stop_requested) {
    seams_.stop_requested = true;
    seams_.stop_code = ResultCode::kInvalidState;
    seams_.stop_detail = EventDetail::kPeerFault;
  }
  peer_stop_ = false;
  if (has_sensor_) {
    // Also without compliance: the springs bring back an offset an earlier goal left.
    if (tracking && have_reference_ && !seams_.stop_requested) {
      step_admittance(period_s);
    }
    seams_.joint_offset_rad = &admittance_.offset();
  }
  const std::uint64_t pending_before = trajectory_.pending_goal_id();
  if (pending_before != 0) {
    refuse_payload_stitch(pending_before);
  }
  const UpdateStatus status =
      trajectory_.update(time_s, period_s, position_rad, velocity_rad_s, seams_, out.trajectory);
  // The admittance of a goal taken this cycle; a refused goal's is dropped.
  const AdmittanceGoal* taken = take_staged_admittance();
  if (out.trajectory.goal_id != last_goal_id_) {
    last_goal_id_ = out.trajectory.goal_id;
    apply_goal(last_goal_id_ != 0 ? taken : nullptr);
  }
  goal_active_.store(last_goal_id_ != 0, std::memory_order_release);
  last_mode_ = out.trajectory.mode;
  if (status != UpdateStatus::kInactive && status != UpdateStatus::kBadInput) {
    previous_reference_rad_ = out.trajectory.reference.position_rad;
    have_reference_ = true;
  }
  out.wrench_control = wrench_control_;
  out.joint_offset_rad = has_sensor_ ? admittance_.offset() : JointVector::Zero(trajectory_.num_joints());
  out.external_stop = ResultCode::kSuccessful;
  return status;
}

void JointTrajectoryAdmittanceController::activate_external(const JointVector& command_position_rad,
                                                            const AdmittanceGoal& admittance) noexcept {
  const int n = trajectory_.num_joints();
  handover_stop_ = false;
  peer_stop_ = false;
  last_mode_ = ControllerMode::kIdle;
  last_goal_id_ = 0;
  goal_active_.store(false, std::memory_order_release);
  if (has_sensor_) {
    admittance_.clear();
  }
  apply_goal(&admittance);
  external_stop_ = ResultCode::kSuccessful;
  last_external_command_.set_zero(n);
  const bool usable = command_position_rad.size() == n && command_position_rad.allFinite();
  if (usable) {
    last_external_command_.position_rad = command_position_rad;
    previous_reference_rad_ = command_position_rad;
  }
  have_reference_ = usable;
  external_active_.store(true, std::memory_order_release);
}

UpdateStatus JointTrajectoryAdmittanceController::update_external(double time_s, double period_s,
                                                                  const JointVector& position_rad,
                                                                  const JointTrajectoryState& reference,
                                                                  const TipWrenches& wrench_raw_sensor,
                                                                  bool tracking, JtacOutput& out) noexcept {
  if (!external_active_.load(std::memory_order_relaxed)) {
    return UpdateStatus::kInactive;
  }
  const int n = trajectory_.num_joints();
  if (position_rad.size() != n || reference.position_rad.size() != n ||
      reference.velocity_rad_s.size() != n || reference.acceleration_rad_s2.size() != n) {
    out.trajectory.command = last_external_command_;
    return UpdateStatus::kBadInput;
  }
  take_parameters();
  seams_ = CycleSeams{};
  const bool stopped = external_stop_ != ResultCode::kSuccessful;
  if (has_sensor_) {
    // The reference is in force all the time this mode runs (a tare is refused, the thresholds watched).
    process_wrenches(time_s, position_rad, wrench_raw_sensor, true, out);
    if (tracking && have_reference_ && !stopped && !seams_.stop_requested) {
      step_admittance(period_s);
    }
    if (seams_.stop_requested && !stopped) {
      external_stop_ = seams_.stop_code;
      Event e;
      e.type = EventType::kGoalAborted;  // goal_id 0: the external reference's session ends
      e.detail = seams_.stop_detail;
      e.code = seams_.stop_code;
      e.joint = seams_.stop_index;
      e.value = seams_.stop_value;
      e.limit = seams_.stop_limit;
      e.time_s = time_s;
      trajectory_.report(e);
    }
  }
  ControllerOutput& o = out.trajectory;
  o.reference = reference;
  o.command = reference;
  if (has_sensor_) {
    o.command.position_rad += admittance_.offset();
  }
  UpdateStatus status = UpdateStatus::kOk;
  if (o.command.position_rad.allFinite() && o.command.velocity_rad_s.allFinite() &&
      o.command.acceleration_rad_s2.allFinite()) {
    last_external_command_ = o.command;
  } else {
    o.command = last_external_command_;  // never hand a non-finite command on
    status = UpdateStatus::kHoldingCommand;
  }
  o.error_rad = reference.position_rad - position_rad;
  o.mode = tracking ? ControllerMode::kExecuting : ControllerMode::kIdle;
  o.time_scale = 1.0;
  o.trajectory_time_s = 0.0;
  o.goal_id = 0;
  previous_reference_rad_ = reference.position_rad;
  have_reference_ = true;
  out.wrench_control = wrench_control_;
  out.joint_offset_rad = has_sensor_ ? admittance_.offset() : JointVector::Zero(n);
  out.external_stop = external_stop_;
  return status;
}

}  // namespace jtac
