// The controller clock as seen from the host's monotonic clock, for threads that stamp inputs with
// controller time (a stream's sender) while only the controller thread sees the robot's clock.
//
// The controller clock counts the robot's ticks; it runs at the robot's rate, not the host's: a
// robot drifts against the host, and a simulated one (franka-sim on a loaded host) stretches its
// cycles — 5–15 % slow at a rate that changes from one stretch to the next, with stalls of 1–10 ms.
// The map is a line fitted to one measurement per controller cycle — the host time at which the
// cycle's state arrived (DeviceState::host_receive_ns) against its robot time — by least squares
// with exponential forgetting (time constant 2 s): host time regressed on controller time (the exact
// one), so the arrival jitter (tens of µs, zero mean after its constant part) averages out of the
// rate and the offset. Lost states are missing measurements and change nothing.
//   * A cycle more than 200 µs off the line (a late arrival) counts as 200 µs off in the fit.
//   * A step: when the cycles of the last 3 ms (at least two) all lie more than 250 µs off the line
//     on the same side — the robot stalled, or its rate changed faster than a 2 s fit follows — the
//     line moves at once to their median, keeping its rate (every term of the fit moves with it, so
//     the rate it goes on learning is the robot's between stalls). One late arrival, or the jitter of
//     a link (± 200 µs about the line), never does this. A fit that only bent a little per cycle fell
//     tens of ms behind such a clock (or ahead) and re-seeded every few seconds.
//   * A cycle more than 50 ms off the line (a pause, a new clock), or a controller time that goes
//     back, re-seeds the map; until 20 ms of measurements are in, it is the newest one at rate 1.
// So the map follows the robot within the step threshold and the jitter while the robot runs, and a
// stall of the robot's is in it a few cycles after it ended. The constant part of the arrival latency
// (the transit) shifts every stamp by the same amount, which a stream's delay absorbs.
//
// The smooth map (smooth_controller_time_s) is for stamping samples taken on the host's clock (a
// motion defined in host time, a camera frame): a continuous line whose rate steers towards the map
// above, never steps. A stamp taken through a map that steps by 250 µs is a target placed 250 µs off
// its neighbours: through a curve at 8 ms spacing, a jerk of thousands of rad/s³ at 0.1 rad/s (on
// franka-sim, measured robot side: 2900-4000 rad/s³ and acceleration reflexes under 1 % loss). The
// smooth line runs at the map's average rate over the last second (steps included: the rate the
// robot keeps) plus its distance d to the map over 0.5 s, held within ±10 % of that average and
// changed by at most 0.5 per second: a warp that costs at most v · 0.5 rad/s² and
// v · 500 rad/s³ at speed v [rad/s] (while its rate turns; a stamp of 8 ms spacing moves ≤ 32 µs
// against its neighbours), and lags a step of the robot's clock by a fraction of it for ~1 s. More
// than 50 ms away (a new clock) it jumps.
//
// Threads: update() on the controller thread (noexcept, no allocation, no lock); controller_time_s()
// from any thread: a sequence lock whose readers retry and whose writer never waits.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace jtac::loop {

/// A line host time → controller time that one thread stores and any thread reads: a sequence lock
/// whose readers retry and whose writer never waits.
class PublishedLine {
 public:
  /// The controller time at host time `host_ns` [s]; NaN before the first store().
  double at(std::int64_t host_ns) const noexcept {
    for (;;) {
      const std::uint64_t before = sequence_.load(std::memory_order_acquire);
      const std::int64_t host_ref_ns = host_ref_ns_.load(std::memory_order_relaxed);
      const double ref_s = ref_s_.load(std::memory_order_relaxed);
      const double rate = rate_.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if ((before & 1U) == 0U && sequence_.load(std::memory_order_relaxed) == before) {
        if (host_ref_ns == kUnset) {
          return std::numeric_limits<double>::quiet_NaN();
        }
        return ref_s + rate * static_cast<double>(host_ns - host_ref_ns) * 1e-9;
      }
    }
  }
  /// Controller time per host time [-] (1 before the first store()).
  double rate() const noexcept { return rate_.load(std::memory_order_relaxed); }
  /// The writer thread: controller time `ref_s` [s] at host time `host_ref_ns` [ns], then `rate`.
  void store(double ref_s, std::int64_t host_ref_ns, double rate) noexcept {
    const std::uint64_t s = sequence_.load(std::memory_order_relaxed);
    sequence_.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    host_ref_ns_.store(host_ref_ns, std::memory_order_relaxed);
    ref_s_.store(ref_s, std::memory_order_relaxed);
    rate_.store(rate, std::memory_order_relaxed);
    sequence_.store(s + 2, std::memory_order_release);
  }

 private:
  static constexpr std::int64_t kUnset = std::numeric_limits<std::int64_t>::min();
  std::atomic<std::uint64_t> sequence_{0};  // odd while the writer is between its stores
  std::atomic<std::int64_t> host_ref_ns_{kUnset};
  std::atomic<double> ref_s_{0.0};
  std::atomic<double> rate_{1.0};
};

/// Host monotonic time → controller time (see the top of this file).
class ClockMap {
 public:
  /// `controller_period_s`: the controller's nominal period [s] (one update() per period).
  explicit ClockMap(double controller_period_s = 0.001) noexcept
      : forget_(std::exp(-controller_period_s / kTimeConstantS)),
        step_window_(static_cast<int>(std::clamp(std::lround(kStepWindowS / controller_period_s), 2L,
                                                 static_cast<long>(kMaxStepWindow)))) {}

  /// The host's monotonic clock [ns] (std::chrono::steady_clock: Python's time.monotonic()).
  static std::int64_t host_now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  /// Controller thread: the state for controller time `controller_time_s` [s] arrived at host time
  /// `host_ns` [ns] (or the cycle that used it ran then).
  void update(double controller_time_s, std::int64_t host_ns) noexcept {
    last_host_ns_ = host_ns;
    if (!seeded_ || controller_time_s < last_controller_time_s_) {
      seed(controller_time_s, host_ns);  // the first measurement, or a new clock
    } else if (controller_time_s == last_controller_time_s_) {
      return;  // the same state again: nothing new about the clocks
    }
    last_controller_time_s_ = controller_time_s;
    const double x = controller_time_s - x0_s_;                     // [s]
    const double y = static_cast<double>(host_ns - y0_ns_) * 1e-9;  // [s]
    remember(x, y);
    double y_fit = y;
    if (span_s_ >= kMinSpanS) {
      if (!(std::abs(y - (intercept_s_ + slope_ * x)) <= kReseedS)) {
        seed(controller_time_s, host_ns);  // a pause, or a new clock
        remember(0.0, 0.0);
        publish(controller_time_s, host_ns, 1.0, false);
        return;
      }
      if (const double step_s = persistent_step_s(); step_s != 0.0) {
        // Every term of the fit moves by the step: the same rate, the intercept step_s later.
        sy_ += w_ * step_s;
        sxy_ += sx_ * step_s;
        intercept_s_ += step_s;
      }
      const double residual_s = y - (intercept_s_ + slope_ * x);
      y_fit = intercept_s_ + slope_ * x + std::clamp(residual_s, -kClampS, kClampS);
    }
    w_ = forget_ * w_ + 1.0;
    sx_ = forget_ * sx_ + x;
    sy_ = forget_ * sy_ + y_fit;
    sxx_ = forget_ * sxx_ + x * x;
    sxy_ = forget_ * sxy_ + x * y_fit;
    span_s_ = x;
    const double var = w_ * sxx_ - sx_ * sx_;
    if (span_s_ < kMinSpanS || !(var > 0.0)) {
      publish(controller_time_s, host_ns, 1.0, false);  // too short a baseline for a rate
      return;
    }
    slope_ = (w_ * sxy_ - sx_ * sy_) / var;  // host seconds per controller second
    intercept_s_ = (sy_ - slope_ * sx_) / w_;
    // On the line, the host time of controller time x0: controller = x0 + (host − that) / slope.
    publish(x0_s_, y0_ns_ + static_cast<std::int64_t>(std::llround(intercept_s_ * 1e9)), 1.0 / slope_, true);
  }

  /// Any thread: the controller time at host time `host_ns` on the smooth map (see the top of this
  /// file) [s]; NaN before the first update().
  double smooth_controller_time_s(std::int64_t host_ns) const noexcept { return smooth_.at(host_ns); }

  /// Any thread: the controller time now [s]; NaN before the first update().
  double controller_time_s() const noexcept { return controller_time_s(host_now_ns()); }

  /// Any thread: the controller time at host time `host_ns` [s]; NaN before the first update().
  double controller_time_s(std::int64_t host_ns) const noexcept { return map_.at(host_ns); }

  /// Controller time per host time [-] (1 before the first update()).
  double rate() const noexcept { return map_.rate(); }

 private:
  static constexpr double kTimeConstantS = 2.0;
  static constexpr double kMinSpanS = 0.02;
  static constexpr double kClampS = 200e-6;
  // A step: the cycles of the last kStepWindowS (at least two) all further than kStepS off the line
  // on one side. Over kStepS: the arrival jitter of a loaded host or a jittery link (±200 µs) never
  // puts every cycle of the window on one side by that much while the line runs through its middle.
  // Three cycles at 1 kHz: a host that is late one cycle in 50 is late twice in a row now and then,
  // three times almost never.
  static constexpr double kStepWindowS = 0.003;
  static constexpr int kMaxStepWindow = 4;
  static constexpr double kStepS = 250e-6;
  static constexpr double kReseedS = 0.05;
  // The smooth line: closes its distance to the map at distance / kSmoothCloseS, its rate within
  // ±kSmoothWarp of the map's average rate over the last second (kProgressSamples samples
  // kProgressSpacingNs apart), changed by at most kSmoothRateSlewPerS per second of host time.
  static constexpr double kSmoothCloseS = 0.5;
  static constexpr double kSmoothWarp = 0.1;
  static constexpr double kSmoothRateSlewPerS = 0.5;
  static constexpr int kProgressSamples = 21;  // 50 ms apart: the average over the last second
  static constexpr std::int64_t kProgressSpacingNs = 50'000'000;
  static constexpr std::int64_t kUnset = std::numeric_limits<std::int64_t>::min();

  void seed(double controller_time_s, std::int64_t host_ns) noexcept {
    x0_s_ = controller_time_s;
    y0_ns_ = host_ns;
    w_ = sx_ = sy_ = sxx_ = sxy_ = 0.0;
    span_s_ = 0.0;
    slope_ = 1.0;
    intercept_s_ = 0.0;
    recent_count_ = 0;
    seeded_ = true;
    last_controller_time_s_ = controller_time_s;
  }

  void remember(double x, double y) noexcept {
    recent_x_[recent_next_] = x;
    recent_y_[recent_next_] = y;
    recent_next_ = (recent_next_ + 1) % kMaxStepWindow;
    recent_count_ = std::min(recent_count_ + 1, kMaxStepWindow);
  }

  // How far the line is off the cycles of the step window when they all lie more than kStepS on one
  // side of it: their median residual [s] (host time; > 0: the robot's clock fell behind), so that
  // the line runs through the middle of their jitter again and one late arrival among them does not
  // move it. 0 otherwise, or while the window is not full.
  double persistent_step_s() const noexcept {
    if (recent_count_ < step_window_) {
      return 0.0;
    }
    std::array<double, kMaxStepWindow> residuals_s{};
    for (int k = 0; k < step_window_; ++k) {
      const int i = (recent_next_ + kMaxStepWindow - 1 - k) % kMaxStepWindow;
      residuals_s[k] = recent_y_[i] - (intercept_s_ + slope_ * recent_x_[i]);
    }
    for (int k = 1; k < step_window_; ++k) {  // insertion sort: a handful of values
      for (int j = k; j > 0 && residuals_s[j] < residuals_s[j - 1]; --j) {
        std::swap(residuals_s[j], residuals_s[j - 1]);
      }
    }
    if (!(residuals_s[0] > kStepS) && !(residuals_s[step_window_ - 1] < -kStepS)) {
      return 0.0;
    }
    const int half = step_window_ / 2;
    return step_window_ % 2 == 1 ? residuals_s[half] : 0.5 * (residuals_s[half - 1] + residuals_s[half]);
  }

  // `fitted`: the line has a rate of its own (not the seeding's newest point at rate 1).
  // The map's controller time per host time over the last second (its samples every 50 ms, steps
  // included); the map's own rate until 0.2 s of samples are in.
  double average_progress_rate(std::int64_t h, double map_s, double map_rate) noexcept {
    if (progress_count_ == 0 || h - progress_h_ns_[progress_newest_] >= kProgressSpacingNs) {
      progress_newest_ = (progress_newest_ + 1) % kProgressSamples;
      progress_h_ns_[progress_newest_] = h;
      progress_s_[progress_newest_] = map_s;
      progress_count_ = std::min(progress_count_ + 1, kProgressSamples);
    }
    const int oldest = (progress_newest_ + kProgressSamples - (progress_count_ - 1)) % kProgressSamples;
    const double span_s = static_cast<double>(h - progress_h_ns_[oldest]) * 1e-9;
    if (span_s < 0.2) {
      return map_rate;
    }
    return (map_s - progress_s_[oldest]) / span_s;
  }

  void publish(double ref_s, std::int64_t host_ref_ns, double rate, bool fitted) noexcept {
    map_.store(ref_s, host_ref_ns, rate);
    steer_smooth(ref_s + rate * static_cast<double>(last_host_ns_ - host_ref_ns) * 1e-9, rate, fitted);
  }

  // The smooth line at the newest measurement's host time: continuous, its rate steered towards
  // the map's average rate over the last second plus its distance to the map over kSmoothCloseS
  // (`map_s`: the map's controller time there, `map_rate`: its rate). The map's own rate is the
  // robot's between steps; its average over a second, steps included, is the rate the robot keeps.
  // The smooth line is the map itself until the map has a fitted rate (the first 20 ms of a clock).
  void steer_smooth(double map_s, double map_rate, bool fitted) noexcept {
    const std::int64_t h = last_host_ns_;
    double at_s = map_s;
    double rate = map_rate;
    if (fitted && smooth_steering_) {
      at_s =
          smooth_ref_s_mine_ + smooth_rate_mine_ * static_cast<double>(h - smooth_host_ref_ns_mine_) * 1e-9;
      const double distance_s = map_s - at_s;
      const double dt_s = std::max(0.0, static_cast<double>(h - smooth_host_ref_ns_mine_) * 1e-9);
      if (!(std::abs(distance_s) <= kReseedS)) {
        at_s = map_s;  // a new clock: no warp could follow it
        progress_count_ = 0;
      } else {
        const double average = average_progress_rate(h, map_s, map_rate);
        const double wanted = std::clamp(average + distance_s / kSmoothCloseS, average * (1.0 - kSmoothWarp),
                                         average * (1.0 + kSmoothWarp));
        const double step = kSmoothRateSlewPerS * dt_s;
        rate = std::clamp(wanted, smooth_rate_mine_ - step, smooth_rate_mine_ + step);
      }
    } else {
      progress_count_ = 0;
    }
    smooth_steering_ = fitted;
    smooth_host_ref_ns_mine_ = h;
    smooth_ref_s_mine_ = at_s;
    smooth_rate_mine_ = rate;
    smooth_.store(at_s, h, rate);
  }

  // The controller thread's fit: sums over (x, y) = (controller time − x0, host time − y0) [s],
  // each older term weighted by forget_ per cycle.
  double forget_;
  int step_window_;  // cycles in the step window
  bool seeded_ = false;
  double last_controller_time_s_ = 0.0;
  double x0_s_ = 0.0;
  std::int64_t y0_ns_ = 0;
  double w_ = 0.0, sx_ = 0.0, sy_ = 0.0, sxx_ = 0.0, sxy_ = 0.0;
  double span_s_ = 0.0;
  double slope_ = 1.0;
  double intercept_s_ = 0.0;
  // The newest measurements (x, y) [s], a ring of kMaxStepWindow; recent_count_ of them valid.
  std::array<double, kMaxStepWindow> recent_x_{};
  std::array<double, kMaxStepWindow> recent_y_{};
  int recent_next_ = 0;
  int recent_count_ = 0;
  // What readers see: the map, and the smooth line.
  PublishedLine map_;
  // The smooth line: the controller thread's copy.
  std::int64_t last_host_ns_ = 0;                               // the newest measurement's host time [ns]
  std::array<std::int64_t, kProgressSamples> progress_h_ns_{};  // the map's progress: host time [ns]
  std::array<double, kProgressSamples> progress_s_{};           // and its controller time there [s]
  int progress_newest_ = 0;
  int progress_count_ = 0;
  bool smooth_steering_ = false;  // the smooth line steers (the map has had a fitted rate)
  std::int64_t smooth_host_ref_ns_mine_ = kUnset;
  double smooth_ref_s_mine_ = 0.0;
  double smooth_rate_mine_ = 1.0;
  PublishedLine smooth_;
};

}  // namespace jtac::loop
