// Kinematics of the FR3 description: published geometry, Jacobian against finite differences,
// configure-time errors, and the status codes of the real-time methods.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "jtac_core/kinematics.hpp"
#include "jtac_test_support.hpp"

namespace {

class Fr3Kinematics : public ::testing::Test {
 protected:
  void SetUp() override {
    kin_.configure(jtac::test::read_text_file(JTAC_FR3_URDF), "fr3_link0",
                   jtac::test::arm_joint_names("fr3"));
  }
  jtac::Kinematics kin_;
};

TEST_F(Fr3Kinematics, FlangeAtZeroMatchesPublishedGeometry) {
  // Franka's published kinematics: at q = 0 the flange sits at x = a4 + ... = 0.088 m,
  // z = 0.333 + 0.316 + 0.384 - 0.107 = 0.926 m, pointing down (rotated pi about x).
  jtac::JointVector q = jtac::JointVector::Zero(7);
  Eigen::Isometry3d T;
  ASSERT_EQ(kin_.forward(q, kin_.frame_index("fr3_link8"), T), jtac::KinematicsStatus::kOk);
  EXPECT_NEAR(T.translation().x(), 0.088, 1e-12);
  EXPECT_NEAR(T.translation().y(), 0.0, 1e-12);
  EXPECT_NEAR(T.translation().z(), 0.926, 1e-12);
  EXPECT_NEAR(T.linear()(2, 2), -1.0, 1e-12);
}

TEST_F(Fr3Kinematics, JacobianMatchesFiniteDifferences) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1.5, 1.5);
  const int flange = kin_.frame_index("fr3_link8");
  for (int trial = 0; trial < 20; ++trial) {
    jtac::JointVector q(7);
    for (int i = 0; i < 7; ++i) {
      q[i] = dist(rng);
    }
    jtac::Jacobian J(6, 7);
    ASSERT_EQ(kin_.jacobian(q, flange, J), jtac::KinematicsStatus::kOk);
    Eigen::Isometry3d T0;
    kin_.forward(q, flange, T0);
    constexpr double kStep = 1e-7;  // [rad] central differences: truncation error ~ h^2
    for (int i = 0; i < 7; ++i) {
      jtac::JointVector qp = q;
      jtac::JointVector qm = q;
      qp[i] += kStep;
      qm[i] -= kStep;
      Eigen::Isometry3d Tp;
      Eigen::Isometry3d Tm;
      kin_.forward(qp, flange, Tp);
      kin_.forward(qm, flange, Tm);
      const Eigen::Vector3d v = (Tp.translation() - Tm.translation()) / (2 * kStep);
      const Eigen::Matrix3d dR = (Tp.linear() - Tm.linear()) / (2 * kStep) * T0.linear().transpose();
      const Eigen::Vector3d w(dR(2, 1), dR(0, 2), dR(1, 0));  // vee of the skew matrix dR·R^T
      EXPECT_LT((J.block<3, 1>(0, i) - v).norm(), 1e-6) << "joint " << i << " trial " << trial;
      EXPECT_LT((J.block<3, 1>(3, i) - w).norm(), 1e-6) << "joint " << i << " trial " << trial;
    }
  }
}

TEST_F(Fr3Kinematics, RealTimeCallsReportBadInputWithStatus) {
  Eigen::Isometry3d T;
  jtac::JointVector q_short = jtac::JointVector::Zero(6);
  EXPECT_EQ(kin_.forward(q_short, 1, T), jtac::KinematicsStatus::kSizeMismatch);
  jtac::JointVector q = jtac::JointVector::Zero(7);
  EXPECT_EQ(kin_.forward(q, 100000, T), jtac::KinematicsStatus::kSizeMismatch);
  q[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(kin_.forward(q, 1, T), jtac::KinematicsStatus::kNonFinite);
  jtac::Kinematics unconfigured;
  EXPECT_EQ(unconfigured.forward(jtac::JointVector::Zero(7), 0, T), jtac::KinematicsStatus::kNotConfigured);
}

TEST(KinematicsConfigure, ErrorsNameTheUnknownJointOrFrame) {
  const std::string urdf = jtac::test::read_text_file(JTAC_FR3_URDF);
  jtac::Kinematics kin;
  auto joints = jtac::test::arm_joint_names("fr3");
  joints[2] = "elbow_of_doom";
  try {
    kin.configure(urdf, "fr3_link0", joints);
    FAIL() << "an unknown joint was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'elbow_of_doom'"), std::string::npos) << e.what();
  }
  try {
    kin.configure(urdf, "world_of_doom", jtac::test::arm_joint_names("fr3"));
    FAIL() << "an unknown base frame was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'world_of_doom'"), std::string::npos) << e.what();
  }
  kin.configure(urdf, "fr3_link0", jtac::test::arm_joint_names("fr3"));
  EXPECT_THROW(kin.frame_index("no_such_frame"), std::invalid_argument);
  EXPECT_THROW(kin.configure("<robot", "fr3_link0", jtac::test::arm_joint_names("fr3")),
               std::invalid_argument);
}

TEST(KinematicsConfigure, LockedJointsLeaveASubChain) {
  // Controlling only joints 1 and 2 locks the rest at zero: the flange must then be where the
  // full model puts it with joints 3..7 at zero.
  const std::string urdf = jtac::test::read_text_file(JTAC_FR3_URDF);
  jtac::Kinematics full;
  full.configure(urdf, "fr3_link0", jtac::test::arm_joint_names("fr3"));
  jtac::Kinematics sub;
  sub.configure(urdf, "fr3_link0", {"fr3_joint1", "fr3_joint2"});
  ASSERT_EQ(sub.num_joints(), 2);
  jtac::JointVector q_full = jtac::JointVector::Zero(7);
  q_full[0] = 0.3;
  q_full[1] = -0.4;
  jtac::JointVector q_sub(2);
  q_sub << 0.3, -0.4;
  Eigen::Isometry3d T_full;
  Eigen::Isometry3d T_sub;
  full.forward(q_full, full.frame_index("fr3_link8"), T_full);
  sub.forward(q_sub, sub.frame_index("fr3_link8"), T_sub);
  EXPECT_LT((T_full.matrix() - T_sub.matrix()).norm(), 1e-12);
}

}  // namespace
