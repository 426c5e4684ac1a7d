// Admittance on a kinematic loop (the arm goes exactly where it is commanded) on the FR3 model:
// steady-state deflection, step response against the mass-spring-damper prediction, release, two tips.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "jtac_core/admittance.hpp"
#include "jtac_test_support.hpp"

namespace {

constexpr double kDt = 0.001;  // [s]

class AdmittanceLoop : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> joints;
    for (int i = 1; i <= 7; ++i) {
      joints.push_back("fr3_joint" + std::to_string(i));
    }
    kin_.configure(jtac::test::read_text_file(JTAC_FR3_URDF), "fr3_link0", joints);
    q_nominal_.resize(7);
    q_nominal_ << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785;  // the FR3 home pose
  }

  void configure_tips(int tips) {
    std::array<int, jtac::kMaxTips> frames{};
    frames[0] = kin_.frame_index("fr3_tcp");
    frames[1] = kin_.frame_index("fr3_link5");  // an elbow "tip" for the two-tip case
    admittance_.configure(&kin_, frames, tips);
  }

  static jtac::TipAdmittance tip(double mass, double stiffness, double zeta, std::array<bool, 6> selected) {
    jtac::TipAdmittance t;
    t.mass.setConstant(mass);
    t.stiffness.setConstant(stiffness);
    t.damping.setConstant(2.0 * zeta * std::sqrt(mass * stiffness));
    t.selected = selected;
    return t;
  }

  // Runs `seconds` of steps with a constant wrench; returns the displacement history of tip 0, axis.
  std::vector<double> run(double seconds, const std::array<jtac::Vector6, jtac::kMaxTips>& wrench, int axis) {
    std::vector<double> history;
    for (int i = 0; i < static_cast<int>(std::lround(seconds / kDt)); ++i) {
      EXPECT_EQ(admittance_.step(kDt, q_nominal_, wrench, 0.01), jtac::AdmittanceStatus::kOk);
      history.push_back(admittance_.displacement(0)[axis]);
    }
    return history;
  }

  jtac::Kinematics kin_;
  jtac::Admittance admittance_;
  jtac::JointVector q_nominal_;
};

TEST_F(AdmittanceLoop, SteadyDeflectionIsForceOverStiffnessOnCompliantAxesOnly) {
  configure_tips(1);
  jtac::AdmittanceGoal goal;
  goal.num_tips = 1;
  goal.tips[0] = tip(5.0, 500.0, 1.0, {true, false, true, false, false, false});
  admittance_.reset(goal);
  std::array<jtac::Vector6, jtac::kMaxTips> wrench{};
  wrench[0] << 10.0, 10.0, -5.0, 0.0, 0.0, 0.0;  // y is not compliant: it must not move
  run(5.0, wrench, 0);
  const jtac::Vector6 e = admittance_.displacement(0);
  EXPECT_NEAR(e[0], 10.0 / 500.0, 1e-5);  // 20 mm along x
  EXPECT_NEAR(e[2], -5.0 / 500.0, 1e-5);  // −10 mm along z
  EXPECT_LT(std::abs(e[1]), 1e-5);
  EXPECT_LT(e.tail<3>().cwiseAbs().maxCoeff(), 1e-5);
}

TEST_F(AdmittanceLoop, StepResponseHasThePredictedOvershootAndSettlingTime) {
  configure_tips(1);
  const double mass = 4.0;
  const double stiffness = 400.0;
  const double zeta = 0.3;
  jtac::AdmittanceGoal goal;
  goal.num_tips = 1;
  goal.tips[0] = tip(mass, stiffness, zeta, {true, true, true, true, true, true});
  admittance_.reset(goal);
  std::array<jtac::Vector6, jtac::kMaxTips> wrench{};
  wrench[0] << 0.0, 8.0, 0.0, 0.0, 0.0, 0.0;
  const std::vector<double> y = run(6.0, wrench, 1);
  const double final_value = 8.0 / stiffness;
  double peak = 0.0;
  for (double v : y) {
    peak = std::max(peak, v);
  }
  const double overshoot = peak / final_value - 1.0;
  const double predicted_overshoot = std::exp(-zeta * std::numbers::pi / std::sqrt(1.0 - zeta * zeta));
  EXPECT_NEAR(overshoot, predicted_overshoot, 0.05 * predicted_overshoot);
  // 2 % settling time of the continuous-time response y(t) = 1 − e^(−ζωt)(cos ωd·t + ζ/√(1−ζ²)·sin ωd·t).
  const double omega_n = std::sqrt(stiffness / mass);
  const double omega_d = omega_n * std::sqrt(1.0 - zeta * zeta);
  const auto settling_time = [&](auto response) {
    double last_outside = 0.0;
    for (int i = 0; i < static_cast<int>(y.size()); ++i) {
      if (std::abs(response(i) - 1.0) > 0.02) {
        last_outside = (i + 1) * kDt;
      }
    }
    return last_outside;
  };
  const double predicted = settling_time([&](int i) {
    const double t = (i + 1) * kDt;
    return 1.0 - std::exp(-zeta * omega_n * t) *
                     (std::cos(omega_d * t) + zeta / std::sqrt(1.0 - zeta * zeta) * std::sin(omega_d * t));
  });
  const double measured = settling_time([&](int i) { return y[static_cast<std::size_t>(i)] / final_value; });
  EXPECT_NEAR(measured, predicted, 0.05 * predicted);
}

TEST_F(AdmittanceLoop, ReturnsToTheNominalPathAfterRelease) {
  configure_tips(1);
  jtac::AdmittanceGoal goal;
  goal.num_tips = 1;
  goal.tips[0] = tip(5.0, 300.0, 0.9, {true, true, true, false, false, false});
  admittance_.reset(goal);
  std::array<jtac::Vector6, jtac::kMaxTips> wrench{};
  wrench[0] << 0.0, 0.0, 15.0, 0.0, 0.0, 0.0;
  run(3.0, wrench, 2);
  EXPECT_NEAR(admittance_.displacement(0)[2], 0.05, 1e-3);
  wrench[0].setZero();
  run(4.0, wrench, 2);
  EXPECT_LT(admittance_.displacement(0).cwiseAbs().maxCoeff(), 1e-5);
  EXPECT_LT(admittance_.offset().cwiseAbs().maxCoeff(), 1e-4);
}

TEST(AdmittanceTwoTips, BothTipsDeflectInOneStackedSolve) {
  std::vector<std::string> joints;
  for (const char* arm : {"fr3", "panda"}) {
    for (int i = 1; i <= 7; ++i) {
      joints.push_back(std::string(arm) + "_joint" + std::to_string(i));
    }
  }
  jtac::Kinematics kin;
  kin.configure(jtac::test::dual_arm_urdf(JTAC_FR3_URDF, JTAC_PANDA_URDF), "world", joints);
  std::array<int, jtac::kMaxTips> frames{};
  frames[0] = kin.frame_index("fr3_tcp");
  frames[1] = kin.frame_index("panda_tcp");
  jtac::Admittance admittance;
  admittance.configure(&kin, frames, 2);
  jtac::AdmittanceGoal goal;
  goal.num_tips = 2;
  goal.tips[0].mass.setConstant(5.0);
  goal.tips[0].stiffness.setConstant(500.0);
  goal.tips[0].damping.setConstant(100.0);
  goal.tips[0].selected = {true, false, false, false, false, false};
  goal.tips[1] = goal.tips[0];
  goal.tips[1].stiffness.setConstant(1000.0);
  goal.tips[1].damping.setConstant(2.0 * std::sqrt(5.0 * 1000.0));
  goal.tips[1].selected = {false, false, true, false, false, false};
  admittance.reset(goal);
  jtac::JointVector q(14);
  q << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.3, -0.5, 0.0, -2.0, 0.0, 1.6, 0.785;
  std::array<jtac::Vector6, jtac::kMaxTips> wrench{};
  wrench[0] << 5.0, 3.0, 0.0, 0.0, 0.0, 0.0;  // y of tip 0 is held
  wrench[1] << 0.0, 0.0, 4.0, 1.0, 0.0, 0.0;  // rx of tip 1 is held
  for (int i = 0; i < 5000; ++i) {
    ASSERT_EQ(admittance.step(kDt, q, wrench, 0.01), jtac::AdmittanceStatus::kOk);
  }
  EXPECT_NEAR(admittance.displacement(0)[0], 5.0 / 500.0, 1e-5);
  EXPECT_NEAR(admittance.displacement(1)[2], 4.0 / 1000.0, 1e-5);
  EXPECT_LT(std::abs(admittance.displacement(0)[1]), 1e-5);
  EXPECT_LT(std::abs(admittance.displacement(1)[3]), 1e-5);
}

TEST_F(AdmittanceLoop, NoCompliantAxisMeansNoOffset) {
  configure_tips(1);
  jtac::AdmittanceGoal goal;
  goal.num_tips = 1;
  admittance_.reset(goal);
  std::array<jtac::Vector6, jtac::kMaxTips> wrench{};
  wrench[0] << 30.0, 30.0, 30.0, 3.0, 3.0, 3.0;
  run(1.0, wrench, 0);
  EXPECT_LT(admittance_.offset().cwiseAbs().maxCoeff(), 1e-12);
}

TEST_F(AdmittanceLoop, NonFiniteWrenchIsReportedAndLeavesTheStateUnchanged) {
  configure_tips(1);
  jtac::AdmittanceGoal goal;
  goal.num_tips = 1;
  goal.tips[0] = tip(5.0, 500.0, 1.0, {true, true, true, false, false, false});
  admittance_.reset(goal);
  std::array<jtac::Vector6, jtac::kMaxTips> wrench{};
  wrench[0] << 5.0, 0.0, 0.0, 0.0, 0.0, 0.0;
  run(0.2, wrench, 0);
  const jtac::JointVector before = admittance_.offset();
  wrench[0][0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(admittance_.step(kDt, q_nominal_, wrench, 0.01), jtac::AdmittanceStatus::kNonFinite);
  EXPECT_GE(admittance_.bad_index(), 0);
  EXPECT_EQ(admittance_.offset(), before);
}

}  // namespace
