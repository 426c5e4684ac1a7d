// FrankaDevice without a robot: the pure state mapping and tick bookkeeping, and the device over a
// scripted franka::ActiveControlBase (states to hand out, exceptions to throw, commands recorded).
// Built with JTAC_FRANKA_DEVICE_NOALLOC under malloc_tests' counter: then only the allocation test.
#include <gtest/gtest.h>

#include <franka/active_control_base.h>
#include <franka/control_types.h>
#include <franka/exception.h>
#include <franka/robot_state.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "franka_hw/async_interface.hpp"
#include "franka_hw/franka_device.hpp"

#ifdef JTAC_FRANKA_DEVICE_NOALLOC
#include "malloc_counter.hpp"
#endif

namespace {

using jtac::hw::DeviceCommand;
using jtac::hw::DeviceState;
using jtac::hw::DeviceStatus;
using jtac::hw::FrankaControlMode;
using jtac::hw::FrankaDevice;
using jtac::hw::FrankaDeviceConfig;
using jtac::hw::JointArray;

/// What the fake was asked to write.
struct Written {
  enum class Kind { kPositions, kVelocities, kOther } kind = Kind::kOther;
  JointArray values{};
  bool motion_finished = false;
};

/// A scripted ActiveControl: readOnce hands out `states` in order (robot time advancing 1 ms each
/// when the script runs out), or throws `read_error`; writeOnce records, or throws `write_error`.
class FakeControl final : public franka::ActiveControlBase {
 public:
  std::pair<franka::RobotState, franka::Duration> readOnce() override {
    ++reads;
    if (read_error) {
      throw franka::ControlException(*read_error);
    }
    franka::RobotState state;
    if (!states.empty()) {
      state = states.front();
      states.pop_front();
    } else {
      state.time = franka::Duration(next_time_ms);
    }
    next_time_ms = state.time.toMSec() + 1;
    return {state, franka::Duration(1)};
  }
  void writeOnce(const franka::JointPositions& command) override {
    record({Written::Kind::kPositions, command.q, command.motion_finished});
  }
  void writeOnce(const franka::JointVelocities& command) override {
    record({Written::Kind::kVelocities, command.dq, command.motion_finished});
  }
  void writeOnce(const franka::Torques& /*command*/) override { record({}); }
  void writeOnce(const franka::JointPositions& /*command*/,
                 const std::optional<const franka::Torques>& /*t*/) override {
    record({});
  }
  void writeOnce(const franka::JointVelocities& /*command*/,
                 const std::optional<const franka::Torques>& /*t*/) override {
    record({});
  }
  void writeOnce(const franka::CartesianPose& /*command*/,
                 const std::optional<const franka::Torques>& /*t*/) override {
    record({});
  }
  void writeOnce(const franka::CartesianVelocities& /*command*/,
                 const std::optional<const franka::Torques>& /*t*/) override {
    record({});
  }
  void writeOnce(const franka::CartesianPose& /*command*/) override { record({}); }
  void writeOnce(const franka::CartesianVelocities& /*command*/) override { record({}); }

  std::deque<franka::RobotState> states;
  std::uint64_t next_time_ms = 1000;
  std::optional<std::string> read_error;
  std::optional<std::string> write_error;
  int reads = 0;
  int writes = 0;
  Written last;

 private:
  void record(const Written& w) {
    ++writes;
    if (write_error) {
      throw franka::ControlException(*write_error);
    }
    last = w;
  }
};

DeviceCommand position_command(double offset) {
  DeviceCommand c;
  for (std::size_t j = 0; j < c.q_d_rad.size(); ++j) {
    c.q_d_rad[j] = 0.1 * static_cast<double>(j) + offset;
    c.dq_d_rad_s[j] = 0.01 * static_cast<double>(j);
  }
  return c;
}

#ifndef JTAC_FRANKA_DEVICE_NOALLOC

franka::RobotState state_at(std::uint64_t time_ms) {
  franka::RobotState s;
  s.time = franka::Duration(time_ms);
  return s;
}

// ------------------------------------------------------------------ pure functions

TEST(FrankaDeviceMapping, TickIsRobotMillisecondsSinceTheFirstState) {
  EXPECT_EQ(jtac::hw::franka_tick(1000, 1000), 0u);
  EXPECT_EQ(jtac::hw::franka_tick(1005, 1000), 5u);
  EXPECT_EQ(jtac::hw::franka_tick(999, 1000), 0u);  // never negative
  static_assert(jtac::hw::franka_tick(123457, 123456) == 1);
  EXPECT_DOUBLE_EQ(jtac::hw::kFrankaPeriodS, 0.001);
}

TEST(FrankaDeviceMapping, JointsTorquesAndTheEstimatedWrenchWithOurSigns) {
  franka::RobotState robot;
  for (std::size_t j = 0; j < 7; ++j) {
    const double x = static_cast<double>(j + 1);
    robot.q[j] = 0.1 * x;
    robot.dq[j] = 0.2 * x;
    robot.q_d[j] = 0.3 * x;
    robot.dq_d[j] = 0.4 * x;
    robot.tau_J[j] = 5.0 * x;
    robot.tau_ext_hat_filtered[j] = 0.5 * x;
  }
  // Pulling the tool along +z_K (libfranka: the robot pushes back, reads −z) with 10 N at 0.1 m.
  robot.K_F_ext_hat_K = {1.0, 2.0, -10.0, 0.5, -0.25, 0.125};
  robot.O_F_ext_hat_K = {99.0, 99.0, 99.0, 99.0, 99.0, 99.0};  // never used: base axes

  DeviceState state;
  state.tick = 42;  // tick fields are the counter's, not the mapping's
  jtac::hw::map_franka_state(robot, /*use_estimated_wrench=*/true, state);
  EXPECT_EQ(state.tick, 42u);
  for (std::size_t j = 0; j < 7; ++j) {
    EXPECT_EQ(state.q_rad[j], robot.q[j]);
    EXPECT_EQ(state.dq_rad_s[j], robot.dq[j]);
    EXPECT_EQ(state.q_d_rad[j], robot.q_d[j]);
    EXPECT_EQ(state.dq_d_rad_s[j], robot.dq_d[j]);
    EXPECT_EQ(state.tau_J_Nm[j], robot.tau_J[j]);
    EXPECT_EQ(state.tau_ext_Nm[j], -robot.tau_ext_hat_filtered[j]);  // external torque on the arm
  }
  ASSERT_TRUE(state.has_wrench);
  const jtac::hw::WrenchArray expected = {-1.0, -2.0, 10.0, -0.5, 0.25, -0.125};  // the tool's on the sensor
  EXPECT_EQ(state.wrench_sensor_N_Nm, expected);
  EXPECT_FALSE(state.motion_finished);

  jtac::hw::map_franka_state(robot, /*use_estimated_wrench=*/false, state);
  EXPECT_FALSE(state.has_wrench);
  EXPECT_EQ(state.wrench_sensor_N_Nm, jtac::hw::WrenchArray{});
}

TEST(FrankaDeviceMapping, TickCounterCountsMissedTicksAndTicksWithoutCommand) {
  jtac::hw::FrankaTickCounter counter;
  DeviceState s;
  counter.on_state(5000, false, s);  // first state: tick 0 whatever the robot time
  EXPECT_EQ(s.tick, 0u);
  EXPECT_EQ(s.ticks_missed_by_reader, 0u);
  EXPECT_EQ(s.ticks_without_new_command, 0u);

  counter.on_state(5001, true, s);  // the next tick, a command written in between
  EXPECT_EQ(s.tick, 1u);
  EXPECT_DOUBLE_EQ(s.time_s, 0.001);
  EXPECT_EQ(s.ticks_missed_by_reader, 0u);
  EXPECT_EQ(s.ticks_without_new_command, 0u);

  counter.on_state(5004, true, s);  // came late: ticks 2 and 3 never seen, and only tick 2 had a new command
  EXPECT_EQ(s.tick, 4u);
  EXPECT_DOUBLE_EQ(s.time_s, 0.004);
  EXPECT_EQ(s.ticks_missed_by_reader, 2u);
  EXPECT_EQ(s.ticks_without_new_command, 2u);

  counter.on_state(5005, false, s);  // no command written: tick 5 re-applied the previous one
  EXPECT_EQ(s.tick, 5u);
  EXPECT_EQ(s.ticks_missed_by_reader, 2u);
  EXPECT_EQ(s.ticks_without_new_command, 3u);

  counter.on_state(5005, true, s);  // a duplicate: nothing advances
  counter.on_state(5003, true, s);  // a clock that went back: held, not wrapped
  EXPECT_EQ(s.tick, 5u);
  EXPECT_EQ(s.ticks_missed_by_reader, 2u);
  EXPECT_EQ(s.ticks_without_new_command, 3u);

  counter.reset();
  counter.on_state(9000, false, s);
  EXPECT_EQ(s.tick, 0u);
  EXPECT_EQ(s.ticks_missed_by_reader, 0u);
}

TEST(FrankaDeviceMapping, ControlModeOfAnUnknownImplementationIsNone) {
  FakeControl fake;
  EXPECT_FALSE(jtac::hw::franka_control_mode(fake).has_value());
}

// ------------------------------------------------------------------ the device over a fake control

TEST(FrankaDevice, ReadsStatesAndWritesJointPositions) {
  FakeControl fake;
  franka::RobotState first = state_at(20000);
  first.q_d = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
  first.control_command_success_rate = 0.97;
  fake.states = {first, state_at(20001), state_at(20003)};
  FrankaDevice device(fake, FrankaDeviceConfig{});
  EXPECT_EQ(device.period_s(), 0.001);
  EXPECT_EQ(device.mode(), FrankaControlMode::kJointPosition);

  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  EXPECT_EQ(state.tick, 0u);
  EXPECT_EQ(state.q_d_rad, first.q_d);
  EXPECT_FALSE(state.has_wrench);
  EXPECT_DOUBLE_EQ(device.command_success_rate(), 0.97);

  const DeviceCommand command = position_command(0.0);
  ASSERT_EQ(device.write_once(command), DeviceStatus::kOk);
  EXPECT_EQ(fake.last.kind, Written::Kind::kPositions);
  EXPECT_EQ(fake.last.values, command.q_d_rad);
  EXPECT_FALSE(fake.last.motion_finished);

  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  EXPECT_EQ(state.tick, 1u);
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);  // no command since the last state, a gap
  EXPECT_EQ(state.tick, 3u);
  EXPECT_EQ(state.ticks_missed_by_reader, 1u);
  EXPECT_EQ(state.ticks_without_new_command, 2u);
  EXPECT_FALSE(device.has_error());
  EXPECT_TRUE(device.last_error().empty());
}

TEST(FrankaDevice, VelocityControlWritesJointVelocities) {
  FakeControl fake;
  FrankaDevice device(fake, {.mode = FrankaControlMode::kJointVelocity, .use_estimated_wrench = true});
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  EXPECT_TRUE(state.has_wrench);
  const DeviceCommand command = position_command(0.0);
  ASSERT_EQ(device.write_once(command), DeviceStatus::kOk);
  EXPECT_EQ(fake.last.kind, Written::Kind::kVelocities);
  EXPECT_EQ(fake.last.values, command.dq_d_rad_s);
}

TEST(FrankaDevice, ANonFiniteCommandIsRefusedAndThePreviousOneSentAgain) {
  FakeControl fake;
  franka::RobotState first = state_at(1);
  first.q_d = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
  fake.states = {first};
  FrankaDevice device(fake, FrankaDeviceConfig{});
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);

  DeviceCommand bad = position_command(0.0);
  bad.q_d_rad[2] = std::nan("");
  // Before any command: the robot's echoed q_d stays in force.
  EXPECT_EQ(device.write_once(bad), DeviceStatus::kInvalidCommand);
  EXPECT_EQ(fake.writes, 1);
  EXPECT_EQ(fake.last.values, first.q_d);

  const DeviceCommand good = position_command(0.2);
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  ASSERT_EQ(device.write_once(good), DeviceStatus::kOk);
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  bad.dq_d_rad_s[0] = INFINITY;
  bad.q_d_rad[2] = 0.0;
  EXPECT_EQ(device.write_once(bad), DeviceStatus::kInvalidCommand);
  EXPECT_EQ(fake.writes, 3);
  EXPECT_EQ(fake.last.values, good.q_d_rad);  // the previous command, again
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  EXPECT_EQ(state.ticks_without_new_command, 0u);  // it counted as a command: no lost packet
}

TEST(FrankaDevice, MotionFinishedEndsTheMotionWithoutFurtherCallsIntoLibfranka) {
  FakeControl fake;
  FrankaDevice device(fake, FrankaDeviceConfig{});
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  DeviceCommand last = position_command(0.0);
  last.motion_finished = true;
  ASSERT_EQ(device.write_once(last), DeviceStatus::kOk);
  EXPECT_TRUE(fake.last.motion_finished);
  const int reads = fake.reads;
  const int writes = fake.writes;
  EXPECT_EQ(device.read_once(state), DeviceStatus::kMotionFinished);
  EXPECT_TRUE(state.motion_finished);
  EXPECT_EQ(device.write_once(position_command(0.0)), DeviceStatus::kMotionFinished);
  EXPECT_EQ(fake.reads, reads);
  EXPECT_EQ(fake.writes, writes);
}

TEST(FrankaDevice, FinishingSendsTheLastCommandBitForBitNotTheRobotsEcho) {
  FakeControl fake;
  franka::RobotState echo = state_at(1);
  echo.q_d = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
  // The robot's echo of the command, rounded (franka-sim's lies within 0.04 µrad of it).
  franka::RobotState rounded = state_at(2);
  const DeviceCommand last = position_command(0.3);
  for (std::size_t j = 0; j < rounded.q_d.size(); ++j) {
    rounded.q_d[j] = static_cast<double>(static_cast<float>(last.q_d_rad[j]));
  }
  fake.states = {echo, rounded};
  FrankaDevice device(fake, FrankaDeviceConfig{});
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  ASSERT_EQ(device.write_once(last), DeviceStatus::kOk);
  ASSERT_NE(rounded.q_d, last.q_d_rad);
  ASSERT_EQ(device.finish_motion(state), DeviceStatus::kOk);
  EXPECT_EQ(fake.reads, 2);
  EXPECT_EQ(fake.last.kind, Written::Kind::kPositions);
  EXPECT_EQ(fake.last.values, last.q_d_rad);
  EXPECT_TRUE(fake.last.motion_finished);
  EXPECT_EQ(device.read_once(state), DeviceStatus::kMotionFinished);
}

TEST(FrankaDevice, FinishingBeforeAnyCommandHoldsTheEchoAndVelocityControlStops) {
  FakeControl position_fake;
  franka::RobotState echo = state_at(1);
  echo.q_d = {0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.5};
  position_fake.states = {echo};
  FrankaDevice position(position_fake, FrankaDeviceConfig{});
  DeviceState state;
  ASSERT_EQ(position.finish_motion(state), DeviceStatus::kOk);
  EXPECT_EQ(position_fake.last.values, echo.q_d);
  EXPECT_TRUE(position_fake.last.motion_finished);

  FakeControl velocity_fake;
  FrankaDevice velocity(velocity_fake, {.mode = FrankaControlMode::kJointVelocity});
  ASSERT_EQ(velocity.read_once(state), DeviceStatus::kOk);
  ASSERT_EQ(velocity.write_once(position_command(0.0)), DeviceStatus::kOk);
  ASSERT_EQ(velocity.finish_motion(state), DeviceStatus::kOk);
  EXPECT_EQ(velocity_fake.last.kind, Written::Kind::kVelocities);
  EXPECT_EQ(velocity_fake.last.values, JointArray{});
  EXPECT_TRUE(velocity_fake.last.motion_finished);
}

TEST(FrankaDevice, FinishingAfterAnErrorTouchesNothing) {
  FakeControl fake;
  fake.read_error = "communication_constraints_violation";
  FrankaDevice device(fake, FrankaDeviceConfig{});
  DeviceState state;
  EXPECT_EQ(device.finish_motion(state), DeviceStatus::kDeviceError);
  EXPECT_EQ(fake.writes, 0);
}

TEST(FrankaDevice, AReleasedDeviceNeverTouchesTheControlAgain) {
  auto fake = std::make_unique<FakeControl>();
  FrankaDevice device(*fake, FrankaDeviceConfig{});
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  ASSERT_EQ(device.write_once(position_command(0.0)), DeviceStatus::kOk);
  EXPECT_TRUE(device.holds_control());
  device.release();
  device.release();  // idempotent
  EXPECT_FALSE(device.holds_control());
  fake.reset();  // its owner may end the control now: the device must not reach it
  EXPECT_EQ(device.read_once(state), DeviceStatus::kNotConfigured);
  EXPECT_EQ(device.write_once(position_command(0.0)), DeviceStatus::kNotConfigured);
  EXPECT_FALSE(device.has_error());
}

TEST(FrankaDevice, WithoutAControlItWaitsUntilAttachAndNeverErrs) {
  FakeControl fake;
  FrankaDevice device(FrankaDeviceConfig{});
  DeviceState state;
  EXPECT_FALSE(device.holds_control());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(device.read_once(state), DeviceStatus::kWaiting);
  }
  EXPECT_EQ(fake.reads, 0);
  EXPECT_FALSE(device.has_error());
  ASSERT_TRUE(device.attach(fake));
  EXPECT_FALSE(device.attach(fake));  // one motion per device
  EXPECT_TRUE(device.holds_control());
  EXPECT_EQ(device.read_once(state), DeviceStatus::kOk);
  EXPECT_EQ(device.write_once(position_command(0.0)), DeviceStatus::kOk);
  EXPECT_EQ(fake.reads, 1);
  EXPECT_EQ(fake.writes, 1);
  EXPECT_EQ(state.tick, 0U);  // robot time counts from the motion's first state
}

TEST(FrankaDevice, AReleasedWaitingDeviceEndsItsReaderAndTakesNoControl) {
  FakeControl fake;
  FrankaDevice device(FrankaDeviceConfig{});
  device.release();
  DeviceState state;
  EXPECT_EQ(device.read_once(state), DeviceStatus::kNotConfigured);
  EXPECT_FALSE(device.attach(fake));
  EXPECT_EQ(fake.reads, 0);
}

TEST(FrankaDevice, TheHardwareThreadServesAMotionAttachedWhileItWaits) {
  // The start-up order of FrankaArm + Controller: the hardware thread runs first, the motion is
  // attached later from another thread, and the first command follows the first state.
  FakeControl fake;
  FrankaDevice device(FrankaDeviceConfig{});
  jtac::hw::AsyncInterface hardware(device);
  ASSERT_TRUE(hardware.start());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(hardware.counters().packets, 0U);
  EXPECT_EQ(hardware.counters().device_errors, 0U);
  EXPECT_TRUE(hardware.running());
  ASSERT_TRUE(device.attach(fake));
  for (int i = 0; i < 2000 && hardware.counters().packets < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  hardware.stop();
  EXPECT_GE(hardware.counters().packets, 5U);
  EXPECT_EQ(fake.writes, static_cast<int>(hardware.counters().packets));
  EXPECT_EQ(hardware.counters().device_errors, 0U);
}

TEST(FrankaDevice, AWaitingHardwareThreadStopsWhenAsked) {
  FrankaDevice device(FrankaDeviceConfig{});
  jtac::hw::AsyncInterface hardware(device);
  ASSERT_TRUE(hardware.start());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  hardware.stop();  // returns: the waiting reader polls, it never blocks
  EXPECT_FALSE(hardware.running());
  EXPECT_EQ(hardware.counters().packets, 0U);
}

TEST(FrankaDevice, AReflexBecomesADeviceErrorWithLibfrankasMessage) {
  FakeControl fake;
  FrankaDevice device(fake, FrankaDeviceConfig{});
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  ASSERT_EQ(device.write_once(position_command(0.0)), DeviceStatus::kOk);
  const std::string reflex =
      "libfranka: Move command aborted: motion aborted by reflex! [\"communication_constraints_violation\"]";
  fake.read_error = reflex;
  EXPECT_EQ(device.read_once(state), DeviceStatus::kDeviceError);
  EXPECT_TRUE(device.has_error());
  EXPECT_EQ(std::string(device.last_error()), "readOnce: " + reflex);

  // Sticky: libfranka is not called again, and the first message is kept.
  fake.read_error.reset();
  fake.write_error = "a later error";
  const int reads = fake.reads;
  const int writes = fake.writes;
  EXPECT_EQ(device.read_once(state), DeviceStatus::kDeviceError);
  EXPECT_EQ(device.write_once(position_command(0.0)), DeviceStatus::kDeviceError);
  EXPECT_EQ(fake.reads, reads);
  EXPECT_EQ(fake.writes, writes);
  EXPECT_EQ(std::string(device.last_error()), "readOnce: " + reflex);
}

TEST(FrankaDevice, AWriteErrorIsCaughtAndALongMessageTruncated) {
  FakeControl fake;
  FrankaDevice device(fake, FrankaDeviceConfig{});
  DeviceState state;
  ASSERT_EQ(device.read_once(state), DeviceStatus::kOk);
  fake.write_error = std::string(2000, 'x');
  EXPECT_EQ(device.write_once(position_command(0.0)), DeviceStatus::kDeviceError);
  const std::string message(device.last_error());
  EXPECT_EQ(message.size(), FrankaDevice::kErrorCapacity - 1);
  EXPECT_EQ(message.rfind("writeOnce: xxx", 0), 0u);
}

TEST(FrankaDevice, TheErrorIsReadableFromAnotherThread) {
  FakeControl fake;
  FrankaDevice device(fake, FrankaDeviceConfig{});
  std::atomic<bool> go{false};
  std::string seen;
  std::thread watcher([&] {
    go.store(true);
    while (!device.has_error()) {
      std::this_thread::yield();
    }
    seen = std::string(device.last_error());
  });
  while (!go.load()) {
    std::this_thread::yield();
  }
  fake.read_error = "libfranka: UDP receive: Timeout";
  DeviceState state;
  EXPECT_EQ(device.read_once(state), DeviceStatus::kDeviceError);
  watcher.join();
  EXPECT_EQ(seen, "readOnce: libfranka: UDP receive: Timeout");
}

#else  // JTAC_FRANKA_DEVICE_NOALLOC

// read_once()/write_once() allocate nothing themselves (the fake's readOnce returns a RobotState by
// value, as libfranka's does), through every path but the error one: valid, refused, skipped ticks.
TEST(FrankaDeviceNoAlloc, ReadWriteAllocateNothing) {
  FakeControl fake;
  FrankaDevice device(fake, {.mode = FrankaControlMode::kJointPosition, .use_estimated_wrench = true});
  DeviceState state;
  int failures = 0;
  DeviceCommand bad = position_command(0.0);
  bad.q_d_rad[0] = std::nan("");
  const DeviceCommand good = position_command(0.0);
  const auto allocations = jtac::test::count_allocations([&] {
    for (int i = 0; i < 1000; ++i) {
      failures += device.read_once(state) != DeviceStatus::kOk;
      if (i % 13 == 5) {
        fake.next_time_ms += 2;  // a late reader
      }
      failures += device.write_once(i % 7 == 3 ? bad : good) !=
                  (i % 7 == 3 ? DeviceStatus::kInvalidCommand : DeviceStatus::kOk);
    }
  });
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(allocations, 0);
  EXPECT_GT(state.ticks_missed_by_reader, 0u);
}

#endif  // JTAC_FRANKA_DEVICE_NOALLOC

}  // namespace
