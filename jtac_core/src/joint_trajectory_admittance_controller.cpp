// The composed controller (trajectory engine + F/T pipeline + admittance) and its cycle.
// Length: over 600 lines because configure-time validation, goal intake with its admittance checks and
// the real-time cycle share the preallocated state of one class; the parts are in the engine's,
// the admittance's and the signal processing's own files.
#include "jtac_core/joint_trajectory_admittance_controller.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>

namespace jtac {

namespace {

constexpr const char* kAxisNames[6] = {"x", "y", "z", "rx", "ry", "rz"};

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

// The action field that carries tip i's parameters.
std::string tip_field(std::size_t i) {
  return i == 0 ? std::string("admittance_parameters") : "additional_tips[" + std::to_string(i - 1) + "]";
}

std::string check_threshold(const std::vector<double>& values, const std::string& field) {
  if (values.empty()) {
    return "";
  }
  if (values.size() != 6) {
    return field + " has " + std::to_string(values.size()) +
           " values, expected 6 [Fx Fy Fz Tx Ty Tz] or none";
  }
  constexpr const char* kWrenchAxes[6] = {"Fx", "Fy", "Fz", "Tx", "Ty", "Tz"};
  for (std::size_t a = 0; a < 6; ++a) {
    if (!(values[a] > 0.0)) {
      return field + "[" + std::to_string(a) + "] (" + kWrenchAxes[a] + ") = " + num(values[a]) +
             ": must be > 0";
    }
  }
  return "";
}

std::string validate_force_torque(const JtacParameters& p) {
  if (!(std::isfinite(p.ft_cutoff_frequency_ratio) && p.ft_cutoff_frequency_ratio > 0.0)) {
    return "ft_cutoff_frequency_ratio = " + num(p.ft_cutoff_frequency_ratio) + ": must be finite and > 0";
  }
  if (!(std::isfinite(p.ft_force_deadband_N) && p.ft_force_deadband_N >= 0.0)) {
    return "ft_force_deadband = " + num(p.ft_force_deadband_N) + ": must be finite and >= 0";
  }
  if (!(std::isfinite(p.ft_torque_deadband_Nm) && p.ft_torque_deadband_Nm >= 0.0)) {
    return "ft_torque_deadband = " + num(p.ft_torque_deadband_Nm) + ": must be finite and >= 0";
  }
  const std::vector<double> threshold(p.default_absolute_force_torque_threshold.data(),
                                      p.default_absolute_force_torque_threshold.data() + 6);
  if (std::string e = check_threshold(threshold, "default_absolute_force_torque_threshold"); !e.empty()) {
    return e;
  }
  if (!p.gravity_base_m_s2.allFinite()) {
    return "gravity_vector must be finite";
  }
  if (!(std::isfinite(p.jacobian_damping) && p.jacobian_damping >= 0.0)) {
    return "jacobian_damping = " + num(p.jacobian_damping) + ": must be finite and >= 0";
  }
  if (p.zero_fts_num_samples < 1) {
    return "zero_fts_num_samples = " + std::to_string(p.zero_fts_num_samples) + ": must be >= 1";
  }
  return "";
}

}  // namespace

void JointTrajectoryAdmittanceController::configure(const JtacConfig& config,
                                                    const JtacParameters& parameters) {
  if (std::string e = validate_force_torque(parameters); !e.empty()) {
    throw std::invalid_argument(e);
  }
  if (!(std::isfinite(config.update_rate_hz) && config.update_rate_hz > 0.0)) {
    throw std::invalid_argument("update_rate = " + num(config.update_rate_hz) +
                                " Hz: must be finite and > 0");
  }
  trajectory_.configure(config.trajectory, parameters.trajectory);
  has_sensor_ = config.has_force_torque_sensor;
  period_s_ = 1.0 / config.update_rate_hz;
  check_stability_ = config.check_admittance_stability;
  num_tips_ = static_cast<int>(config.tips.size());
  if (num_tips_ > kMaxTips) {
    throw std::invalid_argument("ee_frames: " + std::to_string(num_tips_) + " tips; at most " +
                                std::to_string(kMaxTips));
  }
  if (has_sensor_ && num_tips_ == 0) {
    throw std::invalid_argument("ft_sensor_name is set but no sensor_frames / ee_frames are configured");
  }
  ee_frame_names_.clear();
  sensor_frame_names_.clear();
  for (const auto& tip : config.tips) {
    ee_frame_names_.push_back(tip.ee_frame);
    sensor_frame_names_.push_back(tip.sensor_frame);
  }
  if (has_sensor_) {
    kinematics_.configure(config.urdf_xml, config.base_frame, config.trajectory.joint_names);
    const JointVector q_zero = JointVector::Zero(kinematics_.num_joints());
    for (int k = 0; k < num_tips_; ++k) {
      const auto i = static_cast<std::size_t>(k);
      sensor_frames_[i] = kinematics_.frame_index(config.tips[i].sensor_frame);
      ee_frames_[i] = kinematics_.frame_index(config.tips[i].ee_frame);
      // The sensor and the end effector sit on the same rigid link: their relative pose is fixed.
      Eigen::Isometry3d T_base_sensor;
      Eigen::Isometry3d T_base_ee;
      kinematics_.forward(q_zero, sensor_frames_[i], T_base_sensor);
      kinematics_.forward(q_zero, ee_frames_[i], T_base_ee);
      T_sensor_ee_[i] = T_base_sensor.inverse() * T_base_ee;
    }
    admittance_.configure(&kinematics_, ee_frames_, num_tips_);
  }
  for (auto& p : parameters_.buffers()) {
    p = parameters;
  }
  params_nonrt_ = parameters;
  params_ = parameters;
  for (auto& flag : tare_requested_) {
    flag.store(false);
  }
  previous_reference_rad_.setZero(static_cast<int>(config.trajectory.joint_names.size()));
  have_reference_ = false;
  last_goal_id_ = 0;
  apply_goal(nullptr);
  for (auto& pipeline : pipelines_) {
    pipeline = ForceTorquePipeline{};  // a reconfigure starts without the old tare or filter state
  }
  apply_force_torque_parameters();
  for (int k = 0; k < num_tips_; ++k) {
    pipelines_[static_cast<std::size_t>(k)].reset(Vector6::Zero());
  }
  goal_active_.store(false, std::memory_order_release);
  last_mode_ = ControllerMode::kInactive;
}

std::string JointTrajectoryAdmittanceController::set_parameters(const JtacParameters& parameters) {
  if (std::string e = validate_force_torque(parameters); !e.empty()) {
    return e;
  }
  if (std::string e = trajectory_.set_parameters(parameters.trajectory); !e.empty()) {
    return e;
  }
  params_nonrt_ = parameters;
  parameters_.write_buffer() = parameters;
  parameters_.publish();
  return "";
}

std::string JointTrajectoryAdmittanceController::validate_admittance(const JtacGoal& goal,
                                                                     AdmittanceGoal& out,
                                                                     std::string& warning) const {
  out = AdmittanceGoal{};
  out.num_tips = num_tips_;
  out.gravity_base_m_s2 = params_nonrt_.gravity_base_m_s2;
  const std::vector<double>& goal_threshold = goal.absolute_force_torque_threshold;
  if (std::string e = check_threshold(goal_threshold, "absolute_force_torque_threshold"); !e.empty()) {
    return e;
  }
  if (!(std::isfinite(goal.joint_damping_per_s) && goal.joint_damping_per_s >= 0.0)) {
    return tip_field(0) + ".joint_damping = " + num(goal.joint_damping_per_s) + ": must be finite and >= 0";
  }
  out.joint_damping_per_s = goal.joint_damping_per_s;
  Vector6 default_threshold = params_nonrt_.default_absolute_force_torque_threshold;
  if (!goal_threshold.empty()) {
    default_threshold = Eigen::Map<const Vector6>(goal_threshold.data());
  }
  for (auto& tip : out.tips) {
    tip.threshold = default_threshold;
  }
  if (!has_sensor_) {
    const bool asks_compliance = [&] {
      for (const auto& t : goal.tips) {
        for (bool s : t.selected_axes) {
          if (s) {
            return true;
          }
        }
      }
      return false;
    }();
    bool asks_threshold = !goal_threshold.empty();
    bool asks_payload = false;
    for (const auto& t : goal.tips) {
      asks_threshold = asks_threshold || !t.absolute_force_torque_threshold.empty();
      asks_payload = asks_payload || t.end_effector_mass_kg != 0.0;
    }
    if (asks_compliance || asks_threshold || asks_payload) {
      return std::string(
                 "no force/torque sensor is configured (ft_sensor_name is empty): this controller cannot "
                 "honour ") +
             (asks_compliance  ? "selected_axes (admittance)"
              : asks_threshold ? "a force/torque threshold"
                               : "an end_effector_mass") +
             "; send the goal without it or configure a sensor";
    }
    out.num_tips = 0;
    return "";
  }
  if (goal.tips.size() > static_cast<std::size_t>(num_tips_)) {
    return "admittance: " + std::to_string(goal.tips.size()) + " tips given, this controller has " +
           std::to_string(num_tips_) + " (ee_frames)";
  }
  std::array<bool, kMaxTips> seen{};
  for (std::size_t i = 0; i < goal.tips.size(); ++i) {
    const TipGoal& g = goal.tips[i];
    const std::string field = tip_field(i);
    int tip = static_cast<int>(i);
    if (!g.end_effector_frame.empty()) {
      tip = -1;
      for (int k = 0; k < num_tips_; ++k) {
        if (ee_frame_names_[static_cast<std::size_t>(k)] == g.end_effector_frame) {
          tip = k;
        }
      }
      if (tip < 0) {
        std::string known;
        for (const auto& name : ee_frame_names_) {
          known += (known.empty() ? "" : ", ") + name;
        }
        return field + ".end_effector_frame = '" + g.end_effector_frame + "' is not one of the ee_frames [" +
               known + "]";
      }
    }
    if (seen[static_cast<std::size_t>(tip)]) {
      return field + " names tip '" + ee_frame_names_[static_cast<std::size_t>(tip)] + "' a second time";
    }
    seen[static_cast<std::size_t>(tip)] = true;
    TipAdmittance& t = out.tips[static_cast<std::size_t>(tip)];
    const std::pair<const std::vector<double>*, const char*> vectors[] = {
        {&g.mass, "mass"}, {&g.stiffness, "stiffness"}, {&g.damping, "damping"}};
    for (const auto& [values, name] : vectors) {
      if (!values->empty() && values->size() != 6) {
        return field + "." + name + " has " + std::to_string(values->size()) +
               " values, expected 6 [x y z rx ry rz]";
      }
      for (std::size_t a = 0; a < values->size(); ++a) {
        if (!(std::isfinite((*values)[a]) && (*values)[a] >= 0.0)) {
          return field + "." + name + "[" + std::to_string(a) + "] (" + kAxisNames[a] +
                 ") = " + num((*values)[a]) + ": must be finite and >= 0";
        }
      }
    }
    if (!g.selected_axes.empty() && g.selected_axes.size() != 6) {
      return field + ".selected_axes has " + std::to_string(g.selected_axes.size()) +
             " values, expected 6 [x y z rx ry rz]";
    }
    for (std::size_t a = 0; a < g.selected_axes.size(); ++a) {
      t.selected[a] = g.selected_axes[a];
      if (!g.selected_axes[a]) {
        continue;
      }
      if (g.mass.empty() || !(g.mass[a] > 0.0)) {
        return field + ".mass[" + std::to_string(a) + "] (" + kAxisNames[a] +
               ") = " + (g.mass.empty() ? std::string("missing") : num(g.mass[a])) +
               ": must be > 0 on a selected axis";
      }
    }
    for (int a = 0; a < 6; ++a) {
      const auto k = static_cast<std::size_t>(a);
      t.mass[a] = g.mass.empty() ? 1.0 : g.mass[k];
      t.stiffness[a] = g.stiffness.empty() ? 0.0 : g.stiffness[k];
      t.damping[a] = g.damping.empty() ? 0.0 : g.damping[k];
    }
    const Eigen::Matrix3d R = g.T_ee_control.linear();
    if (!g.T_ee_control.matrix().allFinite() ||
        (R.transpose() * R - Eigen::Matrix3d::Identity()).norm() > 1e-6) {
      return field +
             ".ee_pose_control is not a finite rigid transform (is the orientation a unit quaternion?)";
    }
    t.T_ee_control = g.T_ee_control;
    if (!(std::isfinite(g.end_effector_mass_kg) && g.end_effector_mass_kg >= 0.0)) {
      return field + ".end_effector_mass = " + num(g.end_effector_mass_kg) + ": must be finite and >= 0";
    }
    t.payload_mass_kg = g.end_effector_mass_kg;
    if (g.end_effector_mass_kg > 0.0) {
      if (g.end_effector_cog_m.size() != 3) {
        return field + ".end_effector_cog has " + std::to_string(g.end_effector_cog_m.size()) +
               " values, expected 3 (x y z in the ee frame)";
      }
      for (std::size_t a = 0; a < 3; ++a) {
        if (!std::isfinite(g.end_effector_cog_m[a])) {
          return field + ".end_effector_cog[" + std::to_string(a) + "] = " + num(g.end_effector_cog_m[a]) +
                 ": must be finite";
        }
      }
      t.payload_cog_ee_m = Eigen::Map<const Eigen::Vector3d>(g.end_effector_cog_m.data());
    }
    if (std::string e =
            check_threshold(g.absolute_force_torque_threshold, field + ".absolute_force_torque_threshold");
        !e.empty()) {
      return e;
    }
    if (!g.absolute_force_torque_threshold.empty()) {
      t.threshold = Eigen::Map<const Vector6>(g.absolute_force_torque_threshold.data());
    }
  }
  return check_stability_ ? check_stability(goal, out, warning) : "";
}

std::string JointTrajectoryAdmittanceController::check_stability(const JtacGoal& goal,
                                                                 const AdmittanceGoal& out,
                                                                 std::string& warning) const {
  const double h = period_s_;
  const double jd = out.joint_damping_per_s;
  // The spring that holds every unselected axis (unit mass, critically damped) meets the joint
  // damping too: a joint damping large for the rate destabilises it.
  constexpr double kHoldOmega = 2.0 * std::numbers::pi * Admittance::kHoldFrequencyHz;  // [rad/s]
  const AxisStability hold = check_axis_stability(1.0, kHoldOmega * kHoldOmega, 2.0 * kHoldOmega, h, jd);
  if (!admittance_accepted(hold.verdict)) {
    // Largest joint damping that keeps the hold spring inside the margin: h·d ≤ 2·keep and
    // K ≤ keep·K_max, with d = 2ω + jd.
    const double keep = 1.0 - kAdmittanceStabilityMargin;
    const double by_damping = 2.0 * keep / h - 2.0 * kHoldOmega;
    const double by_stiffness = (4.0 - h * h * kHoldOmega * kHoldOmega / keep) / (2.0 * h) - 2.0 * kHoldOmega;
    return tip_field(0) + ".joint_damping = " + num(jd) + "/s at " + num(1.0 / h) +
           " Hz makes the spring that holds the unselected axes (" + num(Admittance::kHoldFrequencyHz) +
           " Hz, critically damped) " + to_string(hold.verdict) + " (spectral radius " +
           num(hold.spectral_radius) + "): joint_damping must stay at or below " +
           num(std::min(by_damping, by_stiffness)) + "/s at this rate";
  }
  for (std::size_t i = 0; i < goal.tips.size(); ++i) {
    // The tip this entry addresses (validate_admittance checked the frame name).
    int tip = static_cast<int>(i);
    for (int k = 0; k < num_tips_; ++k) {
      if (!goal.tips[i].end_effector_frame.empty() &&
          ee_frame_names_[static_cast<std::size_t>(k)] == goal.tips[i].end_effector_frame) {
        tip = k;
      }
    }
    const TipAdmittance& t = out.tips[static_cast<std::size_t>(tip)];
    const std::string where =
        tip_field(i) + " (tip '" + ee_frame_names_[static_cast<std::size_t>(tip)] + "') ";
    // Warnings of axes with the same set read once: "axes x y z: ...".
    std::string axes;
    std::string text;
    int count = 0;
    const auto flush = [&] {
      if (count > 0) {
        if (!warning.empty()) {
          warning += "; ";
        }
        warning += where;
        warning += count > 1 ? "axes " : "axis ";
        warning += axes;
        warning += ": ";
        warning += text;
      }
      axes.clear();
      count = 0;
    };
    for (int a = 0; a < 6; ++a) {
      if (!t.selected[static_cast<std::size_t>(a)]) {
        continue;
      }
      const AxisStability s = check_axis_stability(t.mass[a], t.stiffness[a], t.damping[a], h, jd);
      if (s.verdict == AdmittanceVerdict::kStable) {
        continue;
      }
      const std::string message = admittance_stability_message(s, a);
      if (!admittance_accepted(s.verdict)) {
        return where + "axis " + kAxisNames[a] + ": " + message;
      }
      if (count > 0 && message != text) {
        flush();
      }
      if (count > 0) {
        axes += ' ';
      }
      axes += kAxisNames[a];
      text = message;
      ++count;
    }
    flush();
  }
  return "";
}

SubmitResult JointTrajectoryAdmittanceController::submit_goal(const JtacGoal& goal, double now_s) {
  AdmittanceGoal admittance;
  std::string warning;
  if (std::string e = validate_admittance(goal, admittance, warning); !e.empty()) {
    SubmitResult r;
    r.code = ResultCode::kInvalidGoal;
    r.message = std::move(e);
    return r;
  }
  SubmitResult r = trajectory_.submit_goal(goal.trajectory, now_s, &admittance);
  if (r.code == ResultCode::kSuccessful && !r.busy) {
    r.warning = std::move(warning);
  }
  return r;
}

std::string JointTrajectoryAdmittanceController::request_zero_fts(int tip) {
  if (!has_sensor_) {
    return "no force/torque sensor is configured (ft_sensor_name is empty)";
  }
  if (tip < 0 || tip >= num_tips_) {
    return "no sensor for tip " + std::to_string(tip);
  }
  if (goal_active_.load(std::memory_order_acquire)) {
    return "tare refused: a goal is executing; zero the sensor while the arm is idle and unloaded";
  }
  if (external_active_.load(std::memory_order_acquire)) {
    return "tare refused: a stream with admittance is open; zero the sensor before opening it, with the "
           "arm idle and unloaded";
  }
  if (!trajectory_.is_active()) {
    // Nobody would serve it: the loop runs another control law, or the controller is stopped.
    return "tare refused: the trajectory controller is not running (another control law holds the arm, "
           "or the controller is stopped); zero the sensor while it runs, with the arm idle and unloaded";
  }
  tare_requested_[static_cast<std::size_t>(tip)].store(true, std::memory_order_release);
  return "";
}

void JointTrajectoryAdmittanceController::deactivate(double time_s) noexcept {
  // A tare asked for or being collected will not complete: say so rather than leave it unanswered.
  for (int k = 0; k < num_tips_; ++k) {
    const auto i = static_cast<std::size_t>(k);
    const bool asked = tare_requested_[i].exchange(false, std::memory_order_acq_rel);
    const bool collecting = has_sensor_ && pipelines_[i].tare().collecting();
    if (asked || collecting) {
      if (collecting) {
        pipelines_[i].cancel_tare();
      }
      report_tare(k, EventType::kTareFailed, EventDetail::kDeactivated, 0.0, time_s);
    }
  }
  trajectory_.deactivate(time_s);
  external_active_.store(false, std::memory_order_release);
  last_goal_id_ = 0;
  last_mode_ = ControllerMode::kInactive;
  goal_active_.store(false, std::memory_order_release);
}

void JointTrajectoryAdmittanceController::activate(const JointVector& command_position_rad) noexcept {
  trajectory_.activate(command_position_rad);
  on_activation();
}

void JointTrajectoryAdmittanceController::activate() noexcept {
  trajectory_.activate();
  on_activation();
}

void JointTrajectoryAdmittanceController::on_activation() noexcept {
  handover_stop_ = false;
  external_active_.store(false, std::memory_order_release);
  last_mode_ = ControllerMode::kIdle;
  if (has_sensor_) {
    admittance_.clear();
  }
  have_reference_ = false;
  last_goal_id_ = 0;
  apply_goal(nullptr);
}

void JointTrajectoryAdmittanceController::apply_goal(const AdmittanceGoal* goal) noexcept {
  if (goal != nullptr) {
    current_goal_ = *goal;
  } else {
    current_goal_ = AdmittanceGoal{};
    current_goal_.num_tips = num_tips_;
    for (auto& tip : current_goal_.tips) {
      tip.threshold = params_.default_absolute_force_torque_threshold;
    }
  }
  if (has_sensor_) {
    admittance_.reset(current_goal_);
  }
  apply_force_torque_parameters();
}

void JointTrajectoryAdmittanceController::apply_force_torque_parameters() noexcept {
  for (int k = 0; k < num_tips_; ++k) {
    const auto i = static_cast<std::size_t>(k);
    const TipAdmittance& tip = current_goal_.tips[i];
    ForceTorqueParameters p;
    p.cutoff_ratio = params_.ft_cutoff_frequency_ratio;
    p.force_deadband_N = params_.ft_force_deadband_N;
    p.torque_deadband_Nm = params_.ft_torque_deadband_Nm;
    p.threshold = tip.threshold;
    p.payload_mass_kg = tip.payload_mass_kg;
    p.payload_cog_ee_m = tip.payload_cog_ee_m;
    p.gravity_base_m_s2 = current_goal_.gravity_base_m_s2;
    p.T_sensor_ee = T_sensor_ee_[i];
    p.T_sensor_control = T_sensor_ee_[i] * tip.T_ee_control;
    pipelines_[i].configure(p);
  }
}

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
  if (has_sensor_) {
    // Also without compliance: the springs bring back an offset an earlier goal left.
    if (tracking && have_reference_ && !seams_.stop_requested) {
      step_admittance(period_s);
    }
    seams_.joint_offset_rad = &admittance_.offset();
  }
  const UpdateStatus status =
      trajectory_.update(time_s, period_s, position_rad, velocity_rad_s, seams_, out.trajectory);
  if (out.trajectory.goal_id != last_goal_id_) {
    last_goal_id_ = out.trajectory.goal_id;
    const PreparedGoal* goal = trajectory_.active_goal();
    apply_goal(last_goal_id_ != 0 && goal != nullptr ? &goal->admittance : nullptr);
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
