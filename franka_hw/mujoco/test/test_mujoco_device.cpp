// The simulated FR3 (MujocoDevice): holding, tracking, the F/T sensor's sign and the push, the packet
// semantics (echo, refusal, motion_finished), determinism of lockstep, and the real-time clock.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "franka_hw/mujoco_device.hpp"
#include "jtac_test_support.hpp"

namespace {

using jtac::hw::ClockMode;
using jtac::hw::DeviceCommand;
using jtac::hw::DeviceState;
using jtac::hw::DeviceStatus;
using jtac::hw::JointArray;
using jtac::hw::kFr3HomeRad;
using jtac::hw::kNumJoints;
using jtac::hw::MujocoDevice;
using jtac::hw::MujocoDeviceConfig;
using jtac::hw::WrenchArray;

constexpr double kPi = 3.14159265358979323846;

MujocoDeviceConfig config_for(const char* path, ClockMode clock = ClockMode::kLockstep) {
  MujocoDeviceConfig config;
  config.mjcf_xml = jtac::test::read_text_file(path);
  config.clock = clock;
  return config;
}

DeviceCommand hold(const JointArray& q_rad) {
  DeviceCommand command;
  command.q_d_rad = q_rad;
  return command;
}

double max_abs_diff(const JointArray& a, const JointArray& b) {
  double m = 0.0;
  for (int j = 0; j < kNumJoints; ++j) {
    m = std::max(m, std::abs(a[j] - b[j]));
  }
  return m;
}

// One lockstep tick: the command for the coming step, then the state it produced.
DeviceState tick(MujocoDevice& device, const DeviceCommand& command) {
  EXPECT_EQ(device.write_once(command), DeviceStatus::kOk);
  DeviceState state;
  EXPECT_EQ(device.read_once(state), DeviceStatus::kOk);
  return state;
}

// v_world in the axes of a frame whose orientation is R_world_frame (row-major): R^T · v.
std::array<double, 3> in_frame(const double R_world_frame[9], const double v_world[3]) {
  std::array<double, 3> v{};
  for (int i = 0; i < 3; ++i) {
    v[i] = R_world_frame[0 + i] * v_world[0] + R_world_frame[3 + i] * v_world[1] +
           R_world_frame[6 + i] * v_world[2];
  }
  return v;
}

void cross(const double a[3], const double b[3], double out[3]) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

TEST(MujocoDevice, ConfiguresTheFr3) {
  MujocoDevice device(config_for(JTAC_FR3_MJCF));
  EXPECT_DOUBLE_EQ(device.period_s(), 0.001);
  EXPECT_EQ(device.clock(), ClockMode::kLockstep);
  ASSERT_NE(device.model(), nullptr);
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  EXPECT_EQ(state.tick, 1u);
  EXPECT_DOUBLE_EQ(state.time_s, 0.001);
  EXPECT_TRUE(state.has_wrench);
  EXPECT_EQ(state.q_d_rad, kFr3HomeRad);  // the first command in force holds q_init
  EXPECT_LT(max_abs_diff(state.q_rad, kFr3HomeRad), 1e-6);
}

TEST(MujocoDevice, ConfigureErrorsThrowWithMujocosMessage) {
  MujocoDeviceConfig config;
  config.mjcf_xml = "<mujoco><worldbody><body><geom type='sphere'/></body>";
  try {
    MujocoDevice device(config);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("MJCF does not parse"), std::string::npos) << e.what();
  }
  config = config_for(JTAC_FR3_MJCF);
  config.name_prefix = "panda";
  try {
    MujocoDevice device(config);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("panda_joint1"), std::string::npos) << e.what();
  }
  MujocoDevice unconfigured;
  DeviceState state;
  EXPECT_EQ(unconfigured.read_once(state), DeviceStatus::kNotConfigured);
  EXPECT_EQ(unconfigured.write_once(DeviceCommand{}), DeviceStatus::kNotConfigured);
  EXPECT_THROW(unconfigured.push("fr3_tcp", WrenchArray{}, 1.0), std::logic_error);
}

TEST(MujocoDevice, HoldsHomeAgainstGravity) {
  for (const char* path : {JTAC_FR3_MJCF, JTAC_FR3_TOOL_MJCF}) {
    MujocoDevice device(config_for(path));
    DeviceState state;
    double drift = 0.0;
    for (int i = 0; i < 2000; ++i) {
      state = tick(device, hold(kFr3HomeRad));
      drift = std::max(drift, max_abs_diff(state.q_rad, kFr3HomeRad));
    }
    std::printf("[ measured ] %s: largest drift from home over 2 s: %.3g rad\n", path, drift);
    EXPECT_LT(drift, 1e-3);
    EXPECT_EQ(state.tick, 2000u);
    EXPECT_EQ(state.ticks_without_new_command, 0u);
  }
}

TEST(MujocoDevice, TracksASlowSinusoidOnJoint4) {
  MujocoDevice device(config_for(JTAC_FR3_TOOL_MJCF));
  // q4 = home + A·(1 − cos ωt): starts at rest, 0.3 rad amplitude, 4 s period.
  const double amplitude_rad = 0.3;
  const double omega_rad_s = 2.0 * kPi / 4.0;
  double worst_rad = 0.0;
  double worst_joint4_rad = 0.0;
  for (int i = 1; i <= 8000; ++i) {
    const double t_s = i * device.period_s();  // the time the step being commanded ends at
    DeviceCommand command = hold(kFr3HomeRad);
    command.q_d_rad[3] += amplitude_rad * (1.0 - std::cos(omega_rad_s * t_s));
    command.dq_d_rad_s[3] = amplitude_rad * omega_rad_s * std::sin(omega_rad_s * t_s);
    const DeviceState state = tick(device, command);
    worst_rad = std::max(worst_rad, max_abs_diff(state.q_rad, command.q_d_rad));
    worst_joint4_rad = std::max(worst_joint4_rad, std::abs(state.q_rad[3] - command.q_d_rad[3]));
  }
  std::printf("[ measured ] tracking error over 8 s: joint 4 %.3g rad, any joint %.3g rad\n",
              worst_joint4_rad, worst_rad);
  EXPECT_LT(worst_rad, 0.01);
}

TEST(MujocoDevice, ForceTorqueSensorReadsTheToolWeightAsToolOnSensor) {
  MujocoDevice device(config_for(JTAC_FR3_TOOL_MJCF));
  const mjModel* m = device.model();
  const int tool = mj_name2id(m, mjOBJ_BODY, "fr3_tool");
  ASSERT_GE(tool, 0);
  const double mass_kg = m->body_mass[tool];
  ASSERT_DOUBLE_EQ(mass_kg, 1.0);
  DeviceState state;
  for (int i = 0; i < 1000; ++i) {
    state = tick(device, hold(kFr3HomeRad));
  }
  ASSERT_TRUE(state.has_wrench);
  double p_sensor[3], R_sensor[9];
  device.frame_pose("fr3_ft_sensor", p_sensor, R_sensor);
  // The tool's weight m·g, in sensor axes; its cog is 5 cm along the sensor's z (sensor = ee here).
  const double weight_world[3] = {mass_kg * m->opt.gravity[0], mass_kg * m->opt.gravity[1],
                                  mass_kg * m->opt.gravity[2]};
  const double cog_sensor_m[3] = {0.0, 0.0, 0.05};
  const std::array<double, 3> expected = in_frame(R_sensor, weight_world);
  double torque_expected[3];
  cross(cog_sensor_m, expected.data(), torque_expected);
  double force_error = 0.0, torque_error = 0.0;
  for (int i = 0; i < 3; ++i) {
    force_error = std::max(force_error, std::abs(state.wrench_sensor_N_Nm[i] - expected[i]));
    torque_error = std::max(torque_error, std::abs(state.wrench_sensor_N_Nm[3 + i] - torque_expected[i]));
  }
  std::printf(
      "[ measured ] F/T at rest: F = [%.6f %.6f %.6f] N, T = [%.6f %.6f %.6f] N·m; error F %.3g N, T %.3g "
      "N·m\n",
      state.wrench_sensor_N_Nm[0], state.wrench_sensor_N_Nm[1], state.wrench_sensor_N_Nm[2],
      state.wrench_sensor_N_Nm[3], state.wrench_sensor_N_Nm[4], state.wrench_sensor_N_Nm[5], force_error,
      torque_error);
  EXPECT_LT(force_error, 1e-3);
  EXPECT_LT(torque_error, 1e-3);
  // At home the flange points down: the weight pulls along the sensor's +z (≈ +9.81 N).
  EXPECT_GT(state.wrench_sensor_N_Nm[2], 9.7);
}

TEST(MujocoDevice, PushAtTheTcpShowsInTheSensorAndMovesTheHeldArm) {
  MujocoDevice device(config_for(JTAC_FR3_TOOL_MJCF));
  const mjModel* m = device.model();
  const double mass_kg = m->body_mass[mj_name2id(m, mjOBJ_BODY, "fr3_tool")];
  DeviceState state;
  for (int i = 0; i < 500; ++i) {
    state = tick(device, hold(kFr3HomeRad));
  }
  double p_tcp_rest[3], R_unused[9];
  device.frame_pose("fr3_tcp", p_tcp_rest, R_unused);

  const WrenchArray push_world = {10.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  device.push("fr3_tcp", push_world, 2.0);
  EXPECT_EQ(device.pushes_active(), 1);
  for (int i = 0; i < 1500; ++i) {  // 1.5 s: settled under the push
    state = tick(device, hold(kFr3HomeRad));
  }
  EXPECT_EQ(device.pushes_active(), 1);
  double p_sensor[3], R_sensor[9], p_tcp[3], R_tcp[9];
  device.frame_pose("fr3_ft_sensor", p_sensor, R_sensor);
  device.frame_pose("fr3_tcp", p_tcp, R_tcp);
  // Expected: tool weight + push, in sensor axes; torque about the sensor origin.
  const double cog_sensor_m[3] = {0.0, 0.0, 0.05};
  const double tcp_sensor_m[3] = {0.0, 0.0, 0.1034};
  const double weight_world[3] = {mass_kg * m->opt.gravity[0], mass_kg * m->opt.gravity[1],
                                  mass_kg * m->opt.gravity[2]};
  const std::array<double, 3> weight = in_frame(R_sensor, weight_world);
  const std::array<double, 3> push = in_frame(R_sensor, push_world.data());
  double t_weight[3], t_push[3];
  cross(cog_sensor_m, weight.data(), t_weight);
  cross(tcp_sensor_m, push.data(), t_push);
  double force_error = 0.0, torque_error = 0.0;
  for (int i = 0; i < 3; ++i) {
    force_error = std::max(force_error, std::abs(state.wrench_sensor_N_Nm[i] - weight[i] - push[i]));
    torque_error =
        std::max(torque_error, std::abs(state.wrench_sensor_N_Nm[3 + i] - t_weight[i] - t_push[i]));
  }
  const double moved_x_m = p_tcp[0] - p_tcp_rest[0];
  std::printf(
      "[ measured ] 10 N push along world x at fr3_tcp, after 1.5 s: push in sensor axes [%.4f %.4f %.4f] N, "
      "F/T error F %.3g N, T %.3g N·m; TCP moved %.3f mm along x\n",
      push[0], push[1], push[2], force_error, torque_error, moved_x_m * 1e3);
  EXPECT_LT(force_error, 0.01);
  EXPECT_LT(torque_error, 0.01);
  EXPECT_NEAR(std::hypot(push[0], push[1], push[2]), 10.0, 1e-9);
  EXPECT_GT(moved_x_m, 1e-3);

  // tau_ext = J_tcp^T · F.
  std::vector<mjtNum> jacp(static_cast<std::size_t>(3 * m->nv));
  mj_jacSite(m, const_cast<mjData*>(device.data()), jacp.data(), nullptr,
             mj_name2id(m, mjOBJ_SITE, "fr3_tcp"));
  for (int j = 0; j < kNumJoints; ++j) {
    EXPECT_NEAR(state.tau_ext_Nm[j], 10.0 * jacp[static_cast<std::size_t>(j)], 0.05) << "joint " << j + 1;
  }

  for (int i = 0; i < 3000; ++i) {  // the push ends after 2 s; the arm returns home
    state = tick(device, hold(kFr3HomeRad));
  }
  EXPECT_EQ(device.pushes_active(), 0);
  EXPECT_EQ(state.tau_ext_Nm, JointArray{});
  const double back_rad = max_abs_diff(state.q_rad, kFr3HomeRad);
  std::printf("[ measured ] 2.5 s after the push ended: %.3g rad from home\n", back_rad);
  EXPECT_LT(back_rad, 1e-3);
}

TEST(MujocoDevice, PushRejectsBadArguments) {
  MujocoDevice device(config_for(JTAC_FR3_MJCF));
  EXPECT_THROW(device.push("no_such_frame", WrenchArray{}, 1.0), std::invalid_argument);
  EXPECT_THROW(device.push("fr3_tcp", WrenchArray{}, 0.0), std::invalid_argument);
  EXPECT_THROW(device.push("fr3_tcp", WrenchArray{}, std::nan("")), std::invalid_argument);
  WrenchArray bad{};
  bad[4] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(device.push("fr3_tcp", bad, 1.0), std::invalid_argument);
  device.push("fr3_link4", WrenchArray{1.0, 0.0, 0.0, 0.0, 0.0, 0.0}, 0.0004);  // rounds up to one tick
  EXPECT_EQ(device.pushes_active(), 1);
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  EXPECT_EQ(device.pushes_active(), 0);
  for (int i = 0; i < MujocoDevice::kMaxPushes; ++i) {
    device.push("fr3_tcp", WrenchArray{}, 1.0);
  }
  EXPECT_THROW(device.push("fr3_tcp", WrenchArray{}, 1.0), std::length_error);
}

TEST(MujocoDevice, PushesFromAnotherThreadWhileTheRealTimeSideSteps) {
  MujocoDevice device(config_for(JTAC_FR3_TOOL_MJCF));
  std::atomic<bool> pushing_done{false};
  int failures = 0;
  std::uint64_t ticks = 0;
  std::thread real_time([&] {
    DeviceState state;
    // Runs until the pusher is done and every push has expired.
    while (!pushing_done.load() || device.pushes_active() > 0) {
      failures += device.write_once(hold(kFr3HomeRad)) != DeviceStatus::kOk;
      failures += device.read_once(state) != DeviceStatus::kOk;
      ++ticks;
    }
  });
  int refused = 0;  // the real-time thread was descheduled while kMaxPushes were waiting
  for (int i = 0; i < 200; ++i) {
    try {
      device.push(i % 2 == 0 ? "fr3_tcp" : "fr3_link6", WrenchArray{1.0, -1.0, 0.5, 0.0, 0.0, 0.1}, 0.002);
    } catch (const std::length_error&) {
      ++refused;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  pushing_done.store(true);
  real_time.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(device.pushes_active(), 0);
  EXPECT_GT(ticks, 0u);
  std::printf("[ measured ] 200 pushes from another thread over %llu ticks: %d refused, %llu dropped\n",
              static_cast<unsigned long long>(ticks), refused,
              static_cast<unsigned long long>(device.pushes_dropped()));
}

// A run of 1 s with a moving command and a push, recorded tick by tick.
std::vector<DeviceState> scripted_run() {
  MujocoDevice device(config_for(JTAC_FR3_TOOL_MJCF));
  std::vector<DeviceState> states;
  for (int i = 1; i <= 1000; ++i) {
    if (i == 300) {
      device.push("fr3_tcp", WrenchArray{3.0, -2.0, 5.0, 0.1, 0.0, -0.2}, 0.25);
    }
    DeviceCommand command = hold(kFr3HomeRad);
    for (int j = 0; j < kNumJoints; ++j) {
      command.q_d_rad[j] += 0.1 * std::sin(0.002 * i * (j + 1));
    }
    states.push_back(tick(device, command));
  }
  return states;
}

bool bit_identical(const JointArray& a, const JointArray& b) {
  return std::memcmp(a.data(), b.data(), sizeof a) == 0;
}

TEST(MujocoDevice, LockstepIsDeterministic) {
  const std::vector<DeviceState> a = scripted_run();
  const std::vector<DeviceState> b = scripted_run();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].tick, b[i].tick);
    ASSERT_TRUE(bit_identical(a[i].q_rad, b[i].q_rad)) << "tick " << a[i].tick;
    ASSERT_TRUE(bit_identical(a[i].dq_rad_s, b[i].dq_rad_s)) << "tick " << a[i].tick;
    ASSERT_TRUE(bit_identical(a[i].tau_J_Nm, b[i].tau_J_Nm)) << "tick " << a[i].tick;
    ASSERT_TRUE(bit_identical(a[i].tau_ext_Nm, b[i].tau_ext_Nm)) << "tick " << a[i].tick;
    ASSERT_EQ(
        std::memcmp(a[i].wrench_sensor_N_Nm.data(), b[i].wrench_sensor_N_Nm.data(), sizeof(WrenchArray)), 0)
        << "tick " << a[i].tick;
  }
  // The push mattered: the runs are not trivially equal.
  EXPECT_NE(a[400].tau_ext_Nm, JointArray{});
}

TEST(MujocoDevice, EchoesTheLastCommand) {
  MujocoDevice device(config_for(JTAC_FR3_MJCF));
  DeviceCommand first = hold(kFr3HomeRad);
  first.q_d_rad[0] = 0.01;
  DeviceCommand second = hold(kFr3HomeRad);
  second.q_d_rad[1] = -0.8;
  second.dq_d_rad_s[1] = -0.05;
  ASSERT_EQ(device.write_once(first), DeviceStatus::kOk);
  ASSERT_EQ(device.write_once(second), DeviceStatus::kOk);  // the newest command wins
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  EXPECT_EQ(state.q_d_rad, second.q_d_rad);
  EXPECT_EQ(state.dq_d_rad_s, second.dq_d_rad_s);
  EXPECT_EQ(state.ticks_without_new_command, 0u);
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);  // no new command: held and counted
  EXPECT_EQ(state.q_d_rad, second.q_d_rad);
  EXPECT_EQ(state.ticks_without_new_command, 1u);
}

TEST(MujocoDevice, RefusesANonFiniteCommandAndHoldsThePrevious) {
  MujocoDevice device(config_for(JTAC_FR3_MJCF));
  DeviceCommand good = hold(kFr3HomeRad);
  good.q_d_rad[3] = -2.3;
  DeviceState state = tick(device, good);
  for (int j = 0; j < kNumJoints; ++j) {
    DeviceCommand bad = good;
    bad.q_d_rad[j] = std::nan("");
    EXPECT_EQ(device.write_once(bad), DeviceStatus::kInvalidCommand);
    bad = good;
    bad.dq_d_rad_s[j] = -std::numeric_limits<double>::infinity();
    EXPECT_EQ(device.write_once(bad), DeviceStatus::kInvalidCommand);
  }
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  EXPECT_EQ(state.q_d_rad, good.q_d_rad);
  EXPECT_EQ(state.dq_d_rad_s, good.dq_d_rad_s);
  EXPECT_EQ(state.ticks_without_new_command, 1u);
  for (int j = 0; j < kNumJoints; ++j) {
    EXPECT_TRUE(std::isfinite(state.q_rad[j]));
  }
}

TEST(MujocoDevice, MotionFinishedEndsTheCommands) {
  MujocoDevice device(config_for(JTAC_FR3_MJCF));
  DeviceCommand last = hold(kFr3HomeRad);
  last.motion_finished = true;
  DeviceState state = tick(device, last);
  EXPECT_TRUE(state.motion_finished);
  DeviceCommand later = hold(kFr3HomeRad);
  later.q_d_rad[0] = 0.5;
  EXPECT_EQ(device.write_once(later), DeviceStatus::kMotionFinished);
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  EXPECT_EQ(state.q_d_rad, kFr3HomeRad);
  device.reset(kFr3HomeRad);  // a new motion
  EXPECT_EQ(device.write_once(later), DeviceStatus::kOk);
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  EXPECT_EQ(state.tick, 1u);
  EXPECT_FALSE(state.motion_finished);
}

TEST(MujocoDevice, RealTimeDeliversStatesOneMillisecondApart) {
  MujocoDevice device(config_for(JTAC_FR3_TOOL_MJCF, ClockMode::kRealTime));
  std::vector<double> period_ms;
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  auto last = std::chrono::steady_clock::now();
  const std::uint64_t first_tick = state.tick;
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(device.write_once(hold(kFr3HomeRad)), DeviceStatus::kOk);
    ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
    const auto now = std::chrono::steady_clock::now();
    period_ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
  }
  std::vector<double> sorted = period_ms;
  std::sort(sorted.begin(), sorted.end());
  const double median_ms = sorted[sorted.size() / 2];
  std::printf(
      "[ measured ] real time, 200 reads: period median %.4f ms, min %.4f, max %.4f; %llu ticks missed, "
      "%llu ticks without a new command\n",
      median_ms, sorted.front(), sorted.back(), static_cast<unsigned long long>(state.ticks_missed_by_reader),
      static_cast<unsigned long long>(state.ticks_without_new_command));
  EXPECT_GT(median_ms, 0.9);
  EXPECT_LT(median_ms, 1.1);
  EXPECT_EQ(state.tick - first_tick, 200u + state.ticks_missed_by_reader);
}

TEST(MujocoDevice, RealTimeLateReaderGetsTheNewestStateAndCountsTheSkippedTicks) {
  MujocoDevice device(config_for(JTAC_FR3_MJCF, ClockMode::kRealTime));
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  ASSERT_EQ(device.write_once(hold(kFr3HomeRad)), DeviceStatus::kOk);
  const std::uint64_t before = state.tick;
  const std::uint64_t without_before = state.ticks_without_new_command;  // 1: the first read had none
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  const std::uint64_t advanced = state.tick - before;
  EXPECT_GE(advanced, 20u);
  EXPECT_EQ(state.ticks_missed_by_reader, advanced - 1);
  // The command written before the sleep was on time for the next tick; the rest re-applied it.
  EXPECT_EQ(state.ticks_without_new_command - without_before, advanced - 1);
  EXPECT_LT(max_abs_diff(state.q_rad, kFr3HomeRad), 1e-3);
}

TEST(MujocoDevice, RealTimeLateCommandAppliesFromTheNextTickDueAfterItArrives) {
  MujocoDevice device(config_for(JTAC_FR3_MJCF, ClockMode::kRealTime));
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  const std::uint64_t before = state.tick;
  const std::uint64_t without_before = state.ticks_without_new_command;
  std::this_thread::sleep_for(std::chrono::microseconds(2500));  // ticks before+1, +2 fall due meanwhile
  DeviceCommand late = hold(kFr3HomeRad);
  late.q_d_rad[6] += 0.01;
  ASSERT_EQ(device.write_once(late), DeviceStatus::kOk);
  std::uint64_t first_echo_tick = 0;
  for (int i = 0; i < 50 && first_echo_tick == 0; ++i) {
    ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
    if (state.q_d_rad == late.q_d_rad) {
      first_echo_tick = state.tick;
    } else {
      EXPECT_EQ(state.q_d_rad, kFr3HomeRad);
    }
  }
  ASSERT_NE(first_echo_tick, 0u);
  EXPECT_GE(first_echo_tick, before + 3);
  EXPECT_EQ(state.ticks_without_new_command - without_before, first_echo_tick - before - 1);
}

TEST(MujocoDevice, StartsAtQInitAndConvergesToTheCommand) {
  MujocoDeviceConfig config = config_for(JTAC_FR3_TOOL_MJCF);
  for (int j = 0; j < kNumJoints; ++j) {
    config.q_init_rad[j] += 0.05;
  }
  MujocoDevice device(config);
  DeviceState state;
  for (int i = 0; i < 2000; ++i) {
    state = tick(device, hold(kFr3HomeRad));
  }
  const double error_rad = max_abs_diff(state.q_rad, kFr3HomeRad);
  std::printf("[ measured ] from home + 0.05 rad on every joint: %.3g rad from home after 2 s\n", error_rad);
  EXPECT_LT(error_rad, 1e-3);
}

TEST(MujocoDevice, ADivergingSimulationReportsADeviceError) {
  // No torque limits and a stiffness far beyond what a 1 ms explicit step can hold.
  MujocoDeviceConfig config = config_for(JTAC_FR3_MJCF);
  for (const char* range : {" ctrlrange=\"-87 87\"", " ctrlrange=\"-12 12\""}) {
    for (std::size_t at = config.mjcf_xml.find(range); at != std::string::npos;
         at = config.mjcf_xml.find(range)) {
      config.mjcf_xml.erase(at, std::strlen(range));
    }
  }
  config.stiffness_Nm_rad.fill(1e9);
  MujocoDevice device(config);
  // MuJoCo's default handler prints the warning and appends it to MUJOCO_LOG.TXT: count it instead.
  static int warnings = 0;
  warnings = 0;
  void (*const default_handler)(const char*) = mju_user_warning;
  mju_user_warning = [](const char*) { ++warnings; };
  DeviceCommand command = hold(kFr3HomeRad);
  command.q_d_rad[3] -= 0.1;
  DeviceStatus status = DeviceStatus::kOk;
  DeviceState state;
  for (int i = 0; i < 1000 && status == DeviceStatus::kOk; ++i) {
    ASSERT_EQ(device.write_once(command), DeviceStatus::kOk);
    status = device.read_once(state);
  }
  mju_user_warning = default_handler;
  EXPECT_EQ(status, DeviceStatus::kDeviceError);
  EXPECT_GT(warnings, 0);
}

}  // namespace
