// The RuckigLimiter (ruckig_limiter.hpp): MotionLimiter's interface on Ruckig. Seeded and
// deterministic. What it keeps (the bounds on every single-period step, a smooth target passed, a
// held step reached, the robot's own envelope, copies independent of their shared scratch, the
// rewinds of AsyncInterface on a lossy link) and, as characterisation, where it falls short of
// MotionLimiter and why that one stays the default (franka_hw/README.md): the envelope × margin and
// steps of several periods.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "franka_hw/async_interface.hpp"
#include "franka_hw/joint_limiter.hpp"
#include "franka_hw/rate_matching.hpp"
#include "franka_hw/ruckig_limiter.hpp"
#include "model_robots.hpp"

namespace {

using jtac::hw::AsyncInterface;
using jtac::hw::AsyncInterfaceConfig;
using jtac::hw::CommandSample;
using jtac::hw::DeviceStatus;
using jtac::hw::JointArray;
using jtac::hw::kFr3HomeRad;
using jtac::hw::kFr3Limits;
using jtac::hw::kNumJoints;
using jtac::hw::LimiterKind;
using jtac::hw::RateMatcher;
using jtac::hw::RateTarget;
using jtac::hw::RuckigLimiter;

constexpr double kPi = 3.14159265358979323846;
constexpr double kT = 0.001;
constexpr double kMargin = 0.8;

// The robot's view of the commands: backward differences over each step's duration (franka-sim's
// checker), the worst of them against the limiter's bounds (published × margin).
struct RobotView {
  JointArray q{}, v{}, a{};
  double worst_v_ratio = 0.0, worst_a_ratio = 0.0, worst_j_ratio = 0.0;

  explicit RobotView(const JointArray& q0) : q(q0) {}
  void apply(const JointArray& q_next, double dt_s = kT) {
    for (int i = 0; i < kNumJoints; ++i) {
      const double v_next = (q_next[i] - q[i]) / dt_s;
      const double a_next = (v_next - v[i]) / dt_s;
      worst_v_ratio = std::max(worst_v_ratio, std::abs(v_next) / (kMargin * kFr3Limits.dq_max_rad_s[i]));
      worst_a_ratio = std::max(worst_a_ratio, std::abs(a_next) / (kMargin * kFr3Limits.ddq_max_rad_s2[i]));
      worst_j_ratio =
          std::max(worst_j_ratio, std::abs(a_next - a[i]) / dt_s / (kMargin * kFr3Limits.dddq_max_rad_s3[i]));
      q[i] = q_next[i];
      v[i] = v_next;
      a[i] = a_next;
    }
  }
};

// The FR3's envelope as the robot computes it (no margin), toward the upper and the lower end.
double upper_rad_s(int i, double q) {
  const auto& l = kFr3Limits;
  const double root = std::sqrt(std::max(0.0, 2.0 * l.deceleration_limit_rad_s2[i] * (l.q_max_rad[i] - q)));
  return std::min(l.dq_max_rad_s[i], std::max(0.0, root - l.velocity_offset_rad_s[i])) -
         jtac::hw::kJointVelocityLimitsToleranceRadS;
}
double lower_rad_s(int i, double q) {
  const auto& l = kFr3Limits;
  const double root = std::sqrt(std::max(0.0, 2.0 * l.deceleration_limit_rad_s2[i] * (q - l.q_min_rad[i])));
  return std::max(-l.dq_max_rad_s[i], std::min(0.0, l.velocity_offset_rad_s[i] - root)) +
         jtac::hw::kJointVelocityLimitsToleranceRadS;
}

TEST(RuckigLimiter, NeverExceedsTheBoundsOnRandomStepsAndReachesThem) {
  std::mt19937 rng(20261202);
  std::uniform_real_distribution<double> jump(-2.0, 2.0);
  std::uniform_real_distribution<double> speed(-6.0, 6.0);
  std::uniform_int_distribution<int> hold_packets(1, 400);
  std::uniform_int_distribution<int> kind(0, 3);
  for (int trial = 0; trial < 10; ++trial) {
    RuckigLimiter limiter(kT, kMargin);
    limiter.reset(kFr3HomeRad);
    RobotView view(kFr3HomeRad);
    JointArray q_target = kFr3HomeRad;
    JointArray dq_target{};
    int packet = 0;
    while (packet < 5000) {
      const int k = kind(rng);
      for (int i = 0; i < kNumJoints; ++i) {
        q_target[i] = kFr3HomeRad[i] + jump(rng);
        dq_target[i] = k == 0 ? 0.0 : speed(rng);  // feed-forward that may disagree with the steps
      }
      const int n = hold_packets(rng);
      for (int p = 0; p < n; ++p, ++packet) {
        if (k == 3 && p % 7 == 0) {
          limiter.brake();
        } else {
          limiter.step(q_target, dq_target);
        }
        view.apply(limiter.q_rad());
        for (int i = 0; i < kNumJoints; ++i) {
          ASSERT_NEAR(limiter.dq_rad_s()[i], view.v[i], 1e-9);  // its state is the robot's differences
          ASSERT_NEAR(limiter.ddq_rad_s2()[i], view.a[i], 1e-6);
        }
      }
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    // Ruckig's trajectory keeps its bounds to its own precision (1e-8 in velocity and position).
    EXPECT_LE(view.worst_v_ratio, 1.0 + 1e-6);
    EXPECT_LE(view.worst_a_ratio, 1.0 + 1e-6);
    EXPECT_LE(view.worst_j_ratio, 1.0 + 1e-6);
    EXPECT_GT(view.worst_v_ratio, 0.99);
    EXPECT_GT(view.worst_a_ratio, 0.99);
    EXPECT_GT(view.worst_j_ratio, 0.99);
    EXPECT_EQ(limiter.solver_errors(), 0U);
  }
}

TEST(RuckigLimiter, PassesASmoothTargetAndSettlesOnAHeldStep) {
  // 0.1·(1 − cos ωt), 0.5 Hz: 0.31 rad/s, 0.99 rad/s², 3.1 rad/s³, well inside the limits. The
  // reference joins the target's state 12 periods ahead, extrapolated at its velocity, and runs
  // beside the target by 0.8 µrad at most (MotionLimiter: passes it untouched), never activated.
  RuckigLimiter smooth(kT, kMargin);
  smooth.reset(kFr3HomeRad);
  const double w = 2.0 * kPi * 0.5;
  int activations = 0;
  double worst_error = 0.0;
  for (int p = 1; p <= 4000; ++p) {
    const double t = p * kT;
    JointArray q = kFr3HomeRad;
    JointArray dq{};
    for (int i = 0; i < kNumJoints; ++i) {
      q[i] += 0.1 * (1.0 - std::cos(w * t));
      dq[i] = 0.1 * w * std::sin(w * t);
    }
    activations += smooth.step(q, dq) ? 1 : 0;
    for (int i = 0; i < kNumJoints; ++i) {
      worst_error = std::max(worst_error, std::abs(smooth.q_rad()[i] - q[i]));
    }
  }
  EXPECT_EQ(activations, 0);
  EXPECT_LT(worst_error, 5e-6);
  std::printf("smooth target: largest error %.2f urad\n", worst_error * 1e6);

  RuckigLimiter limiter(kT, kMargin);
  limiter.reset(kFr3HomeRad);
  JointArray target = kFr3HomeRad;
  for (int i = 0; i < kNumJoints; ++i) {
    target[i] += (i % 2 == 0 ? 0.5 : -0.5);
  }
  double overshoot = 0.0;
  for (int p = 0; p < 3000; ++p) {
    limiter.step(target, JointArray{});
    for (int i = 0; i < kNumJoints; ++i) {
      overshoot = std::max(overshoot, (i % 2 == 0 ? 1.0 : -1.0) * (limiter.q_rad()[i] - target[i]));
    }
  }
  for (int i = 0; i < kNumJoints; ++i) {
    EXPECT_NEAR(limiter.q_rad()[i], target[i], 1e-9) << "joint " << i;
    EXPECT_NEAR(limiter.dq_rad_s()[i], 0.0, 1e-9) << "joint " << i;
  }
  EXPECT_LT(overshoot, 1e-8);
}

TEST(RuckigLimiter, CopiesShareOnlyScratch) {
  // AsyncInterface keeps copies (the reference before the last command, the robot's two possible
  // histories) and steps one of them: a copy must step exactly as the original would.
  RuckigLimiter a(kT, kMargin);
  a.reset(kFr3HomeRad);
  JointArray target = kFr3HomeRad;
  target[0] += 0.3;
  for (int p = 0; p < 50; ++p) {
    a.step(target, JointArray{});
  }
  RuckigLimiter b = a;  // mid-motion, at full acceleration
  RuckigLimiter c = a;
  JointArray other = kFr3HomeRad;
  other[3] -= 0.2;
  for (int p = 0; p < 200; ++p) {
    a.step(other, JointArray{});  // interleaved on the same scratch
    b.step(target, JointArray{});
  }
  for (int p = 0; p < 200; ++p) {
    c.step(target, JointArray{});  // alone
  }
  EXPECT_EQ(b.q_rad(), c.q_rad());
  EXPECT_EQ(b.dq_rad_s(), c.dq_rad_s());
  EXPECT_EQ(b.ddq_rad_s2(), c.ddq_rad_s2());
}

TEST(RuckigLimiter, ExtrapolatesAsTheRobotSubstitutesAndContinuesWithinTheBounds) {
  // A lost waypoint: the robot keeps the acceleration (v += a·T, q += v·T); the next steps continue
  // from there without a jump in the robot's differences.
  RuckigLimiter limiter(kT, kMargin);
  limiter.reset(kFr3HomeRad);
  RobotView view(kFr3HomeRad);
  const JointArray far = jtac::hw::test::far_target();
  for (int p = 0; p < 400; ++p) {
    if (p % 37 == 36) {
      const JointArray v = limiter.dq_rad_s(), a = limiter.ddq_rad_s2(), q = limiter.q_rad();
      limiter.extrapolate(1);
      for (int i = 0; i < kNumJoints; ++i) {
        ASSERT_DOUBLE_EQ(limiter.ddq_rad_s2()[i], a[i]);
        ASSERT_DOUBLE_EQ(limiter.dq_rad_s()[i], v[i] + a[i] * kT);
        ASSERT_DOUBLE_EQ(limiter.q_rad()[i], q[i] + (v[i] + a[i] * kT) * kT);
      }
    } else {
      limiter.step(p < 200 ? far : kFr3HomeRad, JointArray{});
    }
    view.apply(limiter.q_rad());
  }
  EXPECT_LE(view.worst_a_ratio, 1.0 + 1e-6);
  EXPECT_LE(view.worst_j_ratio, 1.0 + 1e-6);
  EXPECT_GT(view.worst_j_ratio, 0.99);
}

TEST(RuckigLimiter, A125HzStaircaseThroughTheRateMatcherNeverActivatesIt) {
  // The rate matcher's targets of a 125 Hz controller taken at their arrival: the velocity steps at
  // each sample are joined on the horizon (MotionLimiter: 260 activations at its jerk bound here,
  // bench_limiters).
  RuckigLimiter limiter(kT, kMargin);
  limiter.reset(kFr3HomeRad);
  RateMatcher matcher;
  RobotView view(kFr3HomeRad);
  int activations = 0;
  double peak_v = 0.0;
  for (int p = 0; p < 4000; ++p) {
    if (p % 8 == 0) {
      CommandSample sample;
      const double t = p * kT;
      sample.q_rad = kFr3HomeRad;
      for (int i : {0, 3}) {
        sample.q_rad[i] += 0.3 * (1.0 - std::cos(2.0 * kPi * t / 4.0));
        sample.dq_rad_s[i] = 0.3 * 2.0 * kPi / 4.0 * std::sin(2.0 * kPi * t / 4.0);
      }
      sample.controller_time_s = t;
      ASSERT_TRUE(matcher.on_sample(sample, limiter.q_rad(), static_cast<std::uint64_t>(p) + 1));
    }
    RateTarget target;
    matcher.next(target);
    ASSERT_FALSE(target.hold);
    activations += limiter.step(target.q_rad, target.dq_rad_s) ? 1 : 0;
    view.apply(limiter.q_rad());
    peak_v = std::max(peak_v, std::abs(view.v[3]));
  }
  EXPECT_EQ(activations, 0);
  EXPECT_NEAR(peak_v, 0.3 * 2.0 * kPi / 4.0, 0.02);
  EXPECT_LE(view.worst_j_ratio, 1.0 + 1e-6);
}

TEST(RuckigLimiter, KeepsTheRobotsEnvelopeButNotTheMarginOnIt) {
  // Every joint out at full speed toward a target 0.3 rad beyond each end of its range. The
  // envelope enters Ruckig as a per-step velocity bound: it keeps the robot's own envelope (no
  // reflex) and stops where MotionLimiter does, but without MotionLimiter's look-ahead ("can it
  // still brake in time?") it overruns the envelope × margin by up to 10 mrad/s while braking on it.
  for (const double direction : {+1.0, -1.0}) {
    SCOPED_TRACE(direction > 0 ? "upper ends" : "lower ends");
    RuckigLimiter limiter(kT, kMargin);
    limiter.reset(kFr3HomeRad);
    RobotView view(kFr3HomeRad);
    JointArray target{}, dq_target{};
    for (int i = 0; i < kNumJoints; ++i) {
      target[i] = (direction > 0.0 ? kFr3Limits.q_max_rad[i] : kFr3Limits.q_min_rad[i]) + 0.3 * direction;
      dq_target[i] = direction * kFr3Limits.dq_max_rad_s[i];
    }
    double robot_excess = -1.0, margin_excess = -1.0, closest = 1.0;
    for (int p = 0; p < 3000; ++p) {
      limiter.step(target, dq_target);
      view.apply(limiter.q_rad());
      for (int i = 0; i < kNumJoints; ++i) {
        const double q = limiter.q_rad()[i], v = view.v[i];
        robot_excess = std::max({robot_excess, v - upper_rad_s(i, q), lower_rad_s(i, q) - v});
        margin_excess =
            std::max({margin_excess, v - kMargin * upper_rad_s(i, q), kMargin * lower_rad_s(i, q) - v});
        closest =
            std::min(closest, direction > 0.0 ? kFr3Limits.q_max_rad[i] - q : q - kFr3Limits.q_min_rad[i]);
      }
    }
    EXPECT_LE(robot_excess, 0.0);
    EXPECT_LT(margin_excess, 0.02);
    EXPECT_GT(closest, 0.004);  // joint 5's rest point: 4.9 mrad inside its end
    EXPECT_LE(view.worst_a_ratio, 1.0 + 1e-6);
    EXPECT_LE(view.worst_j_ratio, 1.0 + 1e-6);
    EXPECT_EQ(limiter.solver_errors(), 0U);
    std::printf("%s: envelope x 0.8 exceeded by %.4f rad/s, the robot's by %.4f; closest %.2f mrad\n",
                direction > 0 ? "upper" : "lower", margin_excess, robot_excess, closest * 1e3);
  }
}

TEST(RuckigLimiter, StepsOfSeveralPeriodsBreakTheBoundsARobotDifferences) {
  // Why AsyncInterface keeps MotionLimiter by default: a step of several periods (a late command on
  // a robot that applies it, late_commands = applied) is Ruckig's continuous trajectory sampled
  // further ahead; the robot differences it against the one-period steps around it and reads up to
  // twice the acceleration bound (the means' centres lie 2T apart, divided by T). MotionLimiter
  // chooses each step in the robot's own differences and stays inside (RateMatching tests).
  jtac::hw::JointLimiter ruckig(LimiterKind::kRuckig, kT, kMargin, kFr3Limits);
  jtac::hw::JointLimiter motion(LimiterKind::kMotionLimiter, kT, kMargin, kFr3Limits);
  ruckig.reset(kFr3HomeRad);
  motion.reset(kFr3HomeRad);
  RobotView ruckig_view(kFr3HomeRad), motion_view(kFr3HomeRad);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int p = 0; p < 4000; ++p) {
    JointArray target = kFr3HomeRad;
    for (double& q : target) {
      q += (p / 40) % 2 == 0 ? 0.05 : -0.05;
    }
    const std::uint64_t periods = unit(rng) < 0.05 ? 3U : 1U;
    const double dt = static_cast<double>(periods) * kT;
    ruckig.step(target, JointArray{}, periods);
    motion.step(target, JointArray{}, periods);
    ruckig_view.apply(ruckig.q_rad(), dt);
    motion_view.apply(motion.q_rad(), dt);
  }
  EXPECT_LE(motion_view.worst_a_ratio, 1.0 + 1e-9);
  EXPECT_LE(motion_view.worst_j_ratio, 1.0 + 1e-6);
  EXPECT_GT(ruckig_view.worst_a_ratio, 1.5);
  EXPECT_GT(ruckig_view.worst_j_ratio, 2.0);
  std::printf("steps of 3 periods: Ruckig %.2f x the acceleration bound, %.2f x the jerk bound\n",
              ruckig_view.worst_a_ratio, ruckig_view.worst_j_ratio);
}

TEST(RuckigLimiter, AsyncInterfaceOnALossyLinkStaysWithinTheRobotsLimits) {
  // RateMatching.LostDatagramsEitherWayStayWithinTheRobotsLimits with the Ruckig limiter: the
  // rewinds, extrapolations and echo resyncs of late_commands = dropped copy and continue it.
  for (const std::uint32_t seed : {1U, 2U, 3U}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    jtac::hw::test::LossyRobot robot(0.02, 0.02, seed, 3000);
    AsyncInterfaceConfig config;
    config.limiter = LimiterKind::kRuckig;
    AsyncInterface interface(robot, config);
    EXPECT_EQ(interface.limiter().kind(), LimiterKind::kRuckig);
    for (int p = 0; p < 3000; ++p) {
      JointArray target = kFr3HomeRad;
      for (double& q : target) {
        q += (p / 40) % 2 == 0 ? 0.05 : -0.05;
      }
      interface.submit_command(target, JointArray{}, p * kT);
      ASSERT_EQ(interface.step_once(), DeviceStatus::kOk);
    }
    EXPECT_GT(robot.states_lost, 10U);
    EXPECT_GT(robot.commands_lost, 10U);
    EXPECT_GT(interface.counters().echo_resyncs, 0U);
    EXPECT_LE(robot.history.worst_acceleration_rad_s2, kFr3Limits.ddq_max_rad_s2[0]);
    EXPECT_LE(robot.history.worst_jerk_rad_s3, kFr3Limits.dddq_max_rad_s3[0]);
  }
}

}  // namespace
