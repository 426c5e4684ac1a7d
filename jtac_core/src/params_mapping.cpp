// The one mapping from jtac::Params (the schema's names) onto the core's structures.
//
// Convention the docs generator relies on (jtac_py/parameters/docs.py reads this file): every
// assignment to a `config.` or `parameters.` field is one statement that names each parameter it
// reads as `params.<schema name>` (a __map_ block as `params.<group>.<key>_map`, one of its fields as
// `Params::<Group>::Map<Key>::<field>`).
#include "jtac_core/params_mapping.hpp"

#include <algorithm>
#include <utility>

namespace jtac {

namespace {

JointVector joint_vector(const std::vector<double>& values) {
  return Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
}

// Per joint, in joints order [rad]: the joint's constraints entry when it is set (non-zero), else
// the global default.
JointVector per_joint(const std::vector<std::string>& joints,
                      const std::map<std::string, Params::Constraints::MapJoints>& entries,
                      double Params::Constraints::MapJoints::* tolerance_rad, double default_rad) {
  JointVector out(static_cast<Eigen::Index>(joints.size()));
  for (std::size_t i = 0; i < joints.size(); ++i) {
    const auto it = entries.find(joints[i]);
    const double own_rad = it == entries.end() ? 0.0 : it->second.*tolerance_rad;
    out[static_cast<Eigen::Index>(i)] = own_rad != 0.0 ? own_rad : default_rad;
  }
  return out;
}

std::vector<TipFrames> tip_frames(const std::vector<std::string>& sensor_frames,
                                  const std::vector<std::string>& ee_frames) {
  // One tip per sensor frame; validate() keeps ee_frames the same length (size_eq_param).
  std::vector<TipFrames> tips;
  for (std::size_t k = 0; k < sensor_frames.size() && k < ee_frames.size(); ++k) {
    tips.push_back(TipFrames{sensor_frames[k], ee_frames[k]});
  }
  return tips;
}

bool any_sensor(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [](const std::string& name) { return !name.empty(); });
}

}  // namespace

std::vector<std::string> tip_ft_sensor_names(
    const std::string& ft_sensor_name,
    const std::map<std::string, Params::FtSensors::MapSensorFrames>& entries,
    const std::vector<std::string>& sensor_frames) {
  std::vector<std::string> names;
  for (const auto& frame : sensor_frames) {
    const auto it = entries.find(frame);
    names.push_back(it != entries.end() && !it->second.name.empty() ? it->second.name : ft_sensor_name);
  }
  return names;
}

std::vector<std::string> tip_ft_sensor_names(const Params& params) {
  return tip_ft_sensor_names(params.ft_sensor_name, params.ft_sensors.sensor_frames_map,
                             params.sensor_frames);
}

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
  parameters.trajectory.time_scale_filter_constant_s = params.time_scale_filter_constant;  // time constant
  parameters.trajectory.start_position_tolerance_rad = params.start_position_tolerance;
  parameters.trajectory.start_velocity_tolerance_rad_s = params.start_velocity_tolerance;
  parameters.trajectory.stitch_position_tolerance_rad = params.stitch_position_tolerance;
  parameters.trajectory.stitch_velocity_tolerance_rad_s = params.stitch_velocity_tolerance;
  parameters.ft_cutoff_frequency_ratio = params.ft_cutoff_frequency_ratio;  // cutoff / update_rate [-]
  parameters.ft_force_deadband_N = params.ft_force_deadband;
  parameters.ft_torque_deadband_Nm = params.ft_torque_deadband;
  if (params.default_absolute_force_torque_threshold.size() == 6) {
    parameters.default_absolute_force_torque_threshold =
        Eigen::Map<const Vector6>(params.default_absolute_force_torque_threshold.data());
  }
  if (params.gravity_vector.size() == 3) {
    parameters.gravity_base_m_s2 = Eigen::Map<const Eigen::Vector3d>(params.gravity_vector.data());  // [m/s²]
  }
  parameters.jacobian_damping = params.jacobian_damping;  // λ of the damped least squares [-]
  parameters.zero_fts_num_samples = static_cast<int>(params.zero_fts_num_samples);  // [samples]
  return parameters;
}

}  // namespace jtac
