// Trajectory time as a function of controller time: σ(t) = ∫ s dt over the speed scale's history.
//
// A goal's header stamp is a controller-clock (wall) instant; how much of its trajectory has
// elapsed by now is σ(now) − σ(stamp), not (now − stamp)·s: the scale may have been 100 % for part
// of that time, 50 % or paused for the rest. The clock keeps σ as a piecewise-linear function in a
// ring of breakpoints claimed at configure: a cycle that advances at the same scale as the one
// before only moves the last breakpoint, so a constant scale costs one entry however long it lasts,
// and a ramp (the scale's first-order lag, a few hundred cycles) costs one entry per cycle.
// Before the oldest breakpoint σ is extrapolated at the oldest piece's slope; after the newest, at
// the current scale. Real-time safe after reserve(): no allocation, no lock, no exception.
#pragma once

#include <cstddef>
#include <vector>

namespace jtac {

/// The integral of the speed scale over controller time, with its recent history.
class TrajectoryClock {
 public:
  /// Breakpoints kept by default: about ten scale ramps of 0.1 s at 1 kHz.
  static constexpr std::size_t kDefaultCapacity = 4096;

  /// Claims the ring. Not real-time (allocates).
  void reserve(std::size_t capacity = kDefaultCapacity) {
    times_s_.assign(capacity < 2 ? 2 : capacity, 0.0);
    sigma_s_.assign(times_s_.size(), 0.0);
    size_ = 0;
  }

  /// Starts the history at controller time `time_s` with σ = 0, the scale having been `scale` before.
  void reset(double time_s, double scale) noexcept {
    size_ = 1;
    head_ = 0;
    times_s_[0] = time_s;
    sigma_s_[0] = 0.0;
    slope_ = scale;
    merge_ = false;
  }

  /// The cycle that ends at `time_s` advanced trajectory time at `scale` (its mean over the cycle).
  void advance(double time_s, double scale) noexcept {
    if (size_ == 0 || !(time_s > newest_time())) {
      return;
    }
    const double sigma = now() + (time_s - newest_time()) * scale;
    if (merge_ && scale == slope_) {  // the same straight piece: move its end
      times_s_[index(size_ - 1)] = time_s;
      sigma_s_[index(size_ - 1)] = sigma;
      return;
    }
    if (size_ == times_s_.size()) {  // full: forget the oldest breakpoint
      head_ = (head_ + 1) % times_s_.size();
      --size_;
    }
    times_s_[index(size_)] = time_s;
    sigma_s_[index(size_)] = sigma;
    ++size_;
    slope_ = scale;
    merge_ = true;
  }

  /// σ at the newest breakpoint (the last advance()) [s of trajectory time].
  double now() const noexcept { return size_ == 0 ? 0.0 : sigma_s_[index(size_ - 1)]; }

  /// σ at controller time `time_s` [s of trajectory time].
  double at(double time_s) const noexcept {
    if (size_ == 0) {
      return 0.0;
    }
    if (time_s >= newest_time()) {
      return now() + (time_s - newest_time()) * slope_;
    }
    const double t_oldest = times_s_[index(0)];
    if (time_s <= t_oldest) {
      const double slope = size_ >= 2 ? piece_slope(1) : slope_;
      return sigma_s_[index(0)] - (t_oldest - time_s) * slope;
    }
    // Binary search for the piece [k − 1, k] holding time_s.
    std::size_t lo = 0;
    std::size_t hi = size_ - 1;
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (times_s_[index(mid)] <= time_s) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return sigma_s_[index(lo)] + (time_s - times_s_[index(lo)]) * piece_slope(hi);
  }

  /// Trajectory time elapsed between controller time `time_s` and the newest breakpoint [s].
  double elapsed_since(double time_s) const noexcept { return now() - at(time_s); }

  /// Breakpoints held now.
  std::size_t size() const noexcept { return size_; }

 private:
  std::size_t index(std::size_t k) const noexcept { return (head_ + k) % times_s_.size(); }
  double newest_time() const noexcept { return times_s_[index(size_ - 1)]; }
  // Slope of the piece that ends at breakpoint k ≥ 1.
  double piece_slope(std::size_t k) const noexcept {
    const double dt = times_s_[index(k)] - times_s_[index(k - 1)];
    return dt > 0.0 ? (sigma_s_[index(k)] - sigma_s_[index(k - 1)]) / dt : slope_;
  }

  std::vector<double> times_s_;  // controller time of each breakpoint [s]
  std::vector<double> sigma_s_;  // σ there [s of trajectory time]
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  double slope_ = 1.0;  // scale of the newest piece
  bool merge_ = false;  // whether the newest breakpoint ends a piece that may still be extended
};

}  // namespace jtac
