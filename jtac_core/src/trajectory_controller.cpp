// The trajectory engine's non-real-time side: configure(), parameter validation and goal intake
// (submit_goal() checks a goal and converts it into a preallocated mailbox buffer). The control
// thread's side is in trajectory_controller_update.cpp (the cycle) and
// trajectory_controller_intake.cpp (taking a goal from the mailbox).
#include "jtac_core/trajectory_controller.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "message_text.hpp"

namespace jtac {

namespace {

using detail::num;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Positive: finite and > 0, or +inf ("no limit").
bool positive_or_inf(double v) noexcept { return v > 0.0; }  // NaN compares false

}  // namespace

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
                                               const GoalStager& stage) {
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
  out.goal_id = next_goal_id_;
  // Only this (locked) writer sets the pending bit: once free, publish() below cannot fail, so what
  // `stage` staged under this id always has its goal.
  if (goals_.pending() || (stage && !stage(next_goal_id_))) {
    r.busy = true;
    r.message = "the previous goal has not been taken by the control loop yet; retry after a cycle";
    return r;
  }
  goals_.publish();
  r.goal_id = next_goal_id_++;
  return r;
}

}  // namespace jtac
