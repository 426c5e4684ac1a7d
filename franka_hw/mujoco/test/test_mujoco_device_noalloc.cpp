// MujocoDevice's read_once()/write_once() allocate nothing after configure(), MuJoCo's mj_step1 /
// mj_step2 / mj_applyFT and the simulated hand's controller (contacts included): the counter replaces
// malloc for the whole process, libmujoco too.
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
using jtac::hw::HandCommand;
using jtac::hw::HandCommandKind;
using jtac::hw::kFr3HomeRad;
using jtac::hw::MujocoDevice;
using jtac::hw::MujocoDeviceConfig;
using jtac::hw::WrenchArray;
using jtac::test::count_allocations;

MujocoDeviceConfig config_for(ClockMode clock, const char* path = JTAC_FR3_TOOL_MJCF) {
  std::ifstream in(path);
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

// The Franka Hand's controller runs inside the tick: a move, a grasp of the box (contacts), a stop and
// homing, each taken and run inside the counted window; hand_state() read there too.
TEST(MujocoDeviceNoAlloc, LockstepWithTheHandAndAGrasp) {
  MujocoDevice device(config_for(ClockMode::kLockstep, JTAC_FR3_HAND_OBJECT_MJCF));
  ASSERT_TRUE(device.has_hand());
  int failures = 0;
  drive(device, 10, failures);
  HandCommand move;
  move.kind = HandCommandKind::kMove;
  move.width_m = 0.05;
  move.speed_m_s = 0.1;
  HandCommand grasp = move;
  grasp.kind = HandCommandKind::kGrasp;
  grasp.width_m = 0.03;
  grasp.force_N = 20.0;
  HandCommand stop;
  stop.kind = HandCommandKind::kStop;
  HandCommand homing;
  homing.kind = HandCommandKind::kHoming;
  const HandCommand sequence[] = {move, grasp, stop, homing};
  std::int64_t allocations = 0;
  double width_sum_m = 0.0;
  for (const HandCommand& command : sequence) {
    device.hand_command(command);  // the command side may allocate (it never does here); not counted
    allocations += count_allocations([&] {
      drive(device, 700, failures);
      width_sum_m += device.hand_state().width_m;
    });
  }
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(width_sum_m, 0.0);
  EXPECT_EQ(device.hand_state().command_id, 4U);
}

}  // namespace
