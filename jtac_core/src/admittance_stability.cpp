#include "jtac_core/admittance_stability.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

namespace jtac {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The 2 % band: an envelope e^(−σt) reaches 0.02 after ln(50)/σ.
const double kLn50 = std::log(50.0);

// ln|1 − w| for w ≥ 0, exact near w = 0 (the slow eigenvalue z = 1 − w of a soft or heavily damped
// axis, where 1 − w would lose the digits that decide its settling time).
double log_abs_one_minus(double w) noexcept { return w <= 1.0 ? std::log1p(-w) : std::log(w - 1.0); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

}  // namespace

const char* to_string(AdmittanceVerdict v) noexcept {
  switch (v) {
    case AdmittanceVerdict::kStable:
      return "stable";
    case AdmittanceVerdict::kLightlyDamped:
      return "lightly_damped";
    case AdmittanceVerdict::kNearBound:
      return "near_bound";
    case AdmittanceVerdict::kUnstable:
      return "unstable";
    case AdmittanceVerdict::kInvalidInput:
      return "invalid_input";
  }
  return "?";
}

AxisStability check_axis_stability(double mass, double stiffness, double damping, double period_s,
                                   double joint_damping_per_s) noexcept {
  AxisStability s;
  s.mass = mass;
  s.stiffness = stiffness;
  s.damping = damping;
  s.joint_damping_per_s = joint_damping_per_s;
  s.period_s = period_s;
  const bool finite = std::isfinite(mass) && std::isfinite(stiffness) && std::isfinite(damping) &&
                      std::isfinite(period_s) && std::isfinite(joint_damping_per_s);
  if (!finite || !(mass > 0.0) || !(stiffness >= 0.0) || !(damping >= 0.0) || !(period_s > 0.0) ||
      !(joint_damping_per_s >= 0.0)) {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    s.verdict = AdmittanceVerdict::kInvalidInput;
    s.spectral_radius = s.max_stiffness = s.max_damping = kNaN;
    s.natural_frequency_rad_s = s.damping_ratio = s.settling_time_s = s.discrete_settling_time_s = kNaN;
    return s;
  }
  const double h = period_s;
  const double d = damping / mass + joint_damping_per_s;  // D_eff / M [1/s]
  const double k = stiffness / mass;                      // K / M [1/s²]
  const double hd = h * d;                                // 1 − det A
  const double b = h * h * k;                             // p(1)
  const double p_minus_1 = 4.0 - 2.0 * hd - b;            // p(−1)
  s.free_axis = stiffness == 0.0;
  s.max_stiffness = (4.0 * mass - 2.0 * h * (damping + joint_damping_per_s * mass)) / (h * h);
  s.max_damping = 2.0 * mass / h - joint_damping_per_s * mass;

  // Eigenvalues z = 1 − w: p(1 − w) = w² − (hd + h²k)·w + h²k, the characteristic polynomial about
  // z = 1, whose coefficients carry no cancellation.
  const double a = hd + b;
  const double disc = a * a - 4.0 * b;
  double log_radius = 0.0;
  if (disc < 0.0) {
    // A complex pair: |z|² = det A = 1 − hd (> 0: disc < 0 needs hd < 2√b − b ≤ 1).
    s.spectral_radius = std::sqrt(1.0 - hd);
    log_radius = 0.5 * std::log1p(-hd);
  } else {
    const double w1 = 0.5 * (a + std::sqrt(disc));
    const double w2 = w1 > 0.0 ? b / w1 : 0.0;  // Vieta: w1·w2 = b, without cancellation
    s.spectral_radius = std::max(std::abs(1.0 - w1), std::abs(1.0 - w2));
    log_radius = std::max(log_abs_one_minus(w1), log_abs_one_minus(w2));
  }

  // Continuous figures. Slowest decay rate: d/2 underdamped, the slow real pole's otherwise.
  s.natural_frequency_rad_s = std::sqrt(k);
  double decay_rate_per_s = 0.0;
  if (s.free_axis) {
    s.damping_ratio = d > 0.0 ? kInf : 0.0;
  } else {
    s.damping_ratio = d / (2.0 * s.natural_frequency_rad_s);
    if (d * d < 4.0 * k) {
      decay_rate_per_s = 0.5 * d;
    } else {
      decay_rate_per_s = k / (0.5 * d + std::sqrt(0.25 * d * d - k));  // −(−d/2 + √(d²/4 − k))
    }
  }
  s.settling_time_s = decay_rate_per_s > 0.0 ? kLn50 / decay_rate_per_s : kInf;
  s.discrete_settling_time_s = log_radius < 0.0 ? -kLn50 * h / log_radius : kInf;

  // Verdict from the Jury conditions (exact), not from the rounded radius.
  const bool stable =
      s.free_axis ? (hd > 0.0 && hd < 2.0) : (b > 0.0 && hd > 0.0 && hd < 2.0 && p_minus_1 > 0.0);
  const double keep = 1.0 - kAdmittanceStabilityMargin;
  if (!stable) {
    s.verdict = AdmittanceVerdict::kUnstable;
  } else if (stiffness > keep * s.max_stiffness || hd > keep * 2.0) {
    s.verdict = AdmittanceVerdict::kNearBound;
  } else if (!s.free_axis && s.damping_ratio < kAdmittanceLowDampingRatio) {
    s.verdict = AdmittanceVerdict::kLightlyDamped;
  } else {
    s.verdict = AdmittanceVerdict::kStable;
  }
  return s;
}

std::string admittance_stability_message(const AxisStability& s, int axis) {
  const bool linear = axis < 3;
  const char* k_unit = linear ? " N/m" : " N·m/rad";
  const char* d_unit = linear ? " N·s/m" : " N·m·s/rad";
  const char* m_unit = linear ? " kg" : " kg·m²";
  const double keep = 1.0 - kAdmittanceStabilityMargin;
  const std::string margin = num(100.0 * kAdmittanceStabilityMargin) + " %";
  if (s.verdict == AdmittanceVerdict::kStable) {
    return "";
  }
  if (s.verdict == AdmittanceVerdict::kInvalidInput) {
    return "M = " + num(s.mass) + ", K = " + num(s.stiffness) + ", D = " + num(s.damping) + ", period " +
           num(s.period_s) + " s: the check needs finite values, M > 0, K and D >= 0, a period > 0";
  }
  std::string set = "M = " + num(s.mass) + m_unit + ", K = " + num(s.stiffness) + k_unit +
                    ", D = " + num(s.damping) + d_unit;
  if (s.joint_damping_per_s > 0.0) {
    set += " (+ joint_damping " + num(s.joint_damping_per_s) + "/s · M)";
  }
  set += " at " + num(1.0 / s.period_s) + " Hz";
  const std::string bound = "the largest stable stiffness for this mass and damping at this rate is " +
                            num(s.max_stiffness) + k_unit + " (accepted up to " +
                            num(keep * s.max_stiffness) + k_unit + ", a " + margin + " margin)";
  const std::string damping_bound =
      "no stiffness is stable with this mass and damping at this rate: D must stay "
      "below " +
      num(s.max_damping) + d_unit + " (accepted up to " + num(keep * s.max_damping) + d_unit +
      "), or M must grow";
  // The damping bound decides when no stiffness is stable, or when h·d_eff alone is past the margin.
  const double hd = s.period_s * (s.damping / s.mass + s.joint_damping_per_s);
  const bool damping_limited = s.max_stiffness <= 0.0 || hd > 2.0 * keep;
  switch (s.verdict) {
    case AdmittanceVerdict::kUnstable: {
      const double d_eff = s.damping + s.joint_damping_per_s * s.mass;
      if (d_eff == 0.0) {
        return set + (s.free_axis
                          ? " has neither stiffness nor damping: a push leaves the axis drifting without "
                            "end (spectral radius 1); give it a damping"
                          : " is undamped: spectral radius 1, it never stops oscillating; give it a "
                            "damping (critical: 2·√(K·M) = " +
                                num(2.0 * std::sqrt(s.stiffness * s.mass)) + d_unit + ")");
      }
      return set + " is unstable as jtac integrates it (semi-implicit Euler, spectral radius " +
             num(s.spectral_radius) + " >= 1): " + (damping_limited ? damping_bound : bound);
    }
    case AdmittanceVerdict::kNearBound:
      return set + " is stable (spectral radius " + num(s.spectral_radius) + ") but within the " + margin +
             " margin of the stability bound: " + (damping_limited ? damping_bound : bound);
    case AdmittanceVerdict::kLightlyDamped: {
      const double z = s.damping_ratio;
      const double overshoot = 100.0 * std::exp(-z * std::numbers::pi / std::sqrt(1.0 - z * z));
      return set + ": damping ratio " + num(z) + " < " + num(kAdmittanceLowDampingRatio) +
             ", a step overshoots by " + num(overshoot) + " % and rings at " +
             num(s.natural_frequency_rad_s / (2.0 * std::numbers::pi)) + " Hz for about " +
             num(s.settling_time_s) + " s (accepted)";
    }
    default:
      return "";
  }
}

}  // namespace jtac
