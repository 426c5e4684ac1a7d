// Polynomial interpolation of one joint over one trajectory segment.
//
// The segment's order follows what both end points provide, as in ros2_controllers' JTC:
// positions only -> linear, + velocities -> cubic (C1), + accelerations -> quintic (C2).
// Pure functions, real-time safe: no allocation, no exceptions.
#pragma once

namespace jtac {

/// Order of the polynomial across one segment.
enum class SegmentKind {
  kLinear,  ///< positions only: constant velocity, zero acceleration
  kCubic,   ///< positions + velocities at both ends
  kQuintic  ///< positions + velocities + accelerations at both ends
};

/// Position [rad], velocity [rad/s] and acceleration [rad/s²] of one joint at one instant.
struct ScalarSample {
  double position = 0.0;
  double velocity = 0.0;
  double acceleration = 0.0;
};

/// The kind a segment gets from what its two end points carry.
constexpr SegmentKind segment_kind(bool both_have_velocities, bool both_have_accelerations) noexcept {
  if (both_have_velocities && both_have_accelerations) {
    return SegmentKind::kQuintic;
  }
  return both_have_velocities ? SegmentKind::kCubic : SegmentKind::kLinear;
}

/// Samples the polynomial from `start` (at t = 0) to `end` (at t = duration_s) at time t_s.
///
/// t_s is clamped to [0, duration_s]. A segment of zero or negative duration returns `end`.
/// For kLinear the end points' velocities and accelerations are ignored; for kCubic their
/// accelerations are. Velocities and accelerations of the result are derivatives of the
/// polynomial, so a kLinear segment has the constant slope and zero acceleration.
constexpr ScalarSample sample_segment(SegmentKind kind, const ScalarSample& start, const ScalarSample& end,
                                      double duration_s, double t_s) noexcept {
  if (!(duration_s > 0.0)) {
    return end;
  }
  const double t = t_s < 0.0 ? 0.0 : (t_s > duration_s ? duration_s : t_s);
  const double T = duration_s;
  const double p0 = start.position;
  const double p1 = end.position;
  ScalarSample out;
  switch (kind) {
    case SegmentKind::kLinear: {
      const double v = (p1 - p0) / T;
      out.position = p0 + v * t;
      out.velocity = v;
      out.acceleration = 0.0;
      return out;
    }
    case SegmentKind::kCubic: {
      const double v0 = start.velocity;
      const double v1 = end.velocity;
      const double T2 = T * T;
      const double c2 = (3.0 * (p1 - p0) - (2.0 * v0 + v1) * T) / T2;
      const double c3 = (2.0 * (p0 - p1) + (v0 + v1) * T) / (T2 * T);
      out.position = p0 + t * (v0 + t * (c2 + t * c3));
      out.velocity = v0 + t * (2.0 * c2 + 3.0 * c3 * t);
      out.acceleration = 2.0 * c2 + 6.0 * c3 * t;
      return out;
    }
    case SegmentKind::kQuintic: {
      const double v0 = start.velocity;
      const double v1 = end.velocity;
      const double a0 = start.acceleration;
      const double a1 = end.acceleration;
      const double T2 = T * T;
      const double T3 = T2 * T;
      const double T4 = T3 * T;
      const double T5 = T4 * T;
      const double c2 = 0.5 * a0;
      const double c3 = (20.0 * (p1 - p0) - (8.0 * v1 + 12.0 * v0) * T - (3.0 * a0 - a1) * T2) / (2.0 * T3);
      const double c4 =
          (30.0 * (p0 - p1) + (14.0 * v1 + 16.0 * v0) * T + (3.0 * a0 - 2.0 * a1) * T2) / (2.0 * T4);
      const double c5 = (12.0 * (p1 - p0) - 6.0 * (v1 + v0) * T - (a0 - a1) * T2) / (2.0 * T5);
      out.position = p0 + t * (v0 + t * (c2 + t * (c3 + t * (c4 + t * c5))));
      out.velocity = v0 + t * (2.0 * c2 + t * (3.0 * c3 + t * (4.0 * c4 + t * 5.0 * c5)));
      out.acceleration = 2.0 * c2 + t * (6.0 * c3 + t * (12.0 * c4 + t * 20.0 * c5));
      return out;
    }
  }
  return end;
}

/// The largest |velocity| and |acceleration| over part of a segment, and when they occur.
struct SegmentPeaks {
  double velocity = 0.0;       ///< [rad/s]
  double velocity_at_s = 0.0;  ///< segment time of the velocity peak [s]
  double acceleration = 0.0;   ///< [rad/s²]
  double acceleration_at_s = 0.0;
};

/// Peaks of the segment over [from_s, to_s] (clamped to [0, duration_s]). Exact for kLinear and
/// kCubic (the acceleration is linear, so its peak is at an end; the velocity's is at an end or
/// where the acceleration is zero); kQuintic is sampled at 64 instants plus the ends.
constexpr SegmentPeaks segment_peaks(SegmentKind kind, const ScalarSample& start, const ScalarSample& end,
                                     double duration_s, double from_s, double to_s) noexcept {
  SegmentPeaks peaks;
  const auto consider = [&](double t) {
    const ScalarSample s = sample_segment(kind, start, end, duration_s, t);
    const double v = s.velocity < 0.0 ? -s.velocity : s.velocity;
    const double a = s.acceleration < 0.0 ? -s.acceleration : s.acceleration;
    if (v > peaks.velocity) {
      peaks.velocity = v;
      peaks.velocity_at_s = t;
    }
    if (a > peaks.acceleration) {
      peaks.acceleration = a;
      peaks.acceleration_at_s = t;
    }
  };
  const double lo = from_s < 0.0 ? 0.0 : from_s;
  const double hi = to_s > duration_s ? duration_s : to_s;
  consider(lo);
  consider(hi);
  if (kind == SegmentKind::kCubic && duration_s > 0.0) {
    // v(t) = v0 + 2 c2 t + 3 c3 t²: its extremum is where 2 c2 + 6 c3 t = 0.
    const ScalarSample at_start = sample_segment(kind, start, end, duration_s, 0.0);
    const ScalarSample at_end = sample_segment(kind, start, end, duration_s, duration_s);
    const double jerk = (at_end.acceleration - at_start.acceleration) / duration_s;  // 6 c3
    if (jerk != 0.0) {
      const double t = -at_start.acceleration / jerk;
      if (t > lo && t < hi) {
        consider(t);
      }
    }
  } else if (kind == SegmentKind::kQuintic) {
    constexpr int kSamples = 64;
    for (int i = 1; i < kSamples; ++i) {
      consider(lo + (hi - lo) * static_cast<double>(i) / kSamples);
    }
  }
  return peaks;
}

}  // namespace jtac
