// Generated from jtac_py/parameters/mapping.py (the core fields' table) and params/jtac_parameters.yaml
// by `python -m jtac_py.parameters --write`: do not edit. Change the table and regenerate; `make lint`
// fails while this file is stale.
//
// The one mapping from jtac::Params (the schema's names) onto the core's structures; its helpers are
// params_conversions.hpp's.
#include "jtac_core/params_mapping.hpp"

#include <utility>

#include "params_conversions.hpp"

namespace jtac {

using params_conversions::any_sensor;
using params_conversions::fixed_vector;
using params_conversions::joint_vector;
using params_conversions::per_joint;
using params_conversions::tip_frames;

JtacConfig make_jtac_config(const Params& params, std::string urdf_xml,
                            std::vector<double> max_velocity_rad_s,
                            std::vector<double> max_acceleration_rad_s2) {
  JtacConfig config;
  config.trajectory.joint_names = params.joints;
  config.trajectory.continuous_joints = params.continuous_joints;
  config.trajectory.max_trajectory_points = static_cast<int>(params.max_trajectory_points);  // [points]
  config.trajectory.max_velocity_rad_s = std::move(max_velocity_rad_s);
  config.trajectory.max_acceleration_rad_s2 = std::move(max_acceleration_rad_s2);
  config.urdf_xml = std::move(urdf_xml);
  config.base_frame = params.base_frame;
  config.tips = tip_frames(params.sensor_frames, params.ee_frames);
  // The core has one flag for all tips: on as soon as any tip has a sensor name.
  config.has_force_torque_sensor = any_sensor(
      tip_ft_sensor_names(params.ft_sensor_name, params.ft_sensors.sensor_frames_map, params.sensor_frames));
  // Goal intake checks each compliant axis's stability for the admittance integrated at this rate.
  config.update_rate_hz = static_cast<double>(params.update_rate);  // [Hz]
  return config;
}

JtacParameters make_jtac_parameters(const Params& params) {
  JtacParameters parameters;
  parameters.trajectory.stop_accelerations_rad_s2 = joint_vector(params.stop_accelerations);
  parameters.trajectory.default_path_tolerance_rad =
      per_joint(params.joints, params.constraints.joints_map, &Params::Constraints::MapJoints::path_tolerance,
                params.default_path_tolerance);
  parameters.trajectory.default_goal_tolerance_rad =
      per_joint(params.joints, params.constraints.joints_map, &Params::Constraints::MapJoints::goal_tolerance,
                params.default_goal_tolerance);
  parameters.trajectory.default_goal_time_tolerance_s = params.default_goal_time_tolerance;
  parameters.trajectory.time_scale_percentage = params.time_scale_percentage;
  parameters.trajectory.time_scale_filter_constant_s =
      params.time_scale_filter_constant;  // time constant [s]
  parameters.trajectory.start_position_tolerance_rad = params.start_position_tolerance;
  parameters.trajectory.start_velocity_tolerance_rad_s = params.start_velocity_tolerance;
  parameters.trajectory.stitch_position_tolerance_rad = params.stitch_position_tolerance;
  parameters.trajectory.stitch_velocity_tolerance_rad_s = params.stitch_velocity_tolerance;
  parameters.ft_cutoff_frequency_ratio = params.ft_cutoff_frequency_ratio;  // cutoff / update_rate [-]
  parameters.ft_force_deadband_N = params.ft_force_deadband;
  parameters.ft_torque_deadband_Nm = params.ft_torque_deadband;
  parameters.default_absolute_force_torque_threshold =
      fixed_vector(params.default_absolute_force_torque_threshold,
                   parameters.default_absolute_force_torque_threshold);  // [N, N·m]
  parameters.gravity_base_m_s2 = fixed_vector(params.gravity_vector, parameters.gravity_base_m_s2);  // [m/s²]
  parameters.jacobian_damping = params.jacobian_damping;  // λ of the damped least squares [-]
  parameters.zero_fts_num_samples = static_cast<int>(params.zero_fts_num_samples);  // [samples]
  return parameters;
}

}  // namespace jtac
