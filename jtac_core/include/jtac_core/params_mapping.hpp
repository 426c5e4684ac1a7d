// From jtac's parameters (jtac::Params, generated from params/jtac_parameters.yaml) to the core's
// configure-time structures: the one place where a schema name meets a core field. Not real-time:
// call it before configure() / set_parameters(), on a Params whose validate() returned "".
//
// Units agree on both sides (rad, rad/s, rad/s², s, %, N, N·m, m/s²), so values pass through
// unchanged; the core's names carry the unit (gravity_vector -> gravity_base_m_s2). Which schema name
// feeds which field is one table, jtac_py/parameters/mapping.py: params_mapping.cpp is generated from
// it and docs/parameters.md lists it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "jtac_core/jtac_parameters.hpp"

namespace jtac {

/// The configure-time structure (the read_only parameters). urdf_xml and the robot's joint limits
/// (velocity [rad/s], acceleration [rad/s²], in joints order; empty = not checked) are not parameters:
/// the caller resolves them (robot_description / urdf_path / robot, the robot tables).
[[nodiscard]] JtacConfig make_jtac_config(const Params& params, std::string urdf_xml,
                                          std::vector<double> max_velocity_rad_s,
                                          std::vector<double> max_acceleration_rad_s2);

/// The run-time parameters (for configure and set_parameters). A per-joint tolerance of 0 in
/// constraints falls back to the global default.
[[nodiscard]] JtacParameters make_jtac_parameters(const Params& params);

/// The force/torque sensor of each tip in sensor_frames order: its ft_sensors entry's name, else
/// ft_sensor_name; "" = that tip has no sensor.
[[nodiscard]] inline std::vector<std::string> tip_ft_sensor_names(
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
[[nodiscard]] inline std::vector<std::string> tip_ft_sensor_names(const Params& params) {
  return tip_ft_sensor_names(params.ft_sensor_name, params.ft_sensors.sensor_frames_map,
                             params.sensor_frames);
}

}  // namespace jtac
