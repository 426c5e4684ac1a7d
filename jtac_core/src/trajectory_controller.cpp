#include "jtac_core/trajectory_controller.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "jtac_core/tolerances.hpp"

namespace jtac {

namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Positive: finite and > 0, or +inf ("no limit").
bool positive_or_inf(double v) noexcept { return v > 0.0; }  // NaN compares false

bool in_motion_mode(ControllerMode m) noexcept {
  return m == ControllerMode::kWaiting || m == ControllerMode::kExecuting || m == ControllerMode::kSettling;
}

}  // namespace

// ============================================================================ non-real-time side

void TrajectoryController::configure(const ControllerConfig& config, const ControllerParameters& parameters) {
  const auto n = config.joint_names.size();
  if (n == 0) {
    throw std::invalid_argument("joints: no joints configured");
  }
  if (n > static_cast<std::size_t>(kMaxJoints)) {
    throw std::invalid_argument("joints: " + std::to_string(n) + " joints exceed the capacity of " +
                                std::to_string(kMaxJoints));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (config.joint_names[i].empty()) {
      throw std::invalid_argument("joints[" + std::to_string(i) + "] is empty");
    }
    for (std::size_t k = 0; k < i; ++k) {
      if (config.joint_names[k] == config.joint_names[i]) {
        throw std::invalid_argument("joints[" + std::to_string(i) + "] = " + quoted(config.joint_names[i]) +
                                    " duplicates joints[" + std::to_string(k) + "]");
      }
    }
  }
  std::vector<bool> continuous(n, false);
  for (const auto& name : config.continuous_joints) {
    bool found = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (config.joint_names[i] == name) {
        continuous[i] = true;
        found = true;
      }
    }
    if (!found) {
      throw std::invalid_argument("continuous_joints: " + quoted(name) +
                                  " is not one of the controlled joints");
    }
  }
  if (config.max_trajectory_points < 1) {
    throw std::invalid_argument("max_trajectory_points = " + std::to_string(config.max_trajectory_points) +
                                ": must be at least 1");
  }
  const auto check_limits = [&](const std::vector<double>& limits, const char* name) {
    if (limits.empty()) {
      return;
    }
    if (limits.size() != n) {
      throw std::invalid_argument(std::string(name) + " has " + std::to_string(limits.size()) +
                                  " values, expected " + std::to_string(n) + " (one per joint) or none");
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (!(std::isfinite(limits[j]) && limits[j] > 0.0)) {
        throw std::invalid_argument(std::string(name) + "[" + std::to_string(j) + "] (joint " +
                                    quoted(config.joint_names[j]) + ") = " + num(limits[j]) +
                                    ": must be finite and > 0");
      }
    }
  };
  check_limits(config.max_velocity_rad_s, "max_velocity");
  check_limits(config.max_acceleration_rad_s2, "max_acceleration");
  config_ = config;
  num_joints_ = static_cast<int>(n);
  max_velocity_rad_s_ = Eigen::Map<const JointVector>(
      config.max_velocity_rad_s.data(), static_cast<Eigen::Index>(config.max_velocity_rad_s.size()));
  max_acceleration_rad_s2_ =
      Eigen::Map<const JointVector>(config.max_acceleration_rad_s2.data(),
                                    static_cast<Eigen::Index>(config.max_acceleration_rad_s2.size()));
  clock_.reserve();
  continuous_ = continuous;
  if (const std::string error = validate_parameters(parameters); !error.empty()) {
    throw std::invalid_argument(error);
  }
  for (auto& goal : goals_.buffers()) {
    goal.trajectory.reserve(num_joints_, config.max_trajectory_points);
    goal.path_tolerance_rad.setZero(num_joints_);
    goal.goal_tolerance_rad.setZero(num_joints_);
  }
  for (auto& p : parameters_.buffers()) {
    p = parameters;
  }
  params_nonrt_ = parameters;
  params_ = parameters;
  time_scaler_.set_filter_constant(parameters.time_scale_filter_constant_s);
  time_scaler_.reset(parameters.time_scale_percentage);
  scale_prev_ = time_scaler_.current().scale;
  for (auto* state : {&last_command_, &reference_, &hold_, &scratch_, &path_now_, &path_now_traj_}) {
    state->set_zero(num_joints_);
  }
  last_offset_rad_.setZero(num_joints_);
  stop_decel_rad_s2_ = parameters.stop_accelerations_rad_s2;
  stop_.start(hold_.position_rad, hold_.velocity_rad_s, stop_decel_rad_s2_);
  mode_ = ControllerMode::kInactive;
  active_.store(false, std::memory_order_release);
}

std::string TrajectoryController::validate_parameters(const ControllerParameters& p) const {
  const auto check_vector = [&](const JointVector& v, const char* name, bool allow_inf) -> std::string {
    if (v.size() != num_joints_) {
      return std::string(name) + " has " + std::to_string(v.size()) + " values, expected " +
             std::to_string(num_joints_) + " (one per joint)";
    }
    for (int j = 0; j < num_joints_; ++j) {
      const bool ok = allow_inf ? positive_or_inf(v[j]) : (std::isfinite(v[j]) && v[j] > 0.0);
      if (!ok) {
        return std::string(name) + "[" + std::to_string(j) + "] (joint " +
               quoted(config_.joint_names[static_cast<std::size_t>(j)]) + ") = " + num(v[j]) +
               ": must be > 0" + (allow_inf ? "" : " and finite");
      }
    }
    return "";
  };
  for (const auto& error : {check_vector(p.stop_accelerations_rad_s2, "stop_accelerations", false),
                            check_vector(p.default_path_tolerance_rad, "default_path_tolerance", true),
                            check_vector(p.default_goal_tolerance_rad, "default_goal_tolerance", true)}) {
    if (!error.empty()) {
      return error;
    }
  }
  if (!(std::isfinite(p.default_goal_time_tolerance_s) && p.default_goal_time_tolerance_s >= 0.0)) {
    return "default_goal_time_tolerance = " + num(p.default_goal_time_tolerance_s) +
           ": must be finite and >= 0";
  }
  if (!(p.time_scale_percentage >= 0.0 && p.time_scale_percentage <= 100.0)) {
    return "time_scale_percentage = " + num(p.time_scale_percentage) + ": must be in [0, 100]";
  }
  if (!(std::isfinite(p.time_scale_filter_constant_s) && p.time_scale_filter_constant_s > 0.0)) {
    return "time_scale_filter_constant = " + num(p.time_scale_filter_constant_s) + ": must be finite and > 0";
  }
  const std::pair<const char*, double> tolerances[] = {
      {"start_position_tolerance", p.start_position_tolerance_rad},
      {"start_velocity_tolerance", p.start_velocity_tolerance_rad_s},
      {"stitch_position_tolerance", p.stitch_position_tolerance_rad},
      {"stitch_velocity_tolerance", p.stitch_velocity_tolerance_rad_s}};
  for (const auto& [name, value] : tolerances) {
    if (!positive_or_inf(value)) {
      return std::string(name) + " = " + num(value) + ": must be > 0";
    }
  }
  return "";
}

std::string TrajectoryController::set_parameters(const ControllerParameters& parameters) {
  std::lock_guard<std::mutex> lock(submit_mutex_);  // non-RT side only; the RT side never locks
  if (std::string error = validate_parameters(parameters); !error.empty()) {
    return error;
  }
  params_nonrt_ = parameters;
  parameters_.write_buffer() = parameters;
  parameters_.publish();
  return "";
}

SubmitResult TrajectoryController::submit_goal(const TrajectoryGoal& goal, double /*now_s*/,
                                               const AdmittanceGoal* admittance) {
  std::lock_guard<std::mutex> lock(submit_mutex_);
  SubmitResult r;
  const auto reject = [&r](ResultCode code, std::string message) {
    r.code = code;
    r.message = std::move(message);
    return r;
  };
  if (num_joints_ == 0) {
    return reject(ResultCode::kInvalidState, "the controller is not configured");
  }
  if (!active_.load(std::memory_order_acquire)) {
    return reject(ResultCode::kInvalidState, "the controller is not active");
  }
  const auto n = static_cast<std::size_t>(num_joints_);
  const auto& names = goal.joint_names;
  // ---- joints: every controlled joint exactly once, nothing else
  std::vector<int> to_controller(names.size(), -1);
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t k = 0; k < i; ++k) {
      if (names[k] == names[i]) {
        return reject(ResultCode::kInvalidJoints, "trajectory.joint_names[" + std::to_string(i) +
                                                      "] = " + quoted(names[i]) + " duplicates joint_names[" +
                                                      std::to_string(k) + "]");
      }
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (config_.joint_names[j] == names[i]) {
        to_controller[i] = static_cast<int>(j);
      }
    }
    if (to_controller[i] < 0) {
      return reject(ResultCode::kInvalidJoints, "trajectory.joint_names[" + std::to_string(i) + "] = " +
                                                    quoted(names[i]) + " is not a joint of this controller");
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    bool present = false;
    for (const auto& name : names) {
      present = present || name == config_.joint_names[j];
    }
    if (!present) {
      return reject(ResultCode::kInvalidJoints,
                    "trajectory.joint_names is missing joint " + quoted(config_.joint_names[j]) +
                        " (this controller needs every one of its " + std::to_string(n) + " joints)");
    }
  }
  // ---- points
  if (goal.points.empty()) {
    return reject(ResultCode::kInvalidGoal,
                  "trajectory.points is empty: nothing to execute (cancel the active goal to stop the arm)");
  }
  if (goal.points.size() > static_cast<std::size_t>(config_.max_trajectory_points)) {
    return reject(ResultCode::kInvalidGoal, "trajectory.points has " + std::to_string(goal.points.size()) +
                                                " points; this controller holds at most " +
                                                std::to_string(config_.max_trajectory_points) +
                                                " (max_trajectory_points)");
  }
  const auto check_values = [&](const std::vector<double>& values, std::size_t i, const char* field,
                                bool optional) -> std::string {
    const std::string where = "trajectory.points[" + std::to_string(i) + "]." + field;
    if (values.empty() && optional) {
      return "";
    }
    if (values.size() != n) {
      return where + " has " + std::to_string(values.size()) + " values, expected " + std::to_string(n) +
             (optional ? " or none" : "") + " (one per joint_names entry)";
    }
    for (std::size_t k = 0; k < n; ++k) {
      if (!std::isfinite(values[k])) {
        return where + "[" + std::to_string(k) + "] (joint " + quoted(names[k]) + ") is " + num(values[k]);
      }
      if (!(std::abs(values[k]) <= kMaxPointMagnitude)) {
        return where + "[" + std::to_string(k) + "] (joint " + quoted(names[k]) + ") = " + num(values[k]) +
               ": beyond ±" + num(kMaxPointMagnitude) + ", not a value a joint can take";
      }
    }
    return "";
  };
  for (std::size_t i = 0; i < goal.points.size(); ++i) {
    const GoalPoint& pt = goal.points[i];
    for (const auto& error : {check_values(pt.positions_rad, i, "positions", false),
                              check_values(pt.velocities_rad_s, i, "velocities", true),
                              check_values(pt.accelerations_rad_s2, i, "accelerations", true)}) {
      if (!error.empty()) {
        return reject(ResultCode::kInvalidGoal, error);
      }
    }
    if (!pt.accelerations_rad_s2.empty() && pt.velocities_rad_s.empty()) {
      return reject(ResultCode::kInvalidGoal, "trajectory.points[" + std::to_string(i) +
                                                  "].accelerations are given without velocities");
    }
    if (!pt.effort.empty()) {
      return reject(ResultCode::kInvalidGoal,
                    "trajectory.points[" + std::to_string(i) + "].effort has " +
                        std::to_string(pt.effort.size()) +
                        " values: jtac commands joint positions and does not execute efforts; send the "
                        "point without effort");
    }
    const std::string where = "trajectory.points[" + std::to_string(i) + "].time_from_start";
    if (!std::isfinite(pt.time_from_start_s) || pt.time_from_start_s < 0.0) {
      return reject(ResultCode::kInvalidGoal,
                    where + " = " + num(pt.time_from_start_s) + " s: must be finite and >= 0");
    }
    if (i > 0 && !(pt.time_from_start_s >= goal.points[i - 1].time_from_start_s + kMinSegmentS)) {
      return reject(ResultCode::kInvalidGoal, where + " = " + num(pt.time_from_start_s) +
                                                  " s is not at least " + num(kMinSegmentS) +
                                                  " s after points[" + std::to_string(i - 1) + "] (" +
                                                  num(goal.points[i - 1].time_from_start_s) +
                                                  " s): time_from_start must increase strictly");
    }
  }
  // ---- tolerances and timing
  const auto check_tolerance = [&](const std::vector<double>& values, const char* field) -> std::string {
    if (values.empty()) {
      return "";
    }
    if (values.size() != n) {
      return std::string(field) + " has " + std::to_string(values.size()) + " values, expected " +
             std::to_string(n) + " (one per trajectory.joint_names entry) or none";
    }
    for (std::size_t k = 0; k < n; ++k) {
      if (!positive_or_inf(values[k])) {
        return std::string(field) + "[" + std::to_string(k) + "] (joint " + quoted(names[k]) +
               ") = " + num(values[k]) + ": must be > 0";
      }
    }
    return "";
  };
  for (const auto& error : {check_tolerance(goal.path_tolerance_rad, "path_tolerance"),
                            check_tolerance(goal.goal_tolerance_rad, "goal_tolerance")}) {
    if (!error.empty()) {
      return reject(ResultCode::kInvalidGoal, error);
    }
  }
  if (!std::isfinite(goal.goal_time_tolerance_s) || goal.goal_time_tolerance_s < 0.0) {
    return reject(ResultCode::kInvalidGoal,
                  "goal_time_tolerance = " + num(goal.goal_time_tolerance_s) + " s: must be finite and >= 0");
  }
  if (!std::isfinite(goal.start_time_s) || goal.start_time_s < 0.0) {
    return reject(ResultCode::kInvalidGoal,
                  "trajectory.header.stamp = " + num(goal.start_time_s) + " s: must be finite and >= 0");
  }
  // A stamp in the past is judged at the cycle that takes the goal, where the speed scale's history
  // tells how much of the trajectory has elapsed (trajectory_clock.hpp): at a reduced or paused
  // scale a goal stamped long ago may be half done, not old.
  // ---- convert into the writer's preallocated buffer, in controller joint order
  PreparedGoal& out = goals_.write_buffer();
  out.trajectory.clear();
  JointVector positions(num_joints_);
  JointVector velocities(num_joints_);
  JointVector accelerations(num_joints_);
  for (const GoalPoint& pt : goal.points) {
    for (std::size_t k = 0; k < n; ++k) {
      const int j = to_controller[k];
      positions[j] = pt.positions_rad[k];
      velocities[j] = pt.velocities_rad_s.empty() ? 0.0 : pt.velocities_rad_s[k];
      accelerations[j] = pt.accelerations_rad_s2.empty() ? 0.0 : pt.accelerations_rad_s2[k];
    }
    out.trajectory.append(pt.time_from_start_s, positions.data(),
                          pt.velocities_rad_s.empty() ? nullptr : velocities.data(),
                          pt.accelerations_rad_s2.empty() ? nullptr : accelerations.data());
  }
  for (std::size_t k = 0; k < n; ++k) {
    const int j = to_controller[k];
    out.path_tolerance_rad[j] = goal.path_tolerance_rad.empty() ? params_nonrt_.default_path_tolerance_rad[j]
                                                                : goal.path_tolerance_rad[k];
    out.goal_tolerance_rad[j] = goal.goal_tolerance_rad.empty() ? params_nonrt_.default_goal_tolerance_rad[j]
                                                                : goal.goal_tolerance_rad[k];
  }
  out.goal_time_tolerance_s = goal.goal_time_tolerance_s > 0.0 ? goal.goal_time_tolerance_s
                                                               : params_nonrt_.default_goal_time_tolerance_s;
  out.start_time_s = goal.start_time_s;
  out.admittance = admittance != nullptr ? *admittance : AdmittanceGoal{};
  out.goal_id = next_goal_id_;
  if (!goals_.publish()) {
    r.busy = true;
    r.message = "the previous goal has not been taken by the control loop yet; retry after a cycle";
    return r;
  }
  r.goal_id = next_goal_id_++;
  return r;
}

// ============================================================================ real-time side

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
    goals_.decline();
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
    if (stop_outcome_ == EventType::kGoalAborted) {
      emit(EventType::kGoalAborted, stop_detail_, stop_code_, active_goal_id_, stop_joint_, stop_value_,
           stop_limit_, time_s);
    } else {
      emit(EventType::kGoalAborted, EventDetail::kDeactivated, ResultCode::kInvalidState, active_goal_id_, -1,
           0.0, 0.0, time_s);
    }
  }
  if (PreparedGoal* queued = goals_.peek(); queued != nullptr) {
    emit(EventType::kGoalAborted, EventDetail::kDeactivated, ResultCode::kInvalidState, queued->goal_id, -1,
         0.0, 0.0, time_s);
    goals_.decline();
  }
  active_goal_id_ = 0;
  active_goal_ = nullptr;
  stop_has_goal_ = false;
  mode_ = ControllerMode::kInactive;
}

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
    const bool too_fast = check_velocity && !(peaks.velocity <= max_velocity_rad_s_[j]);
    if (!too_fast && !(check_acceleration && !(peaks.acceleration <= max_acceleration_rad_s2_[j]))) {
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

void TrajectoryController::handle_new_goal(double time_s, double period_s, double scale_mid,
                                           const Event& fault) noexcept {
  PreparedGoal* goal = goals_.peek();
  if (goal == nullptr) {
    return;
  }
  const std::uint64_t id = goal->goal_id;
  if (cancel_goal_id_.load(std::memory_order_acquire) == id) {
    emit(EventType::kGoalCanceled, EventDetail::kCanceled, ResultCode::kSuccessful, id, -1, 0.0, 0.0, time_s);
    goals_.decline();
    return;
  }
  if (mode_ == ControllerMode::kStopping) {
    // Stop-and-replan (MoveIt cancels, then sends the replanned goal without waiting for the
    // result): the goal stays pending in the mailbox until the brake ends, at most the stop's
    // predicted duration, and is then taken from rest like any goal arriving while idle: started if
    // it is continuous with the rest position (start tolerances), refused with the jump if not.
    return;
  }
  // The active path at this cycle's time: what the reference would be without the new goal.
  if (mode_ == ControllerMode::kExecuting && active_goal_ != nullptr) {
    active_goal_->trajectory.sample(tau_s_ + period_s * scale_mid, path_now_traj_);
  } else {
    hold(path_now_traj_);
  }
  path_now_ = path_now_traj_;
  scale_to_real_time(path_now_, time_scaler_.current());
  if (fault.detail != EventDetail::kNone) {
    // Caught before the goal moved anything: the goal fails, the active one (if any) brakes for it.
    emit(EventType::kGoalAborted, fault.detail, ResultCode::kInvalidGoal, id, fault.joint, fault.value, 0.0,
         time_s);
    goals_.decline();
    return;
  }
  const double start_s = goal->start_time_s > 0.0 ? goal->start_time_s : time_s;
  // The elapsed prefix in trajectory time: the scale's history since the stamp (trajectory_clock.hpp).
  const double tau_s = time_s > start_s ? clock_.elapsed_since(start_s) : time_s - start_s;
  if (tau_s > goal->trajectory.duration()) {
    emit(EventType::kGoalAborted, EventDetail::kTrajectoryInThePast, ResultCode::kOldHeaderTimestamp, id, -1,
         tau_s - goal->trajectory.duration(), 0.0, time_s);
    goals_.decline();
    return;
  }
  switch (mode_) {
    case ControllerMode::kStopping:  // held above
      return;
    case ControllerMode::kSettling:
      emit(EventType::kGoalAborted, EventDetail::kGoalDuringSettling, ResultCode::kGoalAbortedDueToStitching,
           id, -1, 0.0, 0.0, time_s);
      goals_.decline();
      begin_stop(time_s, EventType::kGoalAborted, ResultCode::kGoalAbortedDueToStitching,
                 EventDetail::kGoalDuringSettling, -1, static_cast<double>(id), 0.0);
      return;
    case ControllerMode::kInactive:
      return;  // taken after activation
    case ControllerMode::kIdle:
    case ControllerMode::kWaiting:
    case ControllerMode::kExecuting:
      break;
  }
  const bool from_motion = active_goal_id_ != 0;
  if (from_motion) {
    if (const int tip = active_goal_->admittance.first_payload_mismatch(goal->admittance); tip >= 0) {
      emit(EventType::kGoalAborted, EventDetail::kStitchPayloadMismatch, ResultCode::kInvalidGoal, id, tip,
           0.0, 0.0, time_s);
      goals_.decline();
      return;
    }
  }
  if (!check_candidate(*goal, time_s, tau_s, from_motion)) {
    goals_.decline();
    return;
  }
  if (from_motion) {
    emit(EventType::kGoalAborted, EventDetail::kReplacedByStitching, ResultCode::kGoalAbortedDueToStitching,
         active_goal_id_, -1, static_cast<double>(id), 0.0, time_s);
  }
  active_goal_ = &goals_.take();
  active_goal_id_ = id;
  tau_s_ = tau_s;
  settle_elapsed_s_ = 0.0;
  settle_window_s_ = active_goal_->goal_time_tolerance_s;
  if (tau_s < 0.0) {
    hold_.position_rad = path_now_.position_rad;
    mode_ = ControllerMode::kWaiting;
  } else {
    mode_ = ControllerMode::kExecuting;
  }
  emit(EventType::kGoalStarted, EventDetail::kNone, ResultCode::kSuccessful, id, -1, start_s, 0.0, time_s);
}

void TrajectoryController::begin_stop(double time_s, EventType outcome, ResultCode code, EventDetail detail,
                                      int joint, double value, double limit) noexcept {
  stop_decel_rad_s2_ = params_.stop_accelerations_rad_s2;
  // Brake the nominal path (the last command without its offset); the offset stays frozen on top
  // while braking, so the reference never carries it and nothing adds it twice afterwards.
  stop_.start(last_command_.position_rad - last_offset_rad_, last_command_.velocity_rad_s,
              stop_decel_rad_s2_);
  stop_start_s_ = last_command_time_s_;
  stop_outcome_ = outcome;
  stop_code_ = code;
  stop_detail_ = detail;
  stop_joint_ = joint;
  stop_value_ = value;
  stop_limit_ = limit;
  stop_has_goal_ = active_goal_id_ != 0;
  mode_ = ControllerMode::kStopping;
  emit(EventType::kStopStarted, detail, code, active_goal_id_, joint, value, limit, time_s, stop_.duration());
}

void TrajectoryController::finish_goal(double time_s, EventType outcome, ResultCode code, EventDetail detail,
                                       int joint, double value, double limit) noexcept {
  if (active_goal_id_ != 0) {
    emit(outcome, detail, code, active_goal_id_, joint, value, limit, time_s);
  }
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
  begin_stop(time_s, EventType::kGoalAborted, ResultCode::kPathToleranceViolated, EventDetail::kPathTolerance,
             joint, deviation, active_goal_->path_tolerance_rad[joint]);
  return true;
}

void TrajectoryController::scale_to_real_time(JointTrajectoryState& state, const TimeScale& ts) noexcept {
  state.acceleration_rad_s2 =
      state.acceleration_rad_s2 * (ts.scale * ts.scale) + state.velocity_rad_s * ts.scale_rate_per_s;
  state.velocity_rad_s *= ts.scale;
}

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
  // ---- measured state: the first non-finite value, if any
  int bad_joint = -1;
  EventDetail bad_detail = EventDetail::kNone;
  double bad_value = 0.0;
  for (int j = 0; j < num_joints_ && bad_joint < 0; ++j) {
    if (!std::isfinite(position_rad[j])) {
      bad_joint = j;
      bad_detail = EventDetail::kNonFiniteMeasuredPosition;
      bad_value = position_rad[j];
    } else if (!std::isfinite(velocity_rad_s[j])) {
      bad_joint = j;
      bad_detail = EventDetail::kNonFiniteMeasuredVelocity;
      bad_value = velocity_rad_s[j];
    }
  }
  if (!command_initialized_) {
    if (bad_joint >= 0) {
      out.command = last_command_;
      return UpdateStatus::kBadInput;
    }
    // Activation: the command reference starts at the commanded position given to activate(), else
    // at the reported one.
    last_command_.set_zero(num_joints_);
    last_command_.position_rad = has_initial_command_ ? initial_command_rad_ : position_rad;
    hold_ = last_command_;
    reference_ = last_command_;
    last_offset_rad_.setZero(num_joints_);
    last_command_time_s_ = time_s - period_s;
    clock_.reset(time_s - period_s, scale_prev_);
    command_initialized_ = true;
  }
  const TimeScale ts = time_scaler_.update(period_s);
  // Trajectory time advances by the scale averaged over the cycle (trapezoidal rule), so the
  // sampled velocity v = dq/dτ·s is the derivative of the sampled position also while s ramps.
  const double scale_mid = 0.5 * (scale_prev_ + ts.scale);
  scale_prev_ = ts.scale;
  clock_.advance(time_s, scale_mid);

  // ---- phase A: requests that change the mode
  Event fault;  // the first non-finite input of this cycle: it refuses a goal arriving now
  if (bad_joint >= 0) {
    fault.detail = bad_detail;
    fault.joint = bad_joint;
    fault.value = bad_value;
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
    begin_stop(time_s, EventType::kGoalCanceled, ResultCode::kSuccessful, EventDetail::kCanceled, -1, 0.0,
               0.0);
  }
  const std::uint64_t goal_before = active_goal_id_;
  handle_new_goal(time_s, period_s, scale_mid, fault);
  const bool taken_this_cycle = active_goal_id_ != goal_before;
  if (seams.stop_requested && in_motion_mode(mode_)) {
    begin_stop(time_s, EventType::kGoalAborted, seams.stop_code, seams.stop_detail, seams.stop_index,
               seams.stop_value, seams.stop_limit);
  }
  if (bad_joint >= 0 && in_motion_mode(mode_)) {
    begin_stop(time_s, EventType::kGoalAborted, ResultCode::kPathToleranceViolated, bad_detail, bad_joint,
               bad_value, 0.0);
  }

  // ---- phase B: advance the active goal
  if (mode_ == ControllerMode::kWaiting && time_s >= active_goal_->start_time_s) {
    tau_s_ = clock_.elapsed_since(active_goal_->start_time_s);
    mode_ = ControllerMode::kExecuting;
  } else if (mode_ == ControllerMode::kExecuting && !taken_this_cycle) {
    tau_s_ += period_s * scale_mid;  // a goal taken now is sampled at its τ = t − start first
  }
  if (mode_ == ControllerMode::kExecuting) {
    const Trajectory& traj = active_goal_->trajectory;
    traj.sample(tau_s_, reference_);
    scale_to_real_time(reference_, ts);
    int joint = -1;
    double deviation = 0.0;
    if (bad_joint < 0 && stop_if_off_path(time_s, position_rad)) {
      // braking for PATH_TOLERANCE_VIOLATED
    } else if (tau_s_ >= traj.duration()) {
      traj.sample(traj.duration(), scratch_);  // the final point with its own velocity
      const bool goal_ok = !first_out_of_tolerance(scratch_.position_rad, position_rad,
                                                   active_goal_->goal_tolerance_rad, joint, deviation);
      const double goal_limit = goal_ok ? 0.0 : active_goal_->goal_tolerance_rad[joint];
      reference_.position_rad = scratch_.position_rad;
      if (scratch_.velocity_rad_s.cwiseAbs().maxCoeff() > 1e-12) {
        // A moving final point: brake from it; the result is decided now and reported at rest.
        begin_stop(time_s, goal_ok ? EventType::kGoalSucceeded : EventType::kGoalAborted,
                   goal_ok ? ResultCode::kSuccessful : ResultCode::kGoalToleranceViolated,
                   goal_ok ? EventDetail::kNone : EventDetail::kGoalTolerance, joint, deviation, goal_limit);
      } else if (goal_ok) {
        finish_goal(time_s, EventType::kGoalSucceeded, ResultCode::kSuccessful, EventDetail::kNone, -1, 0.0,
                    0.0);
      } else if (settle_window_s_ > 0.0) {
        hold_.position_rad = scratch_.position_rad;
        settle_elapsed_s_ = 0.0;
        mode_ = ControllerMode::kSettling;
      } else {
        finish_goal(time_s, EventType::kGoalAborted, ResultCode::kGoalToleranceViolated,
                    EventDetail::kGoalTolerance, joint, deviation, goal_limit);
      }
    }
  } else if (mode_ == ControllerMode::kSettling) {
    // The window runs in trajectory time: it stretches with 1/s.
    settle_elapsed_s_ += period_s * scale_mid;
    hold(reference_);
    int joint = -1;
    double deviation = 0.0;
    if (bad_joint < 0 && stop_if_off_path(time_s, position_rad)) {
      // braking for PATH_TOLERANCE_VIOLATED
    } else if (!first_out_of_tolerance(reference_.position_rad, position_rad,
                                       active_goal_->goal_tolerance_rad, joint, deviation)) {
      finish_goal(time_s, EventType::kGoalSucceeded, ResultCode::kSuccessful, EventDetail::kNone, -1, 0.0,
                  0.0);
    } else if (settle_elapsed_s_ >= settle_window_s_) {
      finish_goal(time_s, EventType::kGoalAborted, ResultCode::kGoalToleranceViolated,
                  EventDetail::kGoalTolerance, joint, deviation, active_goal_->goal_tolerance_rad[joint]);
    }
  }

  // ---- phase C: the reference of this cycle, and the command
  bool command_has_offset = false;
  switch (mode_) {
    case ControllerMode::kIdle:
    case ControllerMode::kWaiting:
    case ControllerMode::kSettling:
      hold(reference_);
      command_has_offset = true;
      break;
    case ControllerMode::kExecuting:
      command_has_offset = true;
      break;
    case ControllerMode::kStopping: {
      const double t_stop = time_s - stop_start_s_;
      stop_.sample(t_stop, reference_.position_rad, reference_.velocity_rad_s,
                   reference_.acceleration_rad_s2);
      if (t_stop >= stop_.duration()) {
        if (stop_has_goal_) {
          emit(stop_outcome_, stop_detail_, stop_code_, active_goal_id_, stop_joint_, stop_value_,
               stop_limit_, time_s);
        }
        stop_has_goal_ = false;
        active_goal_id_ = 0;
        active_goal_ = nullptr;
        hold_.position_rad = reference_.position_rad;
        mode_ = ControllerMode::kIdle;
        command_has_offset = true;  // idle from this cycle on
      }
      break;
    }
    case ControllerMode::kInactive:
      break;
  }
  out.command = reference_;
  UpdateStatus status = UpdateStatus::kOk;
  if (mode_ == ControllerMode::kStopping) {
    out.command.position_rad += last_offset_rad_;  // frozen at the stop's start
  } else if (command_has_offset && seams.joint_offset_rad != nullptr) {
    const JointVector& offset = *seams.joint_offset_rad;
    int bad = offset.size() == num_joints_ ? -1 : 0;
    for (int j = 0; j < num_joints_ && bad < 0; ++j) {
      bad = std::isfinite(offset[j]) ? -1 : j;
    }
    if (bad < 0) {
      out.command.position_rad += offset;
      last_offset_rad_ = offset;
    } else if (in_motion_mode(mode_)) {
      begin_stop(time_s, EventType::kGoalAborted, ResultCode::kAdmittanceError,
                 EventDetail::kNonFiniteJointOffset, bad,
                 offset.size() == num_joints_ ? offset[bad] : std::numeric_limits<double>::quiet_NaN(), 0.0);
      stop_.sample(time_s - stop_start_s_, reference_.position_rad, reference_.velocity_rad_s,
                   reference_.acceleration_rad_s2);
      out.command = reference_;
      out.command.position_rad += last_offset_rad_;
    } else {
      // Idle: nothing to stop; hold with the last finite offset (no event every cycle).
      out.command.position_rad += last_offset_rad_;
    }
  } else if (command_has_offset) {
    last_offset_rad_.setZero(num_joints_);  // no offset supplied this cycle
  }
  // The final guard: nothing non-finite ever leaves; hold the last finite command and brake.
  for (int j = 0; j < num_joints_; ++j) {
    if (!std::isfinite(out.command.position_rad[j]) || !std::isfinite(out.command.velocity_rad_s[j]) ||
        !std::isfinite(out.command.acceleration_rad_s2[j])) {
      const double value = out.command.position_rad[j];
      out.command = last_command_;
      out.command.velocity_rad_s.setZero(num_joints_);
      out.command.acceleration_rad_s2.setZero(num_joints_);
      if (mode_ != ControllerMode::kStopping) {
        begin_stop(time_s, EventType::kGoalAborted, ResultCode::kInvalidGoal, EventDetail::kNonFiniteCommand,
                   j, value, 0.0);
      }
      status = UpdateStatus::kHoldingCommand;
      break;
    }
  }
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
  return status;
}

}  // namespace jtac
