// AsyncInterface's real-time and controller entry points allocate nothing: step_once() through
// rate matching, timeout and hold, submit_command() (accepted and refused), latest_state(),
// counters() and latency(), on MujocoDevice in lockstep (the counter replaces malloc process-wide),
// with either limiter; and the limiters' own entry points and copies.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "franka_hw/async_interface.hpp"
#include "franka_hw/joint_limiter.hpp"
#include "franka_hw/mujoco_device.hpp"
#include "malloc_counter.hpp"

namespace {

using jtac::hw::AsyncInterface;
using jtac::hw::DeviceState;
using jtac::hw::DeviceStatus;
using jtac::hw::JointArray;
using jtac::hw::kFr3HomeRad;
using jtac::hw::MujocoDevice;
using jtac::hw::MujocoDeviceConfig;
using jtac::test::count_allocations;

MujocoDeviceConfig lockstep_config() {
  std::ifstream in(JTAC_FR3_TOOL_MJCF);
  std::stringstream text;
  text << in.rdbuf();
  MujocoDeviceConfig config;
  config.mjcf_xml = text.str();
  return config;
}

// Samples every 8th packet, a NaN every 13th, and a 100-packet silence (timeout, hold) each 400.
void drive(AsyncInterface& interface, int first, int packets, int& failures) {
  DeviceState state;
  for (int p = first; p < first + packets; ++p) {
    const double t = p * 0.001;
    if (p % 8 == 0 && p % 400 < 300) {
      JointArray q = kFr3HomeRad;
      JointArray dq{};
      q[3] += 0.2 * std::sin(t);
      dq[3] = 0.2 * std::cos(t);
      failures += interface.submit_command(q, dq, t) ? 0 : 1;
    }
    if (p % 13 == 0) {
      JointArray q = kFr3HomeRad;
      q[1] = std::nan("");
      failures += interface.submit_command(q, JointArray{}, t) ? 1 : 0;
    }
    failures += interface.step_once() != DeviceStatus::kOk;
    failures += interface.latest_state(state) ? 0 : 1;
  }
  failures += interface.counters().packets == 0 ? 1 : 0;
  failures += interface.latency().samples == 0 ? 1 : 0;
}

TEST(AsyncInterfaceNoAlloc, LockstepStepOnceSubmitAndRead) {
  MujocoDevice device(lockstep_config());
  AsyncInterface interface(device);
  int failures = 0;
  drive(interface, 0, 10, failures);  // warm-up outside the counter
  EXPECT_EQ(count_allocations([&] { drive(interface, 10, 1200, failures); }), 0);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(interface.counters().held_packets, 0U);
  EXPECT_GT(interface.counters().commands_refused, 0U);
}

// The same with the Ruckig limiter (AsyncInterfaceConfig::limiter): Ruckig's solver is claimed at
// construction; its steps, brakes and the interface's copies of it allocate nothing.
TEST(AsyncInterfaceNoAlloc, LockstepStepOnceWithTheRuckigLimiter) {
  MujocoDevice device(lockstep_config());
  jtac::hw::AsyncInterfaceConfig config;
  config.limiter = jtac::hw::LimiterKind::kRuckig;
  AsyncInterface interface(device, config);
  int failures = 0;
  drive(interface, 0, 10, failures);
  EXPECT_EQ(count_allocations([&] { drive(interface, 10, 1200, failures); }), 0);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(interface.counters().held_packets, 0U);
  EXPECT_GT(interface.counters().limiter_activations, 0U);
}

// Every entry point of the RuckigLimiter, the rewinds AsyncInterface makes (copies, extrapolate)
// and steps of several periods, through both limiters behind JointLimiter, at and beyond the limits
// and the FR3 envelope.
TEST(AsyncInterfaceNoAlloc, LimiterEntryPointsAndCopies) {
  for (const auto kind : {jtac::hw::LimiterKind::kMotionLimiter, jtac::hw::LimiterKind::kRuckig}) {
    jtac::hw::JointLimiter limiter(kind, 0.001, 0.8, jtac::hw::kFr3Limits);
    limiter.reset(kFr3HomeRad);
    JointArray far = kFr3HomeRad, out{}, nan_target = kFr3HomeRad;
    for (int i = 0; i < jtac::hw::kNumJoints; ++i) {
      far[i] = jtac::hw::kFr3Limits.q_max_rad[i] + 0.3;  // into the envelope
      out[i] = jtac::hw::kFr3Limits.dq_max_rad_s[i];
    }
    nan_target[2] = std::nan("");
    int limited = 0;
    const auto allocations = count_allocations([&] {
      for (int p = 0; p < 3000; ++p) {
        const jtac::hw::JointLimiter before = limiter;  // AsyncInterface's limiter_before_
        const std::uint64_t periods = p % 50 == 49 ? 3U : 1U;
        if (p % 400 < 300) {
          limited += limiter.step(p % 800 < 400 ? far : kFr3HomeRad, out, periods) ? 1 : 0;
        } else if (p % 400 == 350) {
          limited += limiter.step(nan_target, out) ? 1 : 0;
        } else {
          limited += limiter.brake(periods) ? 1 : 0;
        }
        if (p % 97 == 0) {
          jtac::hw::JointLimiter rewound = before;  // a rewind (late_commands = dropped)
          rewound.extrapolate(2);
          limiter = rewound;
        }
      }
    });
    EXPECT_EQ(allocations, 0);
    EXPECT_GT(limited, 0);
    for (const double q : limiter.q_rad()) {
      EXPECT_TRUE(std::isfinite(q));
    }
  }
}

}  // namespace
