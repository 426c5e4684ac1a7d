// Small real-time helpers every C++ layer uses: a finiteness check over any fixed-size array and a
// lock-free running maximum. Header-only, noexcept, no allocation.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>

namespace jtac {

/// Whether every value of `values` (a std::array, an Eigen fixed vector, any range of doubles) is
/// finite: NaN and ±inf never reach a command.
template <class Range>
bool all_finite(const Range& values) noexcept {
  return std::all_of(std::begin(values), std::end(values), [](double v) { return std::isfinite(v); });
}

/// Raises `target` to `value` if larger, without a lock (counters read by another thread).
template <class T>
void store_max(std::atomic<T>& target, T value) noexcept {
  T current = target.load(std::memory_order_relaxed);
  while (value > current && !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}

}  // namespace jtac
