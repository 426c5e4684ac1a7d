// ClockMap on its own: host times of controller cycles synthesised with a clock-rate difference,
// one-sided wake-up jitter and late cycles, against the exact controller time.
#include "jtac_loop/clock_map.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace {

using jtac::loop::ClockMap;

constexpr double kT = 0.001;                      // controller period [s]
constexpr std::int64_t kHost0Ns = 5'000'000'000;  // an arbitrary host time of the first cycle [ns]

// The host time [ns] at which the controller cycle for controller time t [s] starts, for a robot
// clock whose second lasts `host_per_controller` host seconds.
std::int64_t host_ns(double t, double host_per_controller) {
  return kHost0Ns + static_cast<std::int64_t>(std::llround(t * host_per_controller * 1e9));
}

}  // namespace

TEST(ClockMap, IsNaNBeforeTheFirstCycle) {
  const ClockMap map;
  EXPECT_TRUE(std::isnan(map.controller_time_s(kHost0Ns)));
  EXPECT_EQ(map.rate(), 1.0);
}

// A robot clock 3 % slower than the host's, cycles running 0–60 µs after their state (uniform) and
// one cycle in 50 a millisecond late: after 4 s the map gives the controller time of any host instant
// off the line through the cycles' mean lateness by a few µs (the late cycles' clamped share) that
// drifts slowly — between two stamps 8 ms apart (a 125 Hz sender) by about a µs — and the rate to
// 1e-4. An offset that follows at most 1 µs per cycle would be off by 29 µs more every cycle.
TEST(ClockMap, FollowsARobotClockThreePercentSlowThroughJitterAndLateCycles) {
  const double host_per_controller = 1.03;
  ClockMap map(kT);
  std::mt19937 random(7);
  std::uniform_real_distribution<double> lateness_s(0.0, 60e-6);
  std::bernoulli_distribution late_cycle(0.02);
  std::vector<double> errors_s;
  for (int k = 0; k <= 8000; ++k) {
    const double t = k * kT;
    const double late_s = lateness_s(random) + (late_cycle(random) ? 1e-3 : 0.0);
    map.update(t, host_ns(t, host_per_controller) + static_cast<std::int64_t>(late_s * 1e9));
    if (k >= 4000) {
      // Halfway between two cycles, on the line of the mean lateness (30 µs after the state).
      const double t_mid = t + 0.5 * kT;
      const std::int64_t at_ns = host_ns(t_mid, host_per_controller) + 30'000;
      errors_s.push_back(map.controller_time_s(at_ns) - t_mid);
    }
  }
  double worst_s = 0.0;
  double worst_change_8ms_s = 0.0;
  for (std::size_t k = 0; k < errors_s.size(); ++k) {
    worst_s = std::max(worst_s, std::abs(errors_s[k]));
    if (k >= 8) {
      worst_change_8ms_s = std::max(worst_change_8ms_s, std::abs(errors_s[k] - errors_s[k - 8]));
    }
  }
  std::printf(
      "[ 3 %% slow robot clock ] error up to %.2f µs, its change over 8 ms up to %.3f µs, rate %.6f (exact "
      "%.6f)\n",
      worst_s * 1e6, worst_change_8ms_s * 1e6, map.rate(), 1.0 / host_per_controller);
  EXPECT_LT(worst_s, 15e-6);
  EXPECT_LT(worst_change_8ms_s, 1.5e-6);
  EXPECT_NEAR(map.rate(), 1.0 / host_per_controller, 1e-4);
}

// A new clock (the controller time jumps back to 0, as after a restart): within 0.2 s the map gives
// the new clock again.
TEST(ClockMap, ASecondClockReseedsTheMap) {
  ClockMap map(kT);
  for (int k = 0; k <= 2000; ++k) {
    map.update(k * kT, host_ns(k * kT, 1.0));
  }
  const std::int64_t restart_ns = host_ns(2.0, 1.0) + 10'000'000;
  for (int k = 0; k <= 200; ++k) {
    map.update(k * kT, restart_ns + static_cast<std::int64_t>(k * 1'000'000));
  }
  EXPECT_NEAR(map.controller_time_s(restart_ns + 200'000'000), 0.2, 2e-6);
}
