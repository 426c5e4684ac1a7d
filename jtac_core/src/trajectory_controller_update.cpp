// The trajectory engine's control cycle: activation, update() as a sequence of named steps (serve
// the requests, advance the goal, step the reference, apply the offset, guard the command), stops
// and result events. Everything here runs on the control thread: noexcept, no allocation, no lock.
#include <cmath>
#include <limits>

#include "jtac_core/tolerances.hpp"
#include "jtac_core/trajectory_controller.hpp"

namespace jtac {

namespace {

bool in_motion_mode(ControllerMode m) noexcept {
  return m == ControllerMode::kWaiting || m == ControllerMode::kExecuting || m == ControllerMode::kSettling;
}

}  // namespace

// ============================================================================ events and stops

void TrajectoryController::emit(EventType type, EventDetail detail, ResultCode code, std::uint64_t goal_id,
                                int joint, double value, double limit, double time_s,
                                double stop_duration_s) noexcept {
  Event e;
  e.type = type;
  e.detail = detail;
  e.code = code;
  e.goal_id = goal_id;
  e.joint = joint;
  e.value = value;
  e.limit = limit;
  e.time_s = time_s;
  e.stop_duration_s = stop_duration_s;
  events_.push(e);
}

void TrajectoryController::emit_result(const StopRequest& request, std::uint64_t goal_id,
                                       double time_s) noexcept {
  emit(request.outcome, request.detail, request.code, goal_id, request.joint, request.value, request.limit,
       time_s);
}

void TrajectoryController::begin_stop(double time_s, const StopRequest& request) noexcept {
  stop_decel_rad_s2_ = params_.stop_accelerations_rad_s2;
  // Brake the nominal path (the last command without its offset); the offset stays frozen on top
  // while braking, so the reference never carries it and nothing adds it twice afterwards.
  stop_.start(last_command_.position_rad - last_offset_rad_, last_command_.velocity_rad_s,
              stop_decel_rad_s2_);
  stop_start_s_ = last_command_time_s_;
  stop_reason_ = request;
  stop_has_goal_ = active_goal_id_ != 0;
  mode_ = ControllerMode::kStopping;
  emit(EventType::kStopStarted, request.detail, request.code, active_goal_id_, request.joint, request.value,
       request.limit, time_s, stop_.duration());
}

void TrajectoryController::finish_goal(double time_s, const StopRequest& request) noexcept {
  if (active_goal_id_ != 0) {
    emit_result(request, active_goal_id_, time_s);
  }
  active_goal_id_ = 0;
  active_goal_ = nullptr;
  hold_.position_rad = reference_.position_rad;
  mode_ = ControllerMode::kIdle;
}

inline void TrajectoryController::end_stop(double time_s) noexcept {
  if (stop_has_goal_) {
    emit_result(stop_reason_, active_goal_id_, time_s);
  }
  stop_has_goal_ = false;
  active_goal_id_ = 0;
  active_goal_ = nullptr;
  hold_.position_rad = reference_.position_rad;
  mode_ = ControllerMode::kIdle;
}

bool TrajectoryController::stop_if_off_path(double time_s, const JointVector& position_rad) noexcept {
  int joint = -1;
  double deviation = 0.0;
  if (!first_out_of_tolerance(reference_.position_rad, position_rad, active_goal_->path_tolerance_rad, joint,
                              deviation)) {
    return false;
  }
  begin_stop(time_s, {.outcome = EventType::kGoalAborted,
                      .code = ResultCode::kPathToleranceViolated,
                      .detail = EventDetail::kPathTolerance,
                      .joint = joint,
                      .value = deviation,
                      .limit = active_goal_->path_tolerance_rad[joint]});
  return true;
}

// ============================================================================ activation

void TrajectoryController::activate(const JointVector& command_position_rad) noexcept {
  activate();  // clears has_initial_command_
  if (command_position_rad.size() == num_joints_ && command_position_rad.allFinite()) {
    initial_command_rad_ = command_position_rad;
    has_initial_command_ = true;
  }
}

void TrajectoryController::activate() noexcept {
  has_initial_command_ = false;
  // A goal queued across a deactivation belongs to the previous activation.
  if (PreparedGoal* stale = goals_.peek(); stale != nullptr) {
    emit(EventType::kGoalAborted, EventDetail::kDeactivated, ResultCode::kInvalidState, stale->goal_id, -1,
         0.0, 0.0, 0.0);
    decline_pending();
  }
  mode_ = ControllerMode::kIdle;
  command_initialized_ = false;
  active_goal_ = nullptr;
  active_goal_id_ = 0;
  active_.store(true, std::memory_order_release);
}

void TrajectoryController::deactivate(double time_s) noexcept {
  active_.store(false, std::memory_order_release);
  if (active_goal_id_ != 0 && in_motion_mode(mode_)) {
    emit(EventType::kGoalAborted, EventDetail::kDeactivated, ResultCode::kInvalidState, active_goal_id_, -1,
         0.0, 0.0, time_s);
  } else if (mode_ == ControllerMode::kStopping && stop_has_goal_) {
    // A stop braking for its own reason keeps it; a cancel (or a success braking from a moving
    // final point) becomes INVALID_STATE.
    if (stop_reason_.outcome == EventType::kGoalAborted) {
      emit_result(stop_reason_, active_goal_id_, time_s);
    } else {
      emit(EventType::kGoalAborted, EventDetail::kDeactivated, ResultCode::kInvalidState, active_goal_id_, -1,
           0.0, 0.0, time_s);
    }
  }
  if (PreparedGoal* queued = goals_.peek(); queued != nullptr) {
    emit(EventType::kGoalAborted, EventDetail::kDeactivated, ResultCode::kInvalidState, queued->goal_id, -1,
         0.0, 0.0, time_s);
    decline_pending();
  }
  active_goal_id_ = 0;
  active_goal_ = nullptr;
  stop_has_goal_ = false;
  mode_ = ControllerMode::kInactive;
}

// ============================================================================ helpers

void TrajectoryController::apply_parameters(const ControllerParameters& p) noexcept {
  params_ = p;
  time_scaler_.set_filter_constant(p.time_scale_filter_constant_s);
  time_scaler_.set_target_percent(p.time_scale_percentage);
}

void TrajectoryController::hold(JointTrajectoryState& state) const noexcept {
  state.position_rad = hold_.position_rad;
  state.velocity_rad_s.setZero(num_joints_);
  state.acceleration_rad_s2.setZero(num_joints_);
}

bool TrajectoryController::first_out_of_tolerance(const JointVector& reference, const JointVector& measured,
                                                  const JointVector& tolerance, int& joint,
                                                  double& deviation) const noexcept {
  for (int j = 0; j < num_joints_; ++j) {
    const double d =
        std::abs(joint_difference(measured[j], reference[j], continuous_[static_cast<std::size_t>(j)]));
    if (!(d <= tolerance[j])) {
      joint = j;
      deviation = d;
      return true;
    }
  }
  return false;
}

void TrajectoryController::scale_to_real_time(JointTrajectoryState& state, const TimeScale& ts) noexcept {
  state.acceleration_rad_s2 =
      state.acceleration_rad_s2 * (ts.scale * ts.scale) + state.velocity_rad_s * ts.scale_rate_per_s;
  state.velocity_rad_s *= ts.scale;
}

// ============================================================================ the cycle

UpdateStatus TrajectoryController::update(double time_s, double period_s, const JointVector& position_rad,
                                          const JointVector& velocity_rad_s, const CycleSeams& seams,
                                          ControllerOutput& out) noexcept {
  if (mode_ == ControllerMode::kInactive || !active_.load(std::memory_order_acquire)) {
    out.command = last_command_;
    out.mode = ControllerMode::kInactive;
    out.goal_id = 0;
    return UpdateStatus::kInactive;
  }
  if (position_rad.size() != num_joints_ || velocity_rad_s.size() != num_joints_ || !std::isfinite(time_s) ||
      !std::isfinite(period_s) || !(period_s > 0.0)) {
    out.command = last_command_;  // hold: a bad clock must not move trajectory time
    return UpdateStatus::kBadInput;
  }
  if (const ControllerParameters* p = parameters_.take_new(); p != nullptr) {
    apply_parameters(*p);
  }
  const Event measured_fault = first_non_finite_measurement(position_rad, velocity_rad_s);
  const bool measurement_finite = measured_fault.detail == EventDetail::kNone;
  if (!command_initialized_) {
    if (!measurement_finite) {
      out.command = last_command_;
      return UpdateStatus::kBadInput;
    }
    initialize_command(time_s, period_s, position_rad);
  }
  const TimeScale ts = time_scaler_.update(period_s);
  // Trajectory time advances by the scale averaged over the cycle (trapezoidal rule), so the
  // sampled velocity v = dq/dτ·s is the derivative of the sampled position also while s ramps.
  const double scale_mid = 0.5 * (scale_prev_ + ts.scale);
  scale_prev_ = ts.scale;
  clock_.advance(time_s, scale_mid);

  const bool taken_this_cycle = serve_requests(time_s, period_s, scale_mid, measured_fault, seams);
  advance_goal(time_s, period_s, scale_mid, ts, taken_this_cycle, position_rad, measurement_finite);
  const bool command_has_offset = step_reference(time_s);
  apply_offset(time_s, seams, command_has_offset, out);
  const UpdateStatus status = guard_command(time_s, out);
  write_output(time_s, position_rad, ts, out);
  return status;
}

inline Event TrajectoryController::first_non_finite_measurement(
    const JointVector& position_rad, const JointVector& velocity_rad_s) const noexcept {
  Event fault;  // detail kNone: all finite
  for (int j = 0; j < num_joints_; ++j) {
    if (!std::isfinite(position_rad[j])) {
      fault.detail = EventDetail::kNonFiniteMeasuredPosition;
      fault.joint = j;
      fault.value = position_rad[j];
      break;
    }
    if (!std::isfinite(velocity_rad_s[j])) {
      fault.detail = EventDetail::kNonFiniteMeasuredVelocity;
      fault.joint = j;
      fault.value = velocity_rad_s[j];
      break;
    }
  }
  return fault;
}

inline void TrajectoryController::initialize_command(double time_s, double period_s,
                                                     const JointVector& position_rad) noexcept {
  last_command_.set_zero(num_joints_);
  last_command_.position_rad = has_initial_command_ ? initial_command_rad_ : position_rad;
  hold_ = last_command_;
  reference_ = last_command_;
  last_offset_rad_.setZero(num_joints_);
  last_command_time_s_ = time_s - period_s;
  clock_.reset(time_s - period_s, scale_prev_);
  command_initialized_ = true;
}

inline bool TrajectoryController::serve_requests(double time_s, double period_s, double scale_mid,
                                                 const Event& measured_fault,
                                                 const CycleSeams& seams) noexcept {
  // The first non-finite input of this cycle: it refuses a goal arriving now.
  Event fault;
  if (measured_fault.detail != EventDetail::kNone) {
    fault = measured_fault;
  } else if (seams.input_fault != EventDetail::kNone) {
    fault.detail = seams.input_fault;
    fault.joint = seams.input_fault_index;
    fault.value = seams.input_fault_value;
  }
  // A cancel of the active goal is served before a new goal is looked at: stop-and-replan sends the two
  // back to back, and the replacement must then wait for the brake (held), not stitch onto the path
  // that is being canceled.
  const std::uint64_t cancel_id = cancel_goal_id_.load(std::memory_order_acquire);
  if (cancel_id != 0 && cancel_id == active_goal_id_ && in_motion_mode(mode_)) {
    begin_stop(time_s, {.outcome = EventType::kGoalCanceled,
                        .code = ResultCode::kSuccessful,
                        .detail = EventDetail::kCanceled});
  }
  const std::uint64_t goal_before = active_goal_id_;
  handle_new_goal(time_s, period_s, scale_mid, fault, seams);
  const bool taken_this_cycle = active_goal_id_ != goal_before;
  if (seams.stop_requested && in_motion_mode(mode_)) {
    begin_stop(time_s, {.outcome = EventType::kGoalAborted,
                        .code = seams.stop_code,
                        .detail = seams.stop_detail,
                        .joint = seams.stop_index,
                        .value = seams.stop_value,
                        .limit = seams.stop_limit});
  }
  if (measured_fault.detail != EventDetail::kNone && in_motion_mode(mode_)) {
    begin_stop(time_s, {.outcome = EventType::kGoalAborted,
                        .code = ResultCode::kPathToleranceViolated,
                        .detail = measured_fault.detail,
                        .joint = measured_fault.joint,
                        .value = measured_fault.value});
  }
  return taken_this_cycle;
}

inline void TrajectoryController::advance_goal(double time_s, double period_s, double scale_mid,
                                               const TimeScale& ts, bool taken_this_cycle,
                                               const JointVector& position_rad, bool check_path) noexcept {
  if (mode_ == ControllerMode::kWaiting && time_s >= active_goal_->start_time_s) {
    tau_s_ = clock_.elapsed_since(active_goal_->start_time_s);
    mode_ = ControllerMode::kExecuting;
  } else if (mode_ == ControllerMode::kExecuting && !taken_this_cycle) {
    tau_s_ += period_s * scale_mid;  // a goal taken now is sampled at its τ = t − start first
  }
  if (mode_ == ControllerMode::kExecuting) {
    execute(time_s, ts, position_rad, check_path);
  } else if (mode_ == ControllerMode::kSettling) {
    // The window runs in trajectory time: it stretches with 1/s.
    settle(time_s, period_s * scale_mid, position_rad, check_path);
  }
}

inline void TrajectoryController::execute(double time_s, const TimeScale& ts, const JointVector& position_rad,
                                          bool check_path) noexcept {
  const Trajectory& traj = active_goal_->trajectory;
  traj.sample(tau_s_, reference_);
  scale_to_real_time(reference_, ts);
  if (check_path && stop_if_off_path(time_s, position_rad)) {
    return;  // braking for PATH_TOLERANCE_VIOLATED
  }
  if (tau_s_ >= traj.duration()) {
    reach_end(time_s, position_rad);
  }
}

inline void TrajectoryController::reach_end(double time_s, const JointVector& position_rad) noexcept {
  const Trajectory& traj = active_goal_->trajectory;
  traj.sample(traj.duration(), scratch_);  // the final point with its own velocity
  int joint = -1;
  double deviation = 0.0;
  const bool goal_ok = !first_out_of_tolerance(scratch_.position_rad, position_rad,
                                               active_goal_->goal_tolerance_rad, joint, deviation);
  const StopRequest succeeded{
      .outcome = EventType::kGoalSucceeded, .code = ResultCode::kSuccessful, .detail = EventDetail::kNone};
  const StopRequest violated{.outcome = EventType::kGoalAborted,
                             .code = ResultCode::kGoalToleranceViolated,
                             .detail = EventDetail::kGoalTolerance,
                             .joint = joint,
                             .value = deviation,
                             .limit = goal_ok ? 0.0 : active_goal_->goal_tolerance_rad[joint]};
  reference_.position_rad = scratch_.position_rad;
  if (scratch_.velocity_rad_s.cwiseAbs().maxCoeff() > 1e-12) {
    // A moving final point: brake from it; the result is decided now and reported at rest.
    begin_stop(time_s, goal_ok ? succeeded : violated);
  } else if (goal_ok) {
    finish_goal(time_s, succeeded);
  } else if (settle_window_s_ > 0.0) {
    hold_.position_rad = scratch_.position_rad;
    settle_elapsed_s_ = 0.0;
    mode_ = ControllerMode::kSettling;
  } else {
    finish_goal(time_s, violated);
  }
}

inline void TrajectoryController::settle(double time_s, double elapsed_s, const JointVector& position_rad,
                                         bool check_path) noexcept {
  settle_elapsed_s_ += elapsed_s;
  hold(reference_);
  if (check_path && stop_if_off_path(time_s, position_rad)) {
    return;  // braking for PATH_TOLERANCE_VIOLATED
  }
  int joint = -1;
  double deviation = 0.0;
  if (!first_out_of_tolerance(reference_.position_rad, position_rad, active_goal_->goal_tolerance_rad, joint,
                              deviation)) {
    finish_goal(time_s, {.outcome = EventType::kGoalSucceeded,
                         .code = ResultCode::kSuccessful,
                         .detail = EventDetail::kNone});
  } else if (settle_elapsed_s_ >= settle_window_s_) {
    finish_goal(time_s, {.outcome = EventType::kGoalAborted,
                         .code = ResultCode::kGoalToleranceViolated,
                         .detail = EventDetail::kGoalTolerance,
                         .joint = joint,
                         .value = deviation,
                         .limit = active_goal_->goal_tolerance_rad[joint]});
  }
}

inline bool TrajectoryController::step_reference(double time_s) noexcept {
  switch (mode_) {
    case ControllerMode::kIdle:
    case ControllerMode::kWaiting:
    case ControllerMode::kSettling:
      hold(reference_);
      return true;
    case ControllerMode::kExecuting:
      return true;
    case ControllerMode::kStopping: {
      const double t_stop = time_s - stop_start_s_;
      stop_.sample(t_stop, reference_.position_rad, reference_.velocity_rad_s,
                   reference_.acceleration_rad_s2);
      if (t_stop >= stop_.duration()) {
        end_stop(time_s);
        return true;  // idle from this cycle on
      }
      return false;
    }
    case ControllerMode::kInactive:
      break;
  }
  return false;
}

inline void TrajectoryController::apply_offset(double time_s, const CycleSeams& seams,
                                               bool command_has_offset, ControllerOutput& out) noexcept {
  out.command = reference_;
  if (mode_ == ControllerMode::kStopping) {
    out.command.position_rad += last_offset_rad_;  // frozen at the stop's start
    return;
  }
  if (!command_has_offset) {
    return;
  }
  if (seams.joint_offset_rad == nullptr) {
    last_offset_rad_.setZero(num_joints_);  // no offset supplied this cycle
    return;
  }
  const JointVector& offset = *seams.joint_offset_rad;
  int bad = offset.size() == num_joints_ ? -1 : 0;
  for (int j = 0; j < num_joints_ && bad < 0; ++j) {
    bad = std::isfinite(offset[j]) ? -1 : j;
  }
  if (bad < 0) {
    out.command.position_rad += offset;
    last_offset_rad_ = offset;
  } else if (in_motion_mode(mode_)) {
    begin_stop(time_s, {.outcome = EventType::kGoalAborted,
                        .code = ResultCode::kAdmittanceError,
                        .detail = EventDetail::kNonFiniteJointOffset,
                        .joint = bad,
                        .value = offset.size() == num_joints_ ? offset[bad]
                                                              : std::numeric_limits<double>::quiet_NaN()});
    stop_.sample(time_s - stop_start_s_, reference_.position_rad, reference_.velocity_rad_s,
                 reference_.acceleration_rad_s2);
    out.command = reference_;
    out.command.position_rad += last_offset_rad_;
  } else {
    // Idle: nothing to stop; hold with the last finite offset (no event every cycle).
    out.command.position_rad += last_offset_rad_;
  }
}

inline UpdateStatus TrajectoryController::guard_command(double time_s, ControllerOutput& out) noexcept {
  for (int j = 0; j < num_joints_; ++j) {
    if (!std::isfinite(out.command.position_rad[j]) || !std::isfinite(out.command.velocity_rad_s[j]) ||
        !std::isfinite(out.command.acceleration_rad_s2[j])) {
      const double value = out.command.position_rad[j];
      out.command = last_command_;
      out.command.velocity_rad_s.setZero(num_joints_);
      out.command.acceleration_rad_s2.setZero(num_joints_);
      if (mode_ != ControllerMode::kStopping) {
        begin_stop(time_s, {.outcome = EventType::kGoalAborted,
                            .code = ResultCode::kInvalidGoal,
                            .detail = EventDetail::kNonFiniteCommand,
                            .joint = j,
                            .value = value});
      }
      return UpdateStatus::kHoldingCommand;
    }
  }
  return UpdateStatus::kOk;
}

inline void TrajectoryController::write_output(double time_s, const JointVector& position_rad,
                                               const TimeScale& ts, ControllerOutput& out) noexcept {
  last_command_ = out.command;
  last_command_time_s_ = time_s;
  out.reference = reference_;
  out.error_rad.resize(num_joints_);  // fixed capacity: no allocation
  for (int j = 0; j < num_joints_; ++j) {
    out.error_rad[j] = std::isfinite(position_rad[j])
                           ? joint_difference(position_rad[j], reference_.position_rad[j],
                                              continuous_[static_cast<std::size_t>(j)])
                           : std::numeric_limits<double>::quiet_NaN();
  }
  out.mode = mode_;
  out.time_scale = ts.scale;
  out.trajectory_time_s = tau_s_;
  out.goal_id = active_goal_id_;
}

}  // namespace jtac
