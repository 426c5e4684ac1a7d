// jtac::Params (generated from params/jtac_parameters.yaml) and the one mapping onto the core's
// structures: defaults that configure a controller, validate()'s first violation in the schema's words,
// and the per-joint tolerance fallback.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "jtac_core/jtac_parameters.hpp"
#include "jtac_core/params_mapping.hpp"

namespace {

TEST(Params, DefaultsAreValid) { EXPECT_EQ(jtac::Params{}.validate(), ""); }

TEST(Params, ValidateNamesParameterValueAndRule) {
  jtac::Params params;
  params.time_scale_percentage = 150.0;  // [%]
  EXPECT_EQ(params.validate(),
            "parameter 'time_scale_percentage' = 150.0 violates bounds<>: [0.0, 100.0]: must be within [0.0, "
            "100.0]");

  params = jtac::Params{};
  params.stop_accelerations = {5.0, 5.0, 5.0, -1.0, 5.0, 5.0, 5.0};  // [rad/s²]
  EXPECT_EQ(
      params.validate(),
      "parameter 'stop_accelerations'[3] = -1.0 violates jtac::element_gt: [0.0]: every element must be "
      "greater than 0.0");

  params = jtac::Params{};
  params.jacobian_damping = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(params.validate(),
            "parameter 'jacobian_damping' = nan violates finite: doubles must be finite (no NaN or Inf)");

  params = jtac::Params{};
  params.constraints.joints_map["fr3_joint2"].goal_tolerance = -1e-05;  // [rad]
  EXPECT_EQ(
      params.validate(),
      "parameter 'constraints.fr3_joint2.goal_tolerance' = -1e-05 violates gt_eq<>: [0.0]: must be greater "
      "than or equal to 0.0");
}

TEST(Params, ReprWritesDoublesAsPython) {
  using jtac::params_detail::repr;
  EXPECT_EQ(repr(0.1), "0.1");
  EXPECT_EQ(repr(5.0), "5.0");
  EXPECT_EQ(repr(1e16), "1e+16");
  EXPECT_EQ(repr(123456789012345.6), "123456789012345.6");
  EXPECT_EQ(repr(0.0001), "0.0001");
  EXPECT_EQ(repr(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(repr(-INFINITY), "-inf");
}

TEST(ParamsMapping, DefaultsMapOntoTheCoreStructures) {
  const jtac::Params params;
  const jtac::JtacConfig config = jtac::make_jtac_config(params, "<robot name='x'/>", {}, {});
  EXPECT_EQ(config.trajectory.joint_names, params.joints);
  EXPECT_EQ(config.trajectory.max_trajectory_points, 10000);
  ASSERT_EQ(config.tips.size(), 1U);
  EXPECT_EQ(config.tips[0].sensor_frame, "fr3_ft_sensor");
  EXPECT_FALSE(config.has_force_torque_sensor);  // ft_sensor_name "" = no admittance
  EXPECT_DOUBLE_EQ(config.update_rate_hz, 1000.0);

  const jtac::JtacParameters parameters = jtac::make_jtac_parameters(params);
  EXPECT_EQ(parameters.trajectory.stop_accelerations_rad_s2.size(), 7);
  EXPECT_DOUBLE_EQ(parameters.gravity_base_m_s2.z(), -9.81);
  EXPECT_DOUBLE_EQ(parameters.default_absolute_force_torque_threshold[3], 10.0);
  EXPECT_EQ(parameters.zero_fts_num_samples, 10);
}

TEST(ParamsMapping, PerJointToleranceWinsOverTheDefaultUnlessZero) {
  jtac::Params params;
  params.constraints.joints_map["fr3_joint3"].path_tolerance = 0.2;  // [rad]
  params.constraints.joints_map["fr3_joint4"].path_tolerance = 0.0;  // 0 = the default
  const jtac::JtacParameters parameters = jtac::make_jtac_parameters(params);
  EXPECT_DOUBLE_EQ(parameters.trajectory.default_path_tolerance_rad[2], 0.2);
  EXPECT_DOUBLE_EQ(parameters.trajectory.default_path_tolerance_rad[3], 0.05);
  EXPECT_DOUBLE_EQ(parameters.trajectory.default_goal_tolerance_rad[2], 0.05);
}

TEST(ParamsMapping, AnyTipSensorTurnsTheAdmittanceOn) {
  jtac::Params params;
  params.ft_sensors.sensor_frames_map["fr3_ft_sensor"].name = "ati";
  EXPECT_EQ(jtac::tip_ft_sensor_names(params), std::vector<std::string>{"ati"});
  EXPECT_TRUE(jtac::make_jtac_config(params, "", {}, {}).has_force_torque_sensor);
}

}  // namespace
