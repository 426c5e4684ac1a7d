// Instruction-count driver for malloc_tests/callgrind_update.sh: the hardware thread's limiter,
// MotionLimiter (`motion`) or RuckigLimiter (`ruckig`) behind JointLimiter, on the targets of a
// 125 Hz controller taken at their arrival (every joint swinging 0.3·(1 − cos 2πt/4 s), rate
// matched), the work of one packet. After `warmup` packets, exactly `count` limiter steps run with
// callgrind's collection toggled on around each and off around the rate matcher; the profile's
// total Ir over `count` is the instructions per packet, independent of the machine.
//
// Usage: callgrind_limiter_driver [warmup packets] [counted packets] [motion|ruckig]
#include <cmath>
#include <cstdio>
#include <string>

#include "franka_hw/joint_limiter.hpp"
#include "franka_hw/rate_matching.hpp"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define JTAC_HAVE_CALLGRIND 1
#else
#define JTAC_HAVE_CALLGRIND 0
#endif

int main(int argc, char** argv) {
  const long warmup = argc > 1 ? std::stol(argv[1]) : 1000;
  const long count = argc > 2 ? std::stol(argv[2]) : 10000;
  const std::string which = argc > 3 ? argv[3] : "motion";
  if (!JTAC_HAVE_CALLGRIND) {
    std::printf("SKIP: built without <valgrind/callgrind.h>\n");
    return 77;
  }
  if (which != "motion" && which != "ruckig") {
    std::fprintf(stderr, "usage: %s [warmup] [count] [motion|ruckig]\n", argv[0]);
    return 2;
  }
  constexpr double kPeriodS = 0.001;
  constexpr double kPi = 3.14159265358979323846;
  const auto kind =
      which == "ruckig" ? jtac::hw::LimiterKind::kRuckig : jtac::hw::LimiterKind::kMotionLimiter;
  jtac::hw::JointLimiter limiter(kind, kPeriodS, 0.8, jtac::hw::kFr3Limits);
  jtac::hw::RateMatcher matcher;
  limiter.reset(jtac::hw::kFr3HomeRad);
  jtac::hw::RateTarget target;
  long limited = 0;
  for (long p = 0; p < warmup + count; ++p) {
    if (p % 8 == 0) {
      jtac::hw::CommandSample sample;
      const double t = static_cast<double>(p) * kPeriodS;
      for (int i = 0; i < jtac::hw::kNumJoints; ++i) {
        sample.q_rad[i] = jtac::hw::kFr3HomeRad[i] + 0.3 * (1.0 - std::cos(2.0 * kPi * t / 4.0));
        sample.dq_rad_s[i] = 0.3 * 2.0 * kPi / 4.0 * std::sin(2.0 * kPi * t / 4.0);
      }
      sample.controller_time_s = t;
      matcher.on_sample(sample, limiter.q_rad(), static_cast<std::uint64_t>(p) + 1);
    }
    matcher.next(target);
    const bool counted = p >= warmup;
#if JTAC_HAVE_CALLGRIND
    if (counted) {
      CALLGRIND_TOGGLE_COLLECT;
    }
#endif
    const bool was_limited = target.hold ? limiter.brake() : limiter.step(target.q_rad, target.dq_rad_s);
#if JTAC_HAVE_CALLGRIND
    if (counted) {
      CALLGRIND_TOGGLE_COLLECT;
    }
#endif
    limited += was_limited ? 1 : 0;
  }
  std::printf("%s: %ld packets counted, %ld limited; q[0] = %.6f rad\n", which.c_str(), count, limited,
              limiter.q_rad()[0]);
  return 0;
}
