// Model robots for the asynchronous interface's tests: what the robot applies, as franka-sim's checker
// differences it, and a robot on the host clock for the real-time thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>

#include "franka_hw/device.hpp"

namespace jtac::hw::test {

inline constexpr double kModelPeriodS = 0.001;

// The applied waypoints of a robot, differenced backward over the cycles between them (velocity,
// acceleration, jerk, as franka-sim's checker does), every missed cycle substituted at constant
// acceleration (v += a·T, q += v·T: Franka's control); the worst acceleration and jerk seen.
struct AppliedHistory {
  JointArray q{}, v{}, a{};
  double worst_acceleration_rad_s2 = 0.0;
  double worst_jerk_rad_s3 = 0.0;

  explicit AppliedHistory(const JointArray& q_start) : q(q_start) {}
  void apply(const JointArray& q_next, std::uint64_t cycles = 1) {
    const double dt = static_cast<double>(cycles) * kModelPeriodS;
    for (int i = 0; i < kNumJoints; ++i) {
      const double v_next = (q_next[i] - q[i]) / dt;
      const double a_next = (v_next - v[i]) / dt;
      worst_acceleration_rad_s2 = std::max(worst_acceleration_rad_s2, std::abs(a_next));
      worst_jerk_rad_s3 = std::max(worst_jerk_rad_s3, std::abs(a_next - a[i]) / dt);
      q[i] = q_next[i];
      v[i] = v_next;
      a[i] = a_next;
    }
  }
  void extrapolate() {
    for (int i = 0; i < kNumJoints; ++i) {
      v[i] += a[i] * kModelPeriodS;
      q[i] += v[i] * kModelPeriodS;
    }
  }
  /// The state of `tick`: the robot at its reference, which it echoes as q_d with the backward
  /// differences it judges the next command by (dq_d, ddq_d), as Franka's control does.
  DeviceState state_at(std::uint64_t tick) const {
    DeviceState state;
    state.tick = tick;
    state.time_s = static_cast<double>(tick) * kModelPeriodS;
    state.q_rad = q;
    state.q_d_rad = q;
    state.dq_d_rad_s = v;
    state.ddq_d_rad_s2 = a;
    return state;
  }
};

// A target 1 rad away on joints 1 and 4: the limiter runs at its acceleration bound toward it.
inline JointArray far_target() {
  JointArray q = kFr3HomeRad;
  q[0] += 1.0;
  q[3] += 1.0;
  return q;
}

// A robot behind a lossy link, in lockstep: every read hands out the next tick, except that a state
// datagram may be lost (the reader sees the tick after it; the cycle nobody answered is
// substituted), and a command datagram may be lost (its cycle is substituted; the reader notices
// nothing but the echo). Substitution at constant acceleration, as Franka's control documents it
// (libfranka docs/system_requirements.rst). Losses are drawn from a fixed-seed generator.
class LossyRobot final : public Device {
 public:
  LossyRobot(double state_loss, double command_loss, std::uint32_t seed, std::size_t packets)
      : state_loss_(state_loss), command_loss_(command_loss), random_(seed), packets_(packets) {}
  DeviceStatus read_once(DeviceState& state) noexcept override {
    if (reads_++ >= packets_) {
      return DeviceStatus::kDeviceError;
    }
    if (reads_ > 1) {
      advance();  // the cycle our last command answered
      while (draw() < state_loss_) {
        ++states_lost;
        advance_without_command();  // its state never reached us, so nobody answered it
      }
    }
    state = history.state_at(tick_);
    return DeviceStatus::kOk;
  }
  DeviceStatus write_once(const DeviceCommand& command) noexcept override {
    has_pending_ = draw() >= command_loss_;
    commands_lost += has_pending_ ? 0 : 1;
    pending_ = command.q_d_rad;
    return DeviceStatus::kOk;
  }
  double period_s() const noexcept override { return kModelPeriodS; }

  std::uint64_t states_lost = 0;
  std::uint64_t commands_lost = 0;
  AppliedHistory history{kFr3HomeRad};

 private:
  void advance() {
    ++tick_;
    if (has_pending_) {
      history.apply(pending_);
    } else {
      history.extrapolate();
    }
    has_pending_ = false;
  }
  void advance_without_command() {
    ++tick_;
    history.extrapolate();
  }
  double draw() {
    random_ = random_ * 6364136223846793005ULL + 1442695040888963407ULL;  // a 64-bit LCG
    return static_cast<double>(random_ >> 11) * 0x1.0p-53;
  }

  double state_loss_;
  double command_loss_;
  std::uint64_t random_;
  std::size_t packets_;
  std::size_t reads_ = 0;
  std::uint64_t tick_ = 0;
  bool has_pending_ = false;
  JointArray pending_{};
};

// A robot on the host clock for the real-time thread: a state every millisecond, the newest one
// handed to the reader (who waits for the next one when early, as with libfranka), and a command that
// arrives after the next state went out dropped and its cycle extrapolated (Franka's control). One
// packet can be slowed: write_once by `slow_write` at write `slow_packet` (a thread preempted between
// read and write: the command is late), or read_once by `slow_read` before read `slow_packet` (a
// thread preempted between write and read: the command was on time, the reader comes back after
// the next cycles). The run ends (kDeviceError) after `packets` reads.
class ClockedDroppingRobot final : public Device {
 public:
  using Clock = std::chrono::steady_clock;
  ClockedDroppingRobot(std::size_t slow_packet, Clock::duration slow_write, std::size_t packets,
                       Clock::duration slow_read = Clock::duration::zero())
      : slow_packet_(slow_packet), slow_write_(slow_write), slow_read_(slow_read), packets_(packets) {}
  DeviceStatus read_once(DeviceState& state) noexcept override {
    if (reads_ >= packets_) {
      return DeviceStatus::kDeviceError;
    }
    if (reads_ == slow_packet_ && slow_read_ > Clock::duration::zero()) {
      std::this_thread::sleep_for(slow_read_);
    }
    std::uint64_t tick = 0;
    if (reads_ == 0) {
      t0_ = Clock::now();
    } else {
      const auto published = static_cast<std::uint64_t>((Clock::now() - t0_) / kPeriod);
      if (published <= last_tick_) {
        std::this_thread::sleep_until(t0_ + (last_tick_ + 1) * kPeriod);
        tick = last_tick_ + 1;
      } else {
        tick = published;
      }
      // Cycle last_tick_ gets our answer if it arrived before the next state went out.
      std::uint64_t extrapolated = tick - last_tick_;
      const bool provoked = reads_ == slow_packet_ || reads_ == slow_packet_ + 1;
      if (pending_arrival_ <= t0_ + (last_tick_ + 1) * kPeriod) {
        history.apply(pending_);
        --extrapolated;
      } else {
        ++dropped;
        unprovoked_faults += provoked ? 0 : 1;
      }
      substituted += extrapolated;
      unprovoked_faults += provoked ? 0 : extrapolated;
      for (std::uint64_t k = 0; k < extrapolated; ++k) {
        history.extrapolate();
      }
    }
    ++reads_;
    last_tick_ = tick;
    state = history.state_at(tick);
    return DeviceStatus::kOk;
  }
  DeviceStatus write_once(const DeviceCommand& command) noexcept override {
    if (writes_++ == slow_packet_ && slow_write_ > Clock::duration::zero()) {
      std::this_thread::sleep_for(slow_write_);
    }
    pending_ = command.q_d_rad;
    pending_arrival_ = Clock::now();
    return DeviceStatus::kOk;
  }
  double period_s() const noexcept override { return kModelPeriodS; }

  std::uint64_t dropped = 0;      ///< commands that arrived after their cycle
  std::uint64_t substituted = 0;  ///< cycles the robot extrapolated
  /// Drops and substitutions around other packets than the slowed one: the host scheduler's, not
  /// the test's. A run with any is inconclusive (the tests run it again).
  std::uint64_t unprovoked_faults = 0;
  AppliedHistory history{kFr3HomeRad};

 private:
  static constexpr std::chrono::microseconds kPeriod{1000};

  std::size_t slow_packet_;
  Clock::duration slow_write_;
  Clock::duration slow_read_;
  std::size_t packets_;
  std::size_t reads_ = 0;
  std::size_t writes_ = 0;
  Clock::time_point t0_{};
  Clock::time_point pending_arrival_{};
  std::uint64_t last_tick_ = 0;
  JointArray pending_{};
};

}  // namespace jtac::hw::test
