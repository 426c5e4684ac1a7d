// Whether one admittance axis, M·ë + D·ė + K·e = F, is stable as jtac integrates it.
//
// Admittance::step integrates every compliant axis with semi-implicit (symplectic) Euler at the
// controller period h (update_rate):
//
//   v[n+1] = v[n] + h·(F − D_eff·v[n] − K·e[n]) / M,     e[n+1] = e[n] + h·v[n+1],
//
// where D_eff = D + joint_damping·M (the joint damping −joint_damping·q̇ reads, mapped through the
// Jacobian, as a Cartesian damping of joint_damping per unit mass). Per axis the state
// x = [e, v] follows x[n+1] = A·x[n] + B·F with, for k = K/M [1/s²] and d = D_eff/M [1/s],
//
//   A = | 1 − h²k   h(1 − hd) |      trace A = 2 − hd − h²k,   det A = 1 − hd.
//       | −hk       1 − hd    |
//
// Its eigenvalues z are the roots of z² − (2 − hd − h²k)·z + (1 − hd). The Jury (Schur) conditions
// for both inside the unit circle are
//
//   p(1) = h²k > 0,   p(−1) = 4 − 2hd − h²k > 0,   |det A| = |1 − hd| < 1,
//
// so for a given mass and damping the stiffness must stay below
//
//   K_max = (4·M − 2·h·D_eff) / h² = (2/h)·(2M/h − D_eff)      [N/m or N·m/rad],
//
// and the (effective) damping below D_max = 2·M/h. Above K_max an eigenvalue leaves the circle
// through z = −1 (an oscillation at the Nyquist frequency, growing every cycle); above D_max one
// does too, whatever the stiffness. Two sets have an eigenvalue exactly on the circle because the
// continuous system itself has a pole on the imaginary axis: K = 0 (a free axis: z = 1, the tool
// stays where it was pushed, the intended hand-guiding behaviour; its other eigenvalue 1 − hd is
// checked) and D_eff = 0 with K > 0 (undamped: |z| = 1, it never stops oscillating; rejected).
//
// The check is about the integrator alone: contact with a stiff environment, the F/T filter's lag
// and the loop's delay are outside it (docs/admittance.md).
//
// Everything here is a pure function: noexcept, no allocation. admittance_stability_message()
// builds text and allocates (goal intake, non-real-time).
#pragma once

#include <cstdint>
#include <string>

namespace jtac {

/// Fraction of the stable range kept free: a set is accepted up to (1 − margin)·K_max and
/// (1 − margin)·D_max. K_max scales as 1/h², so 10 % also keeps a set stable under a sustained
/// period about 5 % longer than nominal.
inline constexpr double kAdmittanceStabilityMargin = 0.1;

/// Below this damping ratio D_eff / (2·√(K·M)) a set is accepted with a warning: a step overshoots
/// by more than 53 % and rings for several periods [-].
inline constexpr double kAdmittanceLowDampingRatio = 0.2;

/// What the check concludes about one axis.
enum class AdmittanceVerdict : std::uint8_t {
  kStable,         ///< accepted
  kLightlyDamped,  ///< accepted with a warning: damping ratio below kAdmittanceLowDampingRatio
  kNearBound,      ///< rejected: stable, but within kAdmittanceStabilityMargin of K_max or D_max
  kUnstable,       ///< rejected: spectral radius ≥ 1 (a free axis's eigenvalue 1 aside)
  kInvalidInput,   ///< M ≤ 0, K or D < 0, a negative joint damping, a period ≤ 0, or not finite
};

/// True for the verdicts a goal is accepted with.
constexpr bool admittance_accepted(AdmittanceVerdict v) noexcept {
  return v == AdmittanceVerdict::kStable || v == AdmittanceVerdict::kLightlyDamped;
}

/// Name of a verdict ("stable", "lightly_damped", "near_bound", "unstable", "invalid_input").
const char* to_string(AdmittanceVerdict v) noexcept;

/// The discrete and continuous figures of one axis. Units: K in [N/m] or [N·m/rad], D in [N·s/m] or
/// [N·m·s/rad], M in [kg] or [kg·m²], as the axis is linear or rotational.
struct AxisStability {
  AdmittanceVerdict verdict = AdmittanceVerdict::kInvalidInput;
  double mass = 0.0;                     ///< M as given
  double stiffness = 0.0;                ///< K as given
  double damping = 0.0;                  ///< D as given (without the joint damping)
  double joint_damping_per_s = 0.0;      ///< as given [1/s]
  double period_s = 0.0;                 ///< h [s]
  bool free_axis = false;                ///< K = 0: the eigenvalue 1 is the continuous system's own
  double spectral_radius = 0.0;          ///< largest |z| of A (1 for a free or undamped axis) [-]
  double max_stiffness = 0.0;            ///< K_max for this M, D, h (≤ 0: no stiffness is stable)
  double max_damping = 0.0;              ///< D_max − joint_damping·M: the largest stable D for M, h
  double natural_frequency_rad_s = 0.0;  ///< √(K/M) [rad/s]
  double damping_ratio = 0.0;            ///< D_eff / (2·√(K·M)) [-]; +inf for a free damped axis
  /// 2 % settling time of the continuous system, ln(50) / (slowest pole's decay rate) [s]; +inf
  /// when it does not return (a free or undamped axis).
  double settling_time_s = 0.0;
  /// The same for the discrete system, ln(50)·h / −ln(spectral radius) [s]; +inf at radius ≥ 1.
  double discrete_settling_time_s = 0.0;
};

/// Checks one axis integrated at period `period_s` [s]. `joint_damping_per_s` [1/s] is the goal's
/// joint damping (it adds joint_damping·M to D). Real-time safe (noexcept, no allocation).
AxisStability check_axis_stability(double mass, double stiffness, double damping, double period_s,
                                   double joint_damping_per_s = 0.0) noexcept;

/// Why a set is rejected or warned about, naming M, K, D, the rate and the largest stable stiffness,
/// for `axis` (0..5 = x y z rx ry rz, for the units); "" for kStable. Allocates (non-real-time).
std::string admittance_stability_message(const AxisStability& s, int axis);

}  // namespace jtac
