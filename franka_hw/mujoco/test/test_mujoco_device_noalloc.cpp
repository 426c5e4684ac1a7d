// MujocoDevice's read_once()/write_once() allocate nothing after configure(), MuJoCo's mj_step1 /
// mj_step2 / mj_applyFT included: the counter replaces malloc for the whole process, libmujoco too.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "franka_hw/mujoco_device.hpp"
#include "malloc_counter.hpp"

namespace {

using jtac::hw::ClockMode;
using jtac::hw::DeviceCommand;
using jtac::hw::DeviceState;
using jtac::hw::DeviceStatus;
using jtac::hw::kFr3HomeRad;
using jtac::hw::MujocoDevice;
using jtac::hw::MujocoDeviceConfig;
using jtac::hw::WrenchArray;
using jtac::test::count_allocations;

MujocoDeviceConfig config_for(ClockMode clock) {
  std::ifstream in(JTAC_FR3_TOOL_MJCF);
  std::stringstream text;
  text << in.rdbuf();
  MujocoDeviceConfig config;
  config.mjcf_xml = text.str();
  config.clock = clock;
  return config;
}

// Read/write pairs through every path: moving commands, a refused one, motion pushes taken and
// expiring, ticks without a new command.
void drive(MujocoDevice& device, int ticks, int& failures) {
  DeviceState state;
  for (int i = 0; i < ticks; ++i) {
    DeviceCommand command;
    command.q_d_rad = kFr3HomeRad;
    command.q_d_rad[3] += 0.05 * std::sin(0.003 * i);
    command.dq_d_rad_s[3] = 0.05 * 0.003 * 1000.0 * std::cos(0.003 * i);
    if (i % 7 == 3) {
      command.q_d_rad[2] = std::nan("");
      failures += device.write_once(command) != DeviceStatus::kInvalidCommand;
    } else if (i % 11 != 5) {  // every 11th tick gets no command
      failures += device.write_once(command) != DeviceStatus::kOk;
    }
    failures += device.read_once(state) != DeviceStatus::kOk;
  }
}

TEST(MujocoDeviceNoAlloc, LockstepReadWriteAndPushes) {
  MujocoDevice device(config_for(ClockMode::kLockstep));
  int failures = 0;
  drive(device, 10, failures);  // warm-up outside the counter
  const std::string tcp = "fr3_tcp";
  const std::string link = "fr3_link5";
  device.push(tcp, WrenchArray{10.0, 0.0, 0.0, 0.0, 0.0, 0.0}, 0.2);
  device.push(link, WrenchArray{0.0, 5.0, -3.0, 0.0, 0.2, 0.0}, 0.5);
  EXPECT_EQ(count_allocations([&] { drive(device, 1000, failures); }), 0);
  EXPECT_EQ(device.pushes_active(), 0);  // taken, applied and expired inside the counted window
  EXPECT_EQ(failures, 0);
}

TEST(MujocoDeviceNoAlloc, RealTimeReadWrite) {
  MujocoDevice device(config_for(ClockMode::kRealTime));
  int failures = 0;
  drive(device, 5, failures);
  EXPECT_EQ(count_allocations([&] { drive(device, 100, failures); }), 0);
  EXPECT_EQ(failures, 0);
}

}  // namespace
