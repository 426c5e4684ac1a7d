// The robots' limit rows (joint_limits.hpp, built from the generated robot_limits.hpp) and that an
// AsyncInterface given a robot's row enforces that robot's limits only: a Panda's rates and its joint
// range, never the FR3's range beside the Panda's rates. Lockstep on a lossless model robot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "franka_hw/async_interface.hpp"
#include "franka_hw/joint_limits.hpp"
#include "model_robots.hpp"

namespace {

using jtac::hw::AsyncInterface;
using jtac::hw::AsyncInterfaceConfig;
using jtac::hw::DeviceStatus;
using jtac::hw::find_joint_limits;
using jtac::hw::JointArray;
using jtac::hw::JointLimits;
using jtac::hw::kFr3HomeRad;
using jtac::hw::kFr3Limits;
using jtac::hw::kNumJoints;
using jtac::hw::kPandaLimits;
using jtac::hw::test::kModelPeriodS;
using jtac::hw::test::LossyRobot;
namespace panda = jtac::hw::robot_limits::panda;

constexpr double kMargin = 0.8;

// The Panda's whole row with the envelope switch on, as a caller that asks for "the robot's
// position-based limits" sets it: the anchors are the Panda's range (no envelope acts on it).
AsyncInterfaceConfig panda_config() {
  AsyncInterfaceConfig config;
  config.limit_margin = kMargin;
  config.limits = *find_joint_limits("panda");
  config.limits.position_based_velocity_limits = true;
  return config;
}

// Drives `interface` toward `target` for `packets` packets; returns the largest |velocity| the robot
// applied on joint `joint` [rad/s].
double drive(AsyncInterface& interface, LossyRobot& robot, const JointArray& target, int packets, int joint) {
  double peak_rad_s = 0.0;
  for (int p = 0; p < packets; ++p) {
    interface.submit_command(target, JointArray{}, p * kModelPeriodS);
    EXPECT_EQ(interface.step_once(), DeviceStatus::kOk);
    peak_rad_s = std::max(peak_rad_s, std::abs(robot.history.v[static_cast<std::size_t>(joint)]));
  }
  return peak_rad_s;
}

TEST(RobotJointLimits, EveryRobotHasItsRowAndAnUnknownRobotNone) {
  ASSERT_NE(find_joint_limits("fr3"), nullptr);
  ASSERT_NE(find_joint_limits("panda"), nullptr);
  EXPECT_EQ(find_joint_limits("ur5"), nullptr);
  EXPECT_EQ(find_joint_limits("fr3")->dq_max_rad_s, kFr3Limits.dq_max_rad_s);
  EXPECT_EQ(find_joint_limits("panda")->ddq_max_rad_s2, kPandaLimits.ddq_max_rad_s2);
  // A robot without a published envelope still carries its own range, and no envelope.
  EXPECT_EQ(kPandaLimits.q_min_rad, panda::kQMinRad);
  EXPECT_EQ(kPandaLimits.q_max_rad, panda::kQMaxRad);
  EXPECT_FALSE(kPandaLimits.position_based_velocity_limits);
  for (double d : kPandaLimits.deceleration_limit_rad_s2) {
    EXPECT_EQ(d, 0.0);
  }
  EXPECT_EQ(AsyncInterfaceConfig{}.limits.q_min_rad, kFr3Limits.q_min_rad);  // the default robot: FR3
}

TEST(RobotJointLimits, APandasInterfaceHoldsThePandasWholeRow) {
  LossyRobot robot(0.0, 0.0, 1, 10);
  AsyncInterface interface(robot, panda_config());
  const JointLimits& held = interface.limiter().limits();
  EXPECT_EQ(held.q_min_rad, panda::kQMinRad);
  EXPECT_EQ(held.q_max_rad, panda::kQMaxRad);
  for (int i = 0; i < kNumJoints; ++i) {
    const auto j = static_cast<std::size_t>(i);
    EXPECT_DOUBLE_EQ(held.dq_max_rad_s[j], kMargin * panda::kDqMaxRadS[j]) << "joint " << i + 1;
    EXPECT_DOUBLE_EQ(held.ddq_max_rad_s2[j], kMargin * panda::kDdqMaxRadS2[j]) << "joint " << i + 1;
    EXPECT_DOUBLE_EQ(held.dddq_max_rad_s3[j], kMargin * panda::kDddqMaxRadS3[j]) << "joint " << i + 1;
  }
}

// Joint 6 at 0.2 rad lies inside the Panda's range (from -0.0175) but below the FR3's (from 0.5445):
// with the FR3's range beside the Panda's rates the envelope would stop the joint short of it.
TEST(RobotJointLimits, APandaReachesAPoseOutsideTheFr3sRangeAtThePandasVelocity) {
  LossyRobot robot(0.0, 0.0, 1, 3000);
  AsyncInterface interface(robot, panda_config());
  JointArray target = kFr3HomeRad;
  target[5] = 0.2;
  const double peak_rad_s = drive(interface, robot, target, 2500, 5);
  EXPECT_NEAR(robot.history.q[5], 0.2, 1e-6);
  EXPECT_LT(0.2, kFr3Limits.q_min_rad[5]);
  EXPECT_LE(peak_rad_s, kMargin * panda::kDqMaxRadS[5] * (1.0 + 1e-9));
  EXPECT_GE(peak_rad_s, 0.99 * kMargin * panda::kDqMaxRadS[5]);
}

// The same motion on the FR3's row stops before its range's lower end: the range enforced is the
// row's own.
TEST(RobotJointLimits, TheFr3StopsTheSameMotionAtItsOwnRange) {
  LossyRobot robot(0.0, 0.0, 1, 3000);
  AsyncInterfaceConfig config;
  config.limit_margin = kMargin;
  AsyncInterface interface(robot, config);
  JointArray target = kFr3HomeRad;
  target[5] = 0.2;
  drive(interface, robot, target, 2500, 5);
  EXPECT_GT(robot.history.q[5], kFr3Limits.q_min_rad[5]);
}

}  // namespace
