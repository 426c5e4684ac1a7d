// CatchUp on its own and in StreamLaw, cycle by cycle: a stream opened on a motion already under way
// (chunks and single targets), a brake while catching up, references that step and jump at random.
// The command's acceleration is measured as the robot sees it, |Δdq_cmd|/dt per cycle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "franka_hw/device.hpp"
#include "jtac_loop/catch_up.hpp"
#include "jtac_loop/stream_law.hpp"
#include "stream_test_support.hpp"

namespace {

using jtac::hw::DeviceState;
using jtac::hw::JointArray;
using jtac::hw::kFr3HomeRad;
using jtac::hw::kNumJoints;
using jtac::loop::CatchUp;
using jtac::loop::CatchUpBound;
using jtac::loop::StreamLaw;
using jtac::loop::StreamSample;

constexpr double kT = 0.001;
constexpr double kStopAccelerationRadS2 = 2.0;

// The sender's motion: joints 1, 4 and 6 swing as home + A(1 − cos ωt), already under way at t = 0
// when `moving` (t0 = −0.6 s: 0.28–0.35 rad/s at the open), at rest otherwise. Peak acceleration
// A·ω² ≤ 0.7 rad/s².
JointArray motion(double t_s, bool moving) {
  const double tau = t_s + (moving ? 0.6 : 0.0);
  JointArray q = kFr3HomeRad;
  const double amplitude[3] = {0.3, 0.2, 0.15};
  const double omega[3] = {1.5, 1.8, 2.0};
  const int joints[3] = {0, 3, 5};
  for (int k = 0; k < 3; ++k) {
    q[joints[k]] += amplitude[k] * (1.0 - std::cos(omega[k] * tau));
  }
  return q;
}

struct StreamRun {
  std::vector<double> time_s;
  std::vector<JointArray> q_cmd_rad;
  std::vector<JointArray> dq_cmd_rad_s;
  std::vector<bool> at_rest;

  // Largest |Δdq_cmd|/dt over the cycles in [from_s, to_s) [rad/s²].
  double max_acceleration(double from_s = 0.0, double to_s = 1e9) const {
    double worst = 0.0;
    for (std::size_t k = 1; k < time_s.size(); ++k) {
      if (time_s[k] < from_s || time_s[k] >= to_s) {
        continue;
      }
      for (int i = 0; i < kNumJoints; ++i) {
        worst = std::max(worst, std::abs(dq_cmd_rad_s[k][i] - dq_cmd_rad_s[k - 1][i]) / kT);
      }
    }
    return worst;
  }
  // Largest change of that acceleration per cycle / dt [rad/s³].
  double max_jerk() const {
    double worst = 0.0;
    for (std::size_t k = 2; k < time_s.size(); ++k) {
      for (int i = 0; i < kNumJoints; ++i) {
        const double a1 = (dq_cmd_rad_s[k][i] - dq_cmd_rad_s[k - 1][i]) / kT;
        const double a0 = (dq_cmd_rad_s[k - 1][i] - dq_cmd_rad_s[k - 2][i]) / kT;
        worst = std::max(worst, std::abs(a1 - a0) / kT);
      }
    }
    return worst;
  }
  // Whether q_cmd's differences agree with dq_cmd (no position step beside the velocity) [rad].
  double max_position_step() const {
    double worst = 0.0;
    for (std::size_t k = 1; k < time_s.size(); ++k) {
      for (int i = 0; i < kNumJoints; ++i) {
        const double trapezoid = 0.5 * (dq_cmd_rad_s[k][i] + dq_cmd_rad_s[k - 1][i]) * kT;
        worst = std::max(worst, std::abs(q_cmd_rad[k][i] - q_cmd_rad[k - 1][i] - trapezoid));
      }
    }
    return worst;
  }
};

// A StreamLaw at 1 kHz from home at rest for `duration_s`; `send(law, tick)` is the sender, called
// before each cycle; `begin_handover_s` (when ≥ 0) closes the stream then, as the loop does.
StreamRun run_stream(StreamLaw& law, double duration_s, const std::function<void(StreamLaw&, int)>& send,
                     double begin_handover_s = -1.0) {
  DeviceState state;
  jtac::loop::test::activate_at_home(law, state);
  law.set_stop_accelerations(JointArray{2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0});
  StreamRun run;
  const int ticks = static_cast<int>(std::lround(duration_s / kT));
  for (int tick = 0; tick <= ticks; ++tick) {
    state.tick = static_cast<std::uint64_t>(tick);
    state.time_s = tick * kT;
    if (begin_handover_s >= 0.0 && std::abs(state.time_s - begin_handover_s) < 0.5 * kT) {
      law.begin_handover(state.time_s);
    } else if (begin_handover_s < 0.0 || state.time_s < begin_handover_s) {
      send(law, tick);
    }
    jtac::loop::LawOutput out;
    EXPECT_EQ(law.update(state, state.time_s, kT, out), jtac::UpdateStatus::kOk);
    run.time_s.push_back(state.time_s);
    run.q_cmd_rad.push_back(out.q_cmd_rad);
    run.dq_cmd_rad_s.push_back(out.dq_cmd_rad_s);
    run.at_rest.push_back(law.at_rest());
    state.q_d_rad = out.q_cmd_rad;
  }
  return run;
}

jtac::loop::ChunkStreamConfig stream_config() {
  jtac::loop::ChunkStreamConfig config;
  config.controller_period_s = kT;
  config.stop_accelerations_rad_s2.fill(kStopAccelerationRadS2);
  return config;
}

// A policy's 10 Hz chunks: 16 points 20 ms apart from the observation's time.
void send_chunk(StreamLaw& law, int tick, bool moving) {
  if (tick % 100 != 0) {
    return;
  }
  std::vector<double> times(16);
  std::vector<JointArray> q(16);
  for (std::size_t k = 0; k < times.size(); ++k) {
    times[k] = tick * kT + 0.02 * static_cast<double>(k);
    q[k] = motion(times[k], moving);
  }
  EXPECT_TRUE(law.set_chunk(times, q, {}));
}

// A teleoperation sender's 125 Hz single targets, stamped when sent.
void send_target(StreamLaw& law, int tick, bool moving) {
  if (tick % 8 == 0) {
    EXPECT_TRUE(law.set_target(motion(tick * kT, moving), tick * kT));
  }
}

}  // namespace

// A stream opened while the policy's motion is under way (0.28–0.35 rad/s, the arm at rest): the
// join alone would need ~13 rad/s² (chunks: 3.75·v over the 0.1 s blend) or more (targets); the command
// catches up within the stop acceleration, with bounded jerk, and is then exactly on the stream. Opened at
// rest on the same motion, nothing is caught up and the command is the stream's own.
TEST(CatchUp, AStreamOpenedOnAMotionUnderWayCatchesUpWithinTheStopAcceleration) {
  for (const bool chunks : {true, false}) {
    SCOPED_TRACE(chunks ? "10 Hz chunks" : "125 Hz targets");
    const auto send = [chunks](StreamLaw& law, int tick) {
      chunks ? send_chunk(law, tick, true) : send_target(law, tick, true);
    };
    StreamLaw law(stream_config());
    const StreamRun run = run_stream(law, 3.0, send);
    EXPECT_GE(law.catch_ups(), 1U);
    EXPECT_LE(run.max_acceleration(), kStopAccelerationRadS2 * (1.0 + 1e-6));
    EXPECT_LE(run.max_jerk(), 1000.0 * 1.01 + kStopAccelerationRadS2 / kT);  // the catch-up's, or one step
    EXPECT_LT(run.max_position_step(), 1e-6);  // a C² curve's own: jerk·dt³/12, ≤ 1e-7 here
    // On the stream after 2 s: the command is the motion's, a single target's delay behind at most.
    const double lag_s = chunks ? 0.0 : 0.0125;
    const JointArray want = motion(run.time_s.back() - lag_s, true);
    for (int i = 0; i < kNumJoints; ++i) {
      EXPECT_NEAR(run.q_cmd_rad.back()[i], want[i], chunks ? 1e-4 : 2e-3) << "joint " << i;
    }
    // Opened at rest on the same motion: passed through, never caught up.
    const auto send_rest = [chunks](StreamLaw& l, int tick) {
      chunks ? send_chunk(l, tick, false) : send_target(l, tick, false);
    };
    StreamLaw at_rest(stream_config());
    run_stream(at_rest, 2.0, send_rest);
    EXPECT_EQ(at_rest.catch_ups(), 0U);
  }
}

// Closed (the loop's hand-over) while the command still catches up at full acceleration: the command
// eases its acceleration to zero at the catch-up's jerk, then brakes from its own state within the
// stop acceleration — never the 2a step from +a straight into −a — and is at rest within the brake's
// time.
TEST(CatchUp, AStreamClosedWhileItCatchesUpBrakesFromTheCommandWithinTheStopAcceleration) {
  for (const double close_s : {0.03, 0.06, 0.15, 0.3}) {
    SCOPED_TRACE(close_s);
    StreamLaw law(stream_config());
    const StreamRun run =
        run_stream(law, close_s + 1.0, [](StreamLaw& l, int tick) { send_target(l, tick, true); }, close_s);
    EXPECT_GE(law.catch_ups(), 1U);
    EXPECT_LE(run.max_acceleration(), kStopAccelerationRadS2 * (1.0 + 1e-6));
    EXPECT_LE(run.max_jerk(), 1000.0 * 1.01 + kStopAccelerationRadS2 / kT);
    EXPECT_LT(run.max_position_step(), 1e-6);
    // At rest within the ease (≤ a / jerk) and the brake (≤ the top speed / a) of the close.
    double speed = 0.0;
    std::size_t k_close = 0;
    while (run.time_s[k_close] < close_s) {
      ++k_close;
    }
    for (double v : run.dq_cmd_rad_s[k_close]) {
      speed = std::max(speed, std::abs(v));
    }
    const double rest_by_s =
        close_s + kStopAccelerationRadS2 / 1000.0 + speed / kStopAccelerationRadS2 + 0.005;
    std::size_t k_rest = k_close;
    while (k_rest < run.time_s.size() && !run.at_rest[k_rest]) {
      ++k_rest;
    }
    ASSERT_LT(k_rest, run.time_s.size());
    EXPECT_LE(run.time_s[k_rest], rest_by_s);
    for (std::size_t k = k_rest; k < run.time_s.size(); ++k) {
      for (int i = 0; i < kNumJoints; ++i) {
        ASSERT_EQ(run.dq_cmd_rad_s[k][i], 0.0);
        ASSERT_EQ(run.q_cmd_rad[k][i], run.q_cmd_rad[k_rest][i]);
      }
    }
  }
}

// CatchUp alone against references that step, kink and jump at random (a join of any kind), each held
// for a while, then still: the command never exceeds the bound or the jerk, never runs away, and is
// exactly on the reference again once that holds still.
TEST(CatchUp, RandomStepsAndJumpsStayWithinTheBoundAndEndOnTheReference) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const JointArray a = {1.5, 2.0, 3.0, 5.0, 2.0, 1.0, 4.0};
  for (int trial = 0; trial < 200; ++trial) {
    CatchUp catch_up;
    catch_up.reset(kFr3HomeRad, 0.0);
    StreamSample ref{kFr3HomeRad, {}, {}};
    StreamSample previous = catch_up.command();
    double previous_accel[kNumJoints] = {};
    double worst_over_bound = 0.0;
    double worst_jerk = 0.0;
    double worst_offset = 0.0;
    // 1.5 s of jumps, then 6 s at rest: at 1 rad/s² a command at ~1 rad/s takes ~4 s to stop and return.
    for (int tick = 1; tick <= 7500; ++tick) {
      const double t = tick * kT;
      if (tick < 1500 && tick % 300 == 1) {  // a jump: a new position, velocity and acceleration
        for (int i = 0; i < kNumJoints; ++i) {
          ref.q_rad[i] += 0.2 * uniform(random);
          ref.dq_rad_s[i] = 0.5 * uniform(random);
          ref.ddq_rad_s2[i] = 0.5 * uniform(random);
        }
      } else if (tick >= 1500) {  // the reference rests
        ref.dq_rad_s.fill(0.0);
        ref.ddq_rad_s2.fill(0.0);
      }
      StreamSample sample = ref;
      catch_up.update(t, jtac::loop::CatchUpBound::kStop, a, sample);
      for (int i = 0; i < kNumJoints; ++i) {
        const double accel = (sample.dq_rad_s[i] - previous.dq_rad_s[i]) / kT;
        worst_over_bound = std::max(worst_over_bound, std::abs(accel) - a[static_cast<std::size_t>(i)]);
        if (tick > 1) {
          worst_jerk = std::max(worst_jerk, std::abs(accel - previous_accel[i]) / kT);
        }
        previous_accel[i] = accel;
        worst_offset = std::max(worst_offset, std::abs(sample.q_rad[i] - ref.q_rad[i]));
      }
      previous = sample;
      // The reference moves on its own (constant acceleration between the jumps).
      for (int i = 0; i < kNumJoints; ++i) {
        ref.q_rad[i] += ref.dq_rad_s[i] * kT + 0.5 * ref.ddq_rad_s2[i] * kT * kT;
        ref.dq_rad_s[i] += ref.ddq_rad_s2[i] * kT;
      }
    }
    EXPECT_LE(worst_over_bound, 1e-6) << "trial " << trial;
    EXPECT_LE(worst_jerk, 1000.0 * (1.0 + 1e-6)) << "trial " << trial;
    EXPECT_LT(worst_offset, 1.5) << "trial " << trial;  // no runaway: within a few jumps' reach
    EXPECT_FALSE(catch_up.catching_up()) << "trial " << trial;

    for (int i = 0; i < kNumJoints; ++i) {
      EXPECT_EQ(previous.q_rad[i], ref.q_rad[i]);
    }
  }
}

// A smooth reference within its bounds passes through bit for bit: nothing is filtered.
TEST(CatchUp, ASmoothReferenceWithinItsBoundsPassesThroughUnchanged) {
  CatchUp catch_up;
  catch_up.reset(kFr3HomeRad, 0.0);
  const JointArray a = {2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0};
  for (int tick = 1; tick <= 5000; ++tick) {
    const double t = tick * kT;
    StreamSample ref;
    for (int i = 0; i < kNumJoints; ++i) {
      const double w = 1.0 + 0.3 * i;
      const double amp = 1.5 / (w * w);  // 1.5 rad/s² peak: on the input's own curve
      ref.q_rad[i] = kFr3HomeRad[i] + amp * (1.0 - std::cos(w * t));
      ref.dq_rad_s[i] = amp * w * std::sin(w * t);
      ref.ddq_rad_s2[i] = amp * w * w * std::cos(w * t);
    }
    // The first cycle starts from rest with the curve's acceleration: a step the input's own bound
    // (a quarter of a above the curve's) takes.
    StreamSample out = ref;
    catch_up.update(t, jtac::loop::CatchUpBound::kInput, a, out);
    for (int i = 0; i < kNumJoints; ++i) {
      ASSERT_EQ(out.q_rad[i], ref.q_rad[i]) << "tick " << tick;
      ASSERT_EQ(out.dq_rad_s[i], ref.dq_rad_s[i]);
    }
  }
  EXPECT_EQ(catch_up.catch_ups(), 0U);
}

// States lost while the command catches up (the loop's next cycle comes two or three periods of robot
// time later): the cycle after the gap gives the command the cycles in between would have given —
// what the hardware thread extrapolated from the last one meanwhile — not one long step's (which was
// up to 0.4 mrad and 0.4 rad/s off at 5 rad/s² on franka-sim: a step the limiter shaped at its bound).
TEST(CatchUp, StatesLostWhileCatchingUpChangeTheCommandByLessThanAMicroradian) {
  const auto run = [](bool lose_states) {
    StreamLaw law(stream_config());
    DeviceState state;
    jtac::loop::test::activate_at_home(law, state);
    std::mt19937 random(5);
    std::vector<std::pair<int, JointArray>> commands;  // (tick, q_cmd)
    int last_tick = 0;
    for (int tick = 1; tick <= 1500; ++tick) {
      const bool target_tick = tick % 8 == 0;
      if (target_tick) {
        EXPECT_TRUE(law.set_target(motion(tick * kT, true), tick * kT));
      }
      if (lose_states && !target_tick && tick % 8 != 1 && random() % 10 == 0) {
        continue;  // this state never reached the loop
      }
      state.tick = static_cast<std::uint64_t>(tick);
      state.time_s = tick * kT;
      jtac::loop::LawOutput out;
      EXPECT_EQ(law.update(state, state.time_s, (tick - last_tick) * kT, out), jtac::UpdateStatus::kOk);
      last_tick = tick;
      commands.emplace_back(tick, out.q_cmd_rad);
    }
    EXPECT_EQ(law.catch_ups(), 1U);
    return commands;
  };
  const auto steady = run(false);
  const auto lossy = run(true);
  ASSERT_LT(lossy.size(), steady.size() - 50);
  EXPECT_LT(jtac::loop::test::worst_difference_at_common_ticks(steady, lossy), 1e-6);
}
