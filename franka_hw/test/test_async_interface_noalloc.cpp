// AsyncInterface's real-time and controller entry points allocate nothing: step_once() through
// rate matching, timeout and hold, submit_command() (accepted and refused), latest_state(),
// counters() and latency(), on MujocoDevice in lockstep (the counter replaces malloc process-wide).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "franka_hw/async_interface.hpp"
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

}  // namespace
