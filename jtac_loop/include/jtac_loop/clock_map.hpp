// The controller clock as seen from the host's monotonic clock, for threads that stamp inputs with
// controller time (a stream's sender) while only the controller thread sees the robot's clock.
//
// The controller clock counts the robot's ticks; it runs at the robot's rate, not the host's: a
// simulated robot or a real one drifts against the host by up to a few percent, so a fixed offset
// falls behind by up to tens of µs every cycle. The map is a line fitted to one measurement per
// controller cycle — the host time at which the cycle ran against the controller time it computed
// for — by least squares with exponential forgetting (time constant 2 s): host time regressed on
// controller time (the exact one), so the hosts's wake-up jitter (tens of µs, zero mean after its
// constant part) averages out of the rate and the offset.
//   * A cycle more than 200 µs off the line (a late wake-up) is left out of the fit; 100 of them in
//     a row (a new clock, a pause) re-seed the map.
//   * Until 20 ms of measurements are in, the map is the newest measurement at rate 1.
// The constant part of the wake-up lateness shifts every stamp by the same amount, which a stream's
// delay absorbs.
//
// Threads: update() on the controller thread (noexcept, no allocation, no lock); controller_time_s()
// from any thread: a sequence lock whose readers retry and whose writer never waits.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

namespace jtac::loop {

/// Host monotonic time → controller time (see the top of this file).
class ClockMap {
 public:
  /// `controller_period_s`: the controller's nominal period [s] (one update() per period).
  explicit ClockMap(double controller_period_s = 0.001) noexcept
      : forget_(std::exp(-controller_period_s / kTimeConstantS)) {}

  /// The host's monotonic clock [ns] (std::chrono::steady_clock: Python's time.monotonic()).
  static std::int64_t host_now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  /// Controller thread: the cycle for controller time `controller_time_s` [s] runs at host time
  /// `host_ns` [ns].
  void update(double controller_time_s, std::int64_t host_ns) noexcept {
    if (!seeded_) {
      seed(controller_time_s, host_ns);
    }
    const double x = controller_time_s - x0_s_;                     // [s]
    const double y = static_cast<double>(host_ns - y0_ns_) * 1e-9;  // [s]
    double y_fit = y;
    if (span_s_ >= kMinSpanS) {
      const double residual_s = y - (intercept_s_ + slope_ * x);
      if (!(std::abs(residual_s) <= kReseedS)) {
        seed(controller_time_s, host_ns);  // a new clock, or one that paused
        publish(controller_time_s, host_ns, 1.0);
        return;
      }
      // A late cycle counts as at most kClampS off the line: the fit follows a real drift or a
      // robot's stall at a bounded pace, and a millisecond-late wake-up barely moves it.
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
      publish(controller_time_s, host_ns, 1.0);  // too short a baseline for a rate
      return;
    }
    slope_ = (w_ * sxy_ - sx_ * sy_) / var;  // host seconds per controller second
    intercept_s_ = (sy_ - slope_ * sx_) / w_;
    // On the line, the host time of controller time x0: controller = x0 + (host − that) / slope.
    publish(x0_s_, y0_ns_ + static_cast<std::int64_t>(std::llround(intercept_s_ * 1e9)), 1.0 / slope_);
  }

  /// Any thread: the controller time now [s]; NaN before the first update().
  double controller_time_s() const noexcept { return controller_time_s(host_now_ns()); }

  /// Any thread: the controller time at host time `host_ns` [s]; NaN before the first update().
  double controller_time_s(std::int64_t host_ns) const noexcept {
    for (;;) {
      const std::uint64_t before = sequence_.load(std::memory_order_acquire);
      const std::int64_t host_ref_ns = published_host_ref_ns_.load(std::memory_order_relaxed);
      const double ref_s = published_ref_s_.load(std::memory_order_relaxed);
      const double rate = published_rate_.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if ((before & 1U) == 0U && sequence_.load(std::memory_order_relaxed) == before) {
        if (host_ref_ns == kUnset) {
          return std::numeric_limits<double>::quiet_NaN();
        }
        return ref_s + rate * static_cast<double>(host_ns - host_ref_ns) * 1e-9;
      }
    }
  }

  /// Controller time per host time [-] (1 before the first update()).
  double rate() const noexcept { return published_rate_.load(std::memory_order_relaxed); }

 private:
  static constexpr double kTimeConstantS = 2.0;
  static constexpr double kMinSpanS = 0.02;
  static constexpr double kClampS = 200e-6;
  static constexpr double kReseedS = 0.05;
  static constexpr std::int64_t kUnset = std::numeric_limits<std::int64_t>::min();

  void seed(double controller_time_s, std::int64_t host_ns) noexcept {
    x0_s_ = controller_time_s;
    y0_ns_ = host_ns;
    w_ = sx_ = sy_ = sxx_ = sxy_ = 0.0;
    span_s_ = 0.0;
    slope_ = 1.0;
    intercept_s_ = 0.0;
    seeded_ = true;
  }

  void publish(double ref_s, std::int64_t host_ref_ns, double rate) noexcept {
    const std::uint64_t s = sequence_.load(std::memory_order_relaxed);
    sequence_.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    published_host_ref_ns_.store(host_ref_ns, std::memory_order_relaxed);
    published_ref_s_.store(ref_s, std::memory_order_relaxed);
    published_rate_.store(rate, std::memory_order_relaxed);
    sequence_.store(s + 2, std::memory_order_release);
  }

  // The controller thread's fit: sums over (x, y) = (controller time − x0, host time − y0) [s],
  // each older term weighted by forget_ per cycle.
  double forget_;
  bool seeded_ = false;
  double x0_s_ = 0.0;
  std::int64_t y0_ns_ = 0;
  double w_ = 0.0, sx_ = 0.0, sy_ = 0.0, sxx_ = 0.0, sxy_ = 0.0;
  double span_s_ = 0.0;
  double slope_ = 1.0;
  double intercept_s_ = 0.0;
  // What readers see (sequence lock: odd while the writer is between its stores).
  std::atomic<std::uint64_t> sequence_{0};
  std::atomic<std::int64_t> published_host_ref_ns_{kUnset};
  std::atomic<double> published_ref_s_{0.0};
  std::atomic<double> published_rate_{1.0};
};

}  // namespace jtac::loop
