// The trajectory engine on the control thread taking a goal from the mailbox: the checks at the
// cycle that takes it (the stamp against the speed scale's history, stitching continuity, the
// limits of what jtac interpolates itself) and the start of its execution. Real-time safe.
#include <algorithm>
#include <cmath>

#include "jtac_core/tolerances.hpp"
#include "jtac_core/trajectory_controller.hpp"

namespace jtac {

void TrajectoryController::decline_goal(EventDetail detail, ResultCode code, std::uint64_t goal_id, int joint,
                                        double value, double limit, double time_s) noexcept {
  emit(EventType::kGoalAborted, detail, code, goal_id, joint, value, limit, time_s);
  decline_pending();
}

void TrajectoryController::sample_active_path(double period_s, double scale_mid) noexcept {
  if (mode_ == ControllerMode::kExecuting && active_goal_ != nullptr) {
    active_goal_->trajectory.sample(tau_s_ + period_s * scale_mid, path_now_traj_);
  } else {
    hold(path_now_traj_);
  }
  path_now_ = path_now_traj_;
  scale_to_real_time(path_now_, time_scaler_.current());
}

void TrajectoryController::handle_new_goal(double time_s, double period_s, double scale_mid,
                                           const Event& fault, const CycleSeams& seams) noexcept {
  PreparedGoal* goal = goals_.peek();
  if (goal == nullptr) {
    return;
  }
  const std::uint64_t id = goal->goal_id;
  if (cancel_goal_id_.load(std::memory_order_acquire) == id) {
    emit(EventType::kGoalCanceled, EventDetail::kCanceled, ResultCode::kSuccessful, id, -1, 0.0, 0.0, time_s);
    decline_pending();
    return;
  }
  if (mode_ == ControllerMode::kStopping) {
    // Stop-and-replan (MoveIt cancels, then sends the replanned goal without waiting for the
    // result): the goal stays pending in the mailbox until the brake ends, at most the stop's
    // predicted duration, and is then taken from rest like any goal arriving while idle: started if
    // it is continuous with the rest position (start tolerances), refused with the jump if not.
    return;
  }
  sample_active_path(period_s, scale_mid);
  if (fault.detail != EventDetail::kNone) {
    // Caught before the goal moved anything: the goal fails, the active one (if any) brakes for it.
    decline_goal(fault.detail, ResultCode::kInvalidGoal, id, fault.joint, fault.value, 0.0, time_s);
    return;
  }
  const double start_s = goal->start_time_s > 0.0 ? goal->start_time_s : time_s;
  // The elapsed prefix in trajectory time: the scale's history since the stamp (trajectory_clock.hpp).
  const double tau_s = time_s > start_s ? clock_.elapsed_since(start_s) : time_s - start_s;
  if (tau_s > goal->trajectory.duration()) {
    decline_goal(EventDetail::kTrajectoryInThePast, ResultCode::kOldHeaderTimestamp, id, -1,
                 tau_s - goal->trajectory.duration(), 0.0, time_s);
    return;
  }
  switch (mode_) {
    case ControllerMode::kStopping:  // held above
      return;
    case ControllerMode::kSettling:
      decline_goal(EventDetail::kGoalDuringSettling, ResultCode::kGoalAbortedDueToStitching, id, -1, 0.0, 0.0,
                   time_s);
      begin_stop(time_s, {.outcome = EventType::kGoalAborted,
                          .code = ResultCode::kGoalAbortedDueToStitching,
                          .detail = EventDetail::kGoalDuringSettling,
                          .value = static_cast<double>(id)});
      return;
    case ControllerMode::kInactive:
      return;  // taken after activation
    case ControllerMode::kIdle:
    case ControllerMode::kWaiting:
    case ControllerMode::kExecuting:
      break;
  }
  const bool from_motion = active_goal_id_ != 0;
  if (from_motion && seams.stitch_refused_goal_id == id) {
    decline_goal(seams.stitch_refusal_detail, ResultCode::kInvalidGoal, id, seams.stitch_refusal_index, 0.0,
                 0.0, time_s);
    return;
  }
  if (!check_candidate(*goal, time_s, tau_s, from_motion)) {
    decline_pending();
    return;
  }
  if (from_motion) {
    emit(EventType::kGoalAborted, EventDetail::kReplacedByStitching, ResultCode::kGoalAbortedDueToStitching,
         active_goal_id_, -1, static_cast<double>(id), 0.0, time_s);
  }
  take_goal(time_s, id, tau_s, start_s);
}

void TrajectoryController::take_goal(double time_s, std::uint64_t goal_id, double tau_s,
                                     double start_s) noexcept {
  active_goal_ = &take_pending();
  active_goal_id_ = goal_id;
  tau_s_ = tau_s;
  settle_elapsed_s_ = 0.0;
  settle_window_s_ = active_goal_->goal_time_tolerance_s;
  if (tau_s < 0.0) {
    hold_.position_rad = path_now_.position_rad;
    mode_ = ControllerMode::kWaiting;
  } else {
    mode_ = ControllerMode::kExecuting;
  }
  emit(EventType::kGoalStarted, EventDetail::kNone, ResultCode::kSuccessful, goal_id, -1, start_s, 0.0,
       time_s);
}

bool TrajectoryController::check_candidate(PreparedGoal& goal, double time_s, double tau_s,
                                           bool from_motion) noexcept {
  Trajectory& traj = goal.trajectory;
  const double scale = time_scaler_.current().scale;  // already updated for this cycle
  const double t_first = traj.time_from_start(0);
  // Whole-turn alignment of continuous joints to the active path (one offset per goal).
  if (tau_s >= t_first) {
    traj.sample(tau_s, scratch_);
  }
  for (int j = 0; j < num_joints_; ++j) {
    if (!continuous_[static_cast<std::size_t>(j)]) {
      continue;
    }
    const double p = tau_s >= t_first ? scratch_.position_rad[j] : traj.position(0, j);
    const double offset = whole_turn_offset(path_now_.position_rad[j], p);
    if (offset != 0.0) {
      traj.offset_joint(j, offset);
    }
  }
  // The segment before the first point (and a positions-only spline) starts from the active path's
  // state at the stitch time, in trajectory-time derivatives; a future start holds at rest until then.
  scratch_ = path_now_traj_;
  if (tau_s < 0.0) {
    scratch_.velocity_rad_s.setZero(num_joints_);
    scratch_.acceleration_rad_s2.setZero(num_joints_);
  }
  const double start_tau_s = tau_s > 0.0 ? tau_s : 0.0;
  traj.set_start_state(scratch_, start_tau_s);
  if (traj.positions_only()) {
    traj.fit_positions_only_spline();
  }
  // Before its first point the goal follows jtac's own segment from the active command (continuous
  // by construction), and a positions-only goal jtac's own spline: the robot must be able to follow
  // them. The planner's own path is the planner's business.
  const double own_until_s = traj.positions_only() ? traj.duration() : t_first;
  if (start_tau_s < own_until_s && !check_interpolation_limits(goal, time_s, start_tau_s, own_until_s)) {
    return false;
  }
  // Raw continuity at the stitch instant, in real-time units: the replacement sampled at the stitch
  // time against the active path itself. A future start holds still until τ = 0: the jump now is
  // the active path's velocity, and at the start the trajectory at τ = 0.
  traj.sample(start_tau_s, scratch_);
  const double pos_tol =
      from_motion ? params_.stitch_position_tolerance_rad : params_.start_position_tolerance_rad;
  const double vel_tol =
      from_motion ? params_.stitch_velocity_tolerance_rad_s : params_.start_velocity_tolerance_rad_s;
  for (int j = 0; j < num_joints_; ++j) {
    const double dq = std::abs(scratch_.position_rad[j] - path_now_.position_rad[j]);
    if (!(dq <= pos_tol)) {
      emit(EventType::kGoalAborted,
           from_motion ? EventDetail::kStitchPositionJump : EventDetail::kStartPositionJump,
           ResultCode::kInvalidGoal, goal.goal_id, j, dq, pos_tol, time_s);
      return false;
    }
  }
  for (int j = 0; j < num_joints_; ++j) {
    const double dv =
        tau_s < 0.0
            ? std::max(std::abs(path_now_.velocity_rad_s[j]), std::abs(scratch_.velocity_rad_s[j] * scale))
            : std::abs(scratch_.velocity_rad_s[j] * scale - path_now_.velocity_rad_s[j]);
    if (!(dv <= vel_tol)) {
      emit(EventType::kGoalAborted,
           from_motion ? EventDetail::kStitchVelocityJump : EventDetail::kStartVelocityJump,
           ResultCode::kInvalidGoal, goal.goal_id, j, dv, vel_tol, time_s);
      return false;
    }
  }
  return true;
}

bool TrajectoryController::check_interpolation_limits(const PreparedGoal& goal, double time_s,
                                                      double from_tau_s, double to_tau_s) noexcept {
  const bool check_velocity = max_velocity_rad_s_.size() == num_joints_;
  const bool check_acceleration = max_acceleration_rad_s2_.size() == num_joints_;
  if (!check_velocity && !check_acceleration) {
    return true;
  }
  // At full speed (trajectory time): a lower speed scale only slows it down.
  const Trajectory& traj = goal.trajectory;
  const double t_first = traj.time_from_start(0);
  for (int j = 0; j < num_joints_; ++j) {
    const SegmentPeaks peaks = traj.peaks(j, from_tau_s, to_tau_s);
    // A connecting segment is judged only for what it adds to the motion it joins: it may need as
    // much as that motion needs itself (nominal_peaks()), whatever the robot's limits; the nominal
    // motion is the planner's business. A positions-only spline is jtac's own path throughout.
    const SegmentPeaks nominal =
        traj.positions_only() ? SegmentPeaks{} : nominal_peaks(traj, j, from_tau_s, t_first);
    const bool too_fast =
        check_velocity && !(peaks.velocity <= std::max(max_velocity_rad_s_[j], nominal.velocity));
    const bool too_abrupt =
        check_acceleration &&
        !(peaks.acceleration <= std::max(max_acceleration_rad_s2_[j], nominal.acceleration));
    if (!too_fast && !too_abrupt) {
      continue;
    }
    const double at_s = too_fast ? peaks.velocity_at_s : peaks.acceleration_at_s;
    const bool connecting = !traj.positions_only() || at_s < t_first;
    const EventDetail detail =
        too_fast ? (connecting ? EventDetail::kConnectingVelocity : EventDetail::kSplineVelocity)
                 : (connecting ? EventDetail::kConnectingAcceleration : EventDetail::kSplineAcceleration);
    Event e;
    e.type = EventType::kGoalAborted;
    e.detail = detail;
    e.code = ResultCode::kInvalidGoal;
    e.goal_id = goal.goal_id;
    e.joint = j;
    e.value = too_fast ? peaks.velocity : peaks.acceleration;
    e.limit = too_fast ? max_velocity_rad_s_[j] : max_acceleration_rad_s2_[j];
    e.time_s = time_s;
    e.trajectory_time_s = at_s;
    events_.push(e);
    return false;
  }
  return true;
}

SegmentPeaks TrajectoryController::nominal_peaks(const Trajectory& traj, int joint, double from_tau_s,
                                                 double t_first_s) noexcept {
  // What the goal's own path needs where the connecting segment joins it, at full speed: at its first
  // point and over as long a stretch after it as the connection itself lasts (at least the first
  // segment). A segment that only continues the planned path — the first sample of a fast plan a few
  // milliseconds ahead — needs no more than the path does there, and is accepted even where the plan
  // itself exceeds the robot's limits; one that reaches a first point far off in a short time needs
  // far more, and is refused. The state it starts from earns nothing: a stitch from an active path
  // beyond the limits may not carry that motion on through jtac's own segment.
  SegmentPeaks nominal;
  const auto consider = [&](double velocity, double acceleration) {
    nominal.velocity = std::max(nominal.velocity, std::abs(velocity));
    nominal.acceleration = std::max(nominal.acceleration, std::abs(acceleration));
  };
  traj.sample(t_first_s, scratch_);
  consider(scratch_.velocity_rad_s[joint], scratch_.acceleration_rad_s2[joint]);
  const double first_segment_s = traj.size() > 1 ? traj.time_from_start(1) - t_first_s : 0.0;
  const double window_s = std::max(t_first_s - from_tau_s, first_segment_s);
  if (window_s > 0.0 && traj.size() > 1) {
    const SegmentPeaks path = traj.peaks(joint, t_first_s, std::min(t_first_s + window_s, traj.duration()));
    consider(path.velocity, path.acceleration);
  }
  // Rounding: a segment that reproduces the planned path exactly must not be refused by the last bit.
  nominal.velocity *= 1.0 + 1e-9;
  nominal.acceleration *= 1.0 + 1e-9;
  return nominal;
}

}  // namespace jtac
