// The admittance stability check against the integrator it describes: the transition matrix is
// rebuilt here by stepping semi-implicit Euler on the unit states (not from the closed form), its
// eigenvalues come from Eigen, and the stability boundary found by bisection on them must match the
// analytic K_max = (4M − 2hD)/h² to 1e-9 relative, at 1000 and 125 Hz.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>
#include <string>

#include "jtac_core/admittance_stability.hpp"

namespace {

using jtac::AdmittanceVerdict;
using jtac::check_axis_stability;

// One step of the integrator Admittance::step uses, for one axis with no force.
void euler_step(double M, double K, double D, double h, double& x, double& v) {
  v += h * (-D * v - K * x) / M;
  x += h * v;
}

// The transition matrix of that step, column by column from the unit states.
Eigen::Matrix2d transition(double M, double K, double D, double h) {
  Eigen::Matrix2d A;
  for (int c = 0; c < 2; ++c) {
    double x = c == 0 ? 1.0 : 0.0;
    double v = c == 1 ? 1.0 : 0.0;
    euler_step(M, K, D, h, x, v);
    A(0, c) = x;
    A(1, c) = v;
  }
  return A;
}

double numeric_radius(double M, double K, double D, double h) {
  return transition(M, K, D, h).eigenvalues().cwiseAbs().maxCoeff();
}

// K where the numeric radius crosses 1 (bisection on [lo, hi], radius < 1 at lo, > 1 at hi).
double numeric_boundary(double M, double D, double h, double lo, double hi) {
  for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (numeric_radius(M, mid, D, h) < 1.0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

struct Sample {
  double rate_hz;
  double M;
  double D;
};

class Boundary : public ::testing::TestWithParam<Sample> {};

TEST_P(Boundary, MatchesTheAnalyticBoundOfSemiImplicitEulerToOnePartInABillion) {
  const auto [rate, M, D] = GetParam();
  const double h = 1.0 / rate;
  const double analytic = (4.0 * M - 2.0 * h * D) / (h * h);
  const auto s = check_axis_stability(M, 100.0, D, h);
  EXPECT_NEAR(s.max_stiffness, analytic, 1e-12 * analytic);
  const double numeric = numeric_boundary(M, D, h, 0.5 * analytic, 2.0 * analytic);
  EXPECT_NEAR(numeric / analytic, 1.0, 1e-9);
  // Both sides, 1e-9 away: the check's own radius and verdict agree with Eigen's eigenvalues.
  const auto below = check_axis_stability(M, analytic * (1.0 - 1e-9), D, h);
  const auto above = check_axis_stability(M, analytic * (1.0 + 1e-9), D, h);
  EXPECT_LT(below.spectral_radius, 1.0);
  EXPECT_GT(above.spectral_radius, 1.0);
  EXPECT_LT(numeric_radius(M, analytic * (1.0 - 1e-9), D, h), 1.0);
  EXPECT_GT(numeric_radius(M, analytic * (1.0 + 1e-9), D, h), 1.0);
  EXPECT_EQ(below.verdict, AdmittanceVerdict::kNearBound);  // stable, but inside the margin
  EXPECT_EQ(above.verdict, AdmittanceVerdict::kUnstable);
  // The acceptance limit, (1 − margin)·K_max, on both sides.
  const double keep = 1.0 - jtac::kAdmittanceStabilityMargin;
  EXPECT_TRUE(
      jtac::admittance_accepted(check_axis_stability(M, keep * analytic * (1.0 - 1e-9), D, h).verdict));
  EXPECT_EQ(check_axis_stability(M, keep * analytic * (1.0 + 1e-9), D, h).verdict,
            AdmittanceVerdict::kNearBound);
}

INSTANTIATE_TEST_SUITE_P(AtBothRates, Boundary,
                         ::testing::Values(Sample{1000.0, 1.0, 20.0}, Sample{1000.0, 0.1, 32.0},
                                           Sample{1000.0, 0.01, 0.5}, Sample{125.0, 1.0, 20.0},
                                           Sample{125.0, 0.1, 4.0}, Sample{125.0, 4.0, 80.0}));

TEST(AdmittanceStability, SampleBoundsAt1000And125Hz) {
  // M = 1 kg, D = 20 N·s/m: K_max = 4 M/h² − 2 D/h.
  EXPECT_DOUBLE_EQ(check_axis_stability(1.0, 0.0, 20.0, 1e-3).max_stiffness, 3.96e6);
  EXPECT_DOUBLE_EQ(check_axis_stability(1.0, 0.0, 20.0, 1.0 / 125.0).max_stiffness, 57500.0);
  // M = 0.1 kg, D = 4 N·s/m.
  EXPECT_DOUBLE_EQ(check_axis_stability(0.1, 0.0, 4.0, 1e-3).max_stiffness, 392000.0);
  EXPECT_DOUBLE_EQ(check_axis_stability(0.1, 0.0, 4.0, 1.0 / 125.0).max_stiffness, 5250.0);
  // D_max = 2 M/h.
  EXPECT_DOUBLE_EQ(check_axis_stability(0.1, 0.0, 4.0, 1e-3).max_damping, 200.0);
  EXPECT_DOUBLE_EQ(check_axis_stability(0.1, 0.0, 4.0, 1.0 / 125.0).max_damping, 25.0);
}

TEST(AdmittanceStability, TheSameGainsCanBeStableAt1000HzAndUnstableAt125Hz) {
  // M = 0.1 kg, K = 5000 N/m, critically damped (D = 2√(KM) = 44.7 N·s/m): h·D/M = 0.45 at 1 kHz
  // but 3.6 at 125 Hz, past the damping bound 2.
  const double D = 2.0 * std::sqrt(5000.0 * 0.1);
  const auto fast = check_axis_stability(0.1, 5000.0, D, 1e-3);
  const auto slow = check_axis_stability(0.1, 5000.0, D, 1.0 / 125.0);
  EXPECT_EQ(fast.verdict, AdmittanceVerdict::kStable);
  EXPECT_EQ(slow.verdict, AdmittanceVerdict::kUnstable);
  EXPECT_LT(slow.max_stiffness, 0.0);  // no stiffness is stable with this M and D at 125 Hz
  EXPECT_NEAR(slow.spectral_radius, numeric_radius(0.1, 5000.0, D, 1.0 / 125.0), 1e-12);
}

TEST(AdmittanceStability, TheRadiusIsTheEigenvalueRadiusOfTheSteppedMatrixOverAGrid) {
  for (double rate : {1000.0, 500.0, 125.0, 100.0}) {
    const double h = 1.0 / rate;
    for (double M : {0.01, 0.1, 1.0, 10.0}) {
      for (double K : {1.0, 100.0, 1e4, 1e6}) {
        for (double D : {0.1, 5.0, 50.0, 500.0}) {
          const auto s = check_axis_stability(M, K, D, h);
          const double numeric = numeric_radius(M, K, D, h);
          ASSERT_NEAR(s.spectral_radius, numeric, 1e-9 * std::max(1.0, numeric))
              << "M " << M << " K " << K << " D " << D << " at " << rate << " Hz";
          // The verdict's stable/unstable split is the radius's.
          ASSERT_EQ(s.verdict == AdmittanceVerdict::kUnstable, numeric >= 1.0)
              << "M " << M << " K " << K << " D " << D << " at " << rate << " Hz, radius " << numeric;
        }
      }
    }
  }
}

TEST(AdmittanceStability, AFreeResponseGrowsOrDecaysByTheRadiusPerCycle) {
  // Stepping the integrator from rest with an initial displacement: after the transient, the state
  // norm changes by ρ per cycle (the dominant eigenvalue; ratios over 50 cycles).
  struct Case {
    double M, K, D, h;
  };
  for (const Case c : {Case{0.1, 6000.0, 4.0, 1.0 / 125.0}, Case{0.1, 4000.0, 4.0, 1.0 / 125.0},
                       Case{0.1, 4.0e5, 32.0, 1e-3}, Case{1.0, 1e5, 20.0, 1e-3}}) {
    const auto s = check_axis_stability(c.M, c.K, c.D, c.h);
    double x = 1.0;
    double v = 0.0;
    for (int i = 0; i < 200; ++i) {
      euler_step(c.M, c.K, c.D, c.h, x, v);
    }
    // A complex pair has |z| = ρ for both; the per-step ratio oscillates, so compare 50-step ratios
    // of the envelope (max over one period of the oscillation is enough at these frequencies).
    double peak_a = 0.0;
    for (int i = 0; i < 50; ++i) {
      euler_step(c.M, c.K, c.D, c.h, x, v);
      peak_a = std::max(peak_a, std::abs(x));
    }
    for (int i = 0; i < 450; ++i) {
      euler_step(c.M, c.K, c.D, c.h, x, v);
    }
    double peak_b = 0.0;
    for (int i = 0; i < 50; ++i) {
      euler_step(c.M, c.K, c.D, c.h, x, v);
      peak_b = std::max(peak_b, std::abs(x));
    }
    const double measured = std::pow(peak_b / peak_a, 1.0 / 500.0);
    EXPECT_NEAR(measured, s.spectral_radius, 2e-3 * s.spectral_radius) << "K " << c.K << " h " << c.h;
  }
}

TEST(AdmittanceStability, ContinuousFiguresOfAnUnderdampedAndAnOverdampedAxis) {
  // M = 4 kg, K = 400 N/m: ωn = 10 rad/s; D = 24 → ζ = 0.3, decay ζωn = 3/s.
  auto s = check_axis_stability(4.0, 400.0, 24.0, 1e-3);
  EXPECT_DOUBLE_EQ(s.natural_frequency_rad_s, 10.0);
  EXPECT_DOUBLE_EQ(s.damping_ratio, 0.3);
  EXPECT_NEAR(s.settling_time_s, std::log(50.0) / 3.0, 1e-12);
  // At 1 kHz the discrete envelope decays almost as fast: ρ = √(1 − hD/M), a rate −ln(ρ)/h = 3.009/s.
  EXPECT_NEAR(s.spectral_radius, std::sqrt(1.0 - 1e-3 * 6.0), 1e-15);
  EXPECT_NEAR(s.discrete_settling_time_s, std::log(50.0) * 1e-3 / (-0.5 * std::log1p(-6e-3)), 1e-12);
  EXPECT_NEAR(s.discrete_settling_time_s / s.settling_time_s, 1.0, 5e-3);
  EXPECT_EQ(s.verdict, AdmittanceVerdict::kStable);
  // ζ = 2: slow pole ωn(ζ − √(ζ² − 1)) = 10·(2 − √3) per second.
  s = check_axis_stability(4.0, 400.0, 160.0, 1e-3);
  EXPECT_DOUBLE_EQ(s.damping_ratio, 2.0);
  EXPECT_NEAR(s.settling_time_s, std::log(50.0) / (10.0 * (2.0 - std::sqrt(3.0))), 1e-12);
  // A very soft, heavily damped axis: the slow eigenvalue sits 1e-9 below 1 and keeps its digits;
  // its discrete settling time differs from the continuous one by O(h·d) = 0.1 of its slow rate.
  s = check_axis_stability(10.0, 1e-3, 1000.0, 1e-3);
  const double w = 1e-10 / (0.1 + 1e-10);  // h²k / (hd + h²k), the slow root to first order
  EXPECT_NEAR(s.discrete_settling_time_s, std::log(50.0) * 1e-3 / w, 1e-6 * s.discrete_settling_time_s);
  EXPECT_NEAR(s.discrete_settling_time_s / s.settling_time_s, 1.0, 5e-3);
  EXPECT_LT(s.spectral_radius, 1.0);
  EXPECT_EQ(s.verdict, AdmittanceVerdict::kStable);
}

TEST(AdmittanceStability, LowDampingRatioIsAcceptedWithAWarning) {
  const double M = 4.0;
  const double K = 400.0;
  const double critical = 2.0 * std::sqrt(K * M);
  EXPECT_EQ(check_axis_stability(M, K, 0.199 * critical, 1e-3).verdict, AdmittanceVerdict::kLightlyDamped);
  EXPECT_EQ(check_axis_stability(M, K, 0.201 * critical, 1e-3).verdict, AdmittanceVerdict::kStable);
  EXPECT_TRUE(jtac::admittance_accepted(AdmittanceVerdict::kLightlyDamped));
}

TEST(AdmittanceStability, FreeUndampedAndInvalidAxes) {
  // K = 0, D > 0: the eigenvalue 1 is the continuous system's own; the other is 1 − hD/M.
  auto s = check_axis_stability(4.0, 0.0, 40.0, 1e-3);
  EXPECT_TRUE(s.free_axis);
  EXPECT_EQ(s.verdict, AdmittanceVerdict::kStable);
  EXPECT_DOUBLE_EQ(s.spectral_radius, 1.0);
  EXPECT_TRUE(std::isinf(s.settling_time_s) && std::isinf(s.damping_ratio));
  // ... unless 1 − hD/M leaves the circle: D ≥ 2M/h.
  EXPECT_EQ(check_axis_stability(4.0, 0.0, 8000.0 * 1.001, 1e-3).verdict, AdmittanceVerdict::kUnstable);
  EXPECT_EQ(check_axis_stability(4.0, 0.0, 8000.0 * 0.95, 1e-3).verdict, AdmittanceVerdict::kNearBound);
  // Undamped spring: |z| = 1, never settles; rejected. Neither spring nor damper: rejected.
  s = check_axis_stability(4.0, 400.0, 0.0, 1e-3);
  EXPECT_EQ(s.verdict, AdmittanceVerdict::kUnstable);
  EXPECT_NEAR(s.spectral_radius, 1.0, 1e-15);
  EXPECT_EQ(check_axis_stability(4.0, 0.0, 0.0, 1e-3).verdict, AdmittanceVerdict::kUnstable);
  // Joint damping is damping too: D_eff = D + joint_damping·M.
  s = check_axis_stability(4.0, 400.0, 0.0, 1e-3, 2.0);
  const auto same = check_axis_stability(4.0, 400.0, 8.0, 1e-3);
  EXPECT_EQ(s.verdict, same.verdict);
  EXPECT_DOUBLE_EQ(s.spectral_radius, same.spectral_radius);
  EXPECT_DOUBLE_EQ(s.max_stiffness, same.max_stiffness);
  EXPECT_DOUBLE_EQ(s.max_damping, same.max_damping - 8.0);
  // Inputs out of range.
  for (const auto& bad :
       {check_axis_stability(0.0, 1.0, 1.0, 1e-3), check_axis_stability(1.0, -1.0, 1.0, 1e-3),
        check_axis_stability(1.0, 1.0, std::nan(""), 1e-3), check_axis_stability(1.0, 1.0, 1.0, 0.0),
        check_axis_stability(1.0, 1.0, 1.0, 1e-3, -1.0)}) {
    EXPECT_EQ(bad.verdict, AdmittanceVerdict::kInvalidInput);
    EXPECT_TRUE(std::isnan(bad.spectral_radius));
  }
}

TEST(AdmittanceStability, MessagesNameTheSetTheRateAndTheBound) {
  const auto unstable = check_axis_stability(0.1, 6000.0, 4.0, 1.0 / 125.0);
  const std::string m = jtac::admittance_stability_message(unstable, 2);
  for (const char* part : {"M = 0.1 kg", "K = 6000 N/m", "D = 4 N·s/m", "at 125 Hz", "unstable",
                           "largest stable stiffness", "5250 N/m", "accepted up to 4725 N/m"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
  }
  const std::string rotational =
      jtac::admittance_stability_message(check_axis_stability(0.01, 0.0, 25.0, 1e-3), 4);
  EXPECT_NE(rotational.find("D = 25 N·m·s/rad"), std::string::npos) << rotational;
  EXPECT_NE(rotational.find("D must stay below 20 N·m·s/rad"), std::string::npos) << rotational;
  const std::string undamped =
      jtac::admittance_stability_message(check_axis_stability(4.0, 400.0, 0.0, 1e-3), 0);
  EXPECT_NE(undamped.find("undamped"), std::string::npos) << undamped;
  EXPECT_NE(undamped.find("80 N·s/m"), std::string::npos) << undamped;  // the critical damping
  EXPECT_EQ(jtac::admittance_stability_message(check_axis_stability(4.0, 400.0, 80.0, 1e-3), 0), "");
}

}  // namespace
