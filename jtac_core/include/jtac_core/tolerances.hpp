// Joint position differences for tolerance checks and published errors.
//
// An independent continuous joint (no travel limit, feedback that may wrap) uses the shortest
// angular difference, so wrapped feedback never shows a false full-turn error. Bounded revolute and
// mimic-coupled joints keep the raw difference. Real-time safe.
#pragma once

#include <cmath>
#include <numbers>

namespace jtac {

/// Shortest signed angle from `from_rad` to `to_rad`, in [-π, π).
inline double shortest_angular_difference(double from_rad, double to_rad) noexcept {
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  double d = std::fmod(to_rad - from_rad + std::numbers::pi, kTwoPi);
  if (d < 0.0) {
    d += kTwoPi;
  }
  return d - std::numbers::pi;
}

/// to − from: shortest angular difference for a continuous joint, raw difference otherwise.
inline double joint_difference(double from_rad, double to_rad, bool continuous) noexcept {
  return continuous ? shortest_angular_difference(from_rad, to_rad) : to_rad - from_rad;
}

/// The whole-turn offset 2πk [rad] that brings `target_rad` closest to `reference_rad`.
inline double whole_turn_offset(double reference_rad, double target_rad) noexcept {
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  return kTwoPi * std::round((reference_rad - target_rad) / kTwoPi);
}

}  // namespace jtac
