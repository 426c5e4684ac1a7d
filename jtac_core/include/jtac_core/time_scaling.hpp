// Run-time speed scaling of trajectory execution (time_scale_percentage).
//
// The requested percentage p ∈ [0, 100] goes through a first-order lag with time constant
// `filter_constant_s` and then a rate limit of 180 percentage points per second; the result
// s = p_filtered / 100 advances trajectory time by dt·s. A first-order lag approaches its target
// monotonically, and the rate limit only slows it, so the scale never overshoots the request.
// Real-time safe.
#pragma once

#include <cmath>

namespace jtac {

/// Current speed scale: s ∈ [0, 1] and its time derivative ṡ [1/s].
struct TimeScale {
  double scale = 1.0;
  double scale_rate_per_s = 0.0;
};

/// First-order-lag, rate-limited speed scale.
class TimeScaler {
 public:
  /// Largest change of the filtered percentage [percentage points / s].
  static constexpr double kMaxRatePercentPerS = 180.0;
  /// Distance to the target [percentage points] below which the filter lands on it exactly.
  static constexpr double kSnapPercent = 1e-6;

  /// Starts at `percent` with no transient (non-real-time or real-time, no allocation).
  void reset(double percent) noexcept {
    filtered_percent_ = clamp_percent(percent);
    target_percent_ = filtered_percent_;
    rate_per_s_ = 0.0;
  }

  /// New requested percentage; values outside [0, 100] are clamped, non-finite ones ignored.
  void set_target_percent(double percent) noexcept {
    if (std::isfinite(percent)) {
      target_percent_ = clamp_percent(percent);
    }
  }

  /// Filter time constant [s]; ignored unless positive and finite (validated upstream).
  void set_filter_constant(double seconds) noexcept {
    if (std::isfinite(seconds) && seconds > 0.0) {
      filter_constant_s_ = seconds;
    }
  }

  /// Advances the filter by dt_s [s] and returns the scale to use for this cycle.
  TimeScale update(double dt_s) noexcept {
    if (!(dt_s > 0.0) || !std::isfinite(dt_s)) {
      return current();
    }
    // Exact discretisation of the lag: the step never exceeds the remaining error.
    const double alpha = 1.0 - std::exp(-dt_s / filter_constant_s_);
    double step = (target_percent_ - filtered_percent_) * alpha;
    const double max_step = kMaxRatePercentPerS * dt_s;
    step = step > max_step ? max_step : (step < -max_step ? -max_step : step);
    // The lag only approaches its target: snap the last 1e-6 points so that 0 % really holds still.
    if (std::abs(target_percent_ - (filtered_percent_ + step)) < kSnapPercent &&
        std::abs(target_percent_ - filtered_percent_) <= max_step) {
      step = target_percent_ - filtered_percent_;
    }
    filtered_percent_ += step;
    rate_per_s_ = step / dt_s / 100.0;
    return current();
  }

  /// The scale as of the last update().
  TimeScale current() const noexcept { return {filtered_percent_ / 100.0, rate_per_s_}; }

  /// The requested percentage.
  double target_percent() const noexcept { return target_percent_; }

 private:
  static double clamp_percent(double p) noexcept { return p < 0.0 ? 0.0 : (p > 100.0 ? 100.0 : p); }

  double filtered_percent_ = 100.0;
  double target_percent_ = 100.0;
  double rate_per_s_ = 0.0;
  double filter_constant_s_ = 0.1;
};

}  // namespace jtac
