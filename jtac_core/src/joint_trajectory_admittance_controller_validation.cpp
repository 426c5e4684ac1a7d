// The composed controller's non-real-time checks: its force/torque parameters and the admittance part
// of a goal (tips, payloads, thresholds, joint damping), including each compliant axis's discrete-time
// stability at the update rate (admittance_stability.hpp). Messages name the action field, tip and axis.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "message_text.hpp"

namespace jtac {

namespace {

using detail::num;

constexpr const char* kAxisNames[6] = {"x", "y", "z", "rx", "ry", "rz"};

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

// Without a sensor a goal may ask for nothing the sensor would serve: "" or what it asks for.
std::string refusal_without_sensor(const JtacGoal& goal) {
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
  bool asks_threshold = !goal.absolute_force_torque_threshold.empty();
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
  return "";
}

// One tip's admittance, payload and threshold into `t` (whose threshold holds the goal's default):
// "" or the rejection naming `field` (the action field of the tip), the axis and the value.
std::string validate_tip(const TipGoal& g, const std::string& field, TipAdmittance& t) {
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
    return field + ".ee_pose_control is not a finite rigid transform (is the orientation a unit quaternion?)";
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
  return "";
}

}  // namespace

std::string JointTrajectoryAdmittanceController::validate_force_torque(const JtacParameters& p) {
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
    if (std::string e = refusal_without_sensor(goal); !e.empty()) {
      return e;
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
    if (std::string e = validate_tip(g, field, out.tips[static_cast<std::size_t>(tip)]); !e.empty()) {
      return e;
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

}  // namespace jtac
