// pybind11 bindings of the composed controller's configuration: TipFrames, JtacConfig and
// JtacParameters. A keyword's default is the default-constructed C++ struct's value (one place).
// Conversion only: no algorithm here.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "bind_jtac.hpp"

namespace jtac_python {

void bind_jtac_configuration(py::module_& m) {
  const jtac::JtacConfig config_defaults;
  const jtac::JtacParameters parameter_defaults;
  py::class_<jtac::TipFrames>(m, "TipFrames",
                              "One tip: the frame its sensor measures in and the frame it controls")
      .def(py::init([](std::string sensor_frame, std::string ee_frame) {
             return jtac::TipFrames{std::move(sensor_frame), std::move(ee_frame)};
           }),
           py::arg("sensor_frame"), py::arg("ee_frame"))
      .def_readwrite("sensor_frame", &jtac::TipFrames::sensor_frame)
      .def_readwrite("ee_frame", &jtac::TipFrames::ee_frame)
      .def("__repr__", [](const jtac::TipFrames& t) {
        return "TipFrames(sensor_frame='" + t.sensor_frame + "', ee_frame='" + t.ee_frame + "')";
      });

  py::class_<jtac::JtacConfig>(m, "JtacConfig", "Configure-time structure (read-only parameters)")
      .def(py::init([](std::vector<std::string> joint_names, std::vector<std::string> continuous_joints,
                       int max_trajectory_points, std::string urdf_xml, std::string base_frame,
                       const py::object& tips, bool has_force_torque_sensor,
                       std::vector<double> max_velocity_rad_s, std::vector<double> max_acceleration_rad_s2,
                       double update_rate_hz, bool check_admittance_stability) {
             jtac::JtacConfig c;
             c.trajectory.joint_names = std::move(joint_names);
             c.trajectory.continuous_joints = std::move(continuous_joints);
             c.trajectory.max_trajectory_points = max_trajectory_points;
             c.trajectory.max_velocity_rad_s = std::move(max_velocity_rad_s);
             c.trajectory.max_acceleration_rad_s2 = std::move(max_acceleration_rad_s2);
             c.urdf_xml = std::move(urdf_xml);
             c.base_frame = std::move(base_frame);
             c.tips = tip_frames_from(tips);
             c.has_force_torque_sensor = has_force_torque_sensor;
             c.update_rate_hz = update_rate_hz;
             c.check_admittance_stability = check_admittance_stability;
             return c;
           }),
           py::arg("joint_names"), py::arg("continuous_joints") = std::vector<std::string>{},
           py::arg("max_trajectory_points") = config_defaults.trajectory.max_trajectory_points,
           py::arg("urdf_xml") = config_defaults.urdf_xml, py::arg("base_frame") = config_defaults.base_frame,
           py::arg("tips") = py::list(),
           py::arg("has_force_torque_sensor") = config_defaults.has_force_torque_sensor,
           py::arg("max_velocity_rad_s") = config_defaults.trajectory.max_velocity_rad_s,
           py::arg("max_acceleration_rad_s2") = config_defaults.trajectory.max_acceleration_rad_s2,
           py::arg("update_rate_hz") = config_defaults.update_rate_hz,
           py::arg("check_admittance_stability") = config_defaults.check_admittance_stability)
      .def_property(
          "max_velocity_rad_s", [](const jtac::JtacConfig& c) { return c.trajectory.max_velocity_rad_s; },
          [](jtac::JtacConfig& c, std::vector<double> v) { c.trajectory.max_velocity_rad_s = std::move(v); },
          "The robot's joint velocity limits [rad/s] bounding the segment to a goal's first point; [] = none")
      .def_property(
          "max_acceleration_rad_s2",
          [](const jtac::JtacConfig& c) { return c.trajectory.max_acceleration_rad_s2; },
          [](jtac::JtacConfig& c, std::vector<double> v) {
            c.trajectory.max_acceleration_rad_s2 = std::move(v);
          },
          "The robot's joint acceleration limits [rad/s²] for the same segment; [] = none")
      .def_property(
          "joint_names", [](const jtac::JtacConfig& c) { return c.trajectory.joint_names; },
          [](jtac::JtacConfig& c, std::vector<std::string> v) { c.trajectory.joint_names = std::move(v); })
      .def_property(
          "continuous_joints", [](const jtac::JtacConfig& c) { return c.trajectory.continuous_joints; },
          [](jtac::JtacConfig& c, std::vector<std::string> v) {
            c.trajectory.continuous_joints = std::move(v);
          })
      .def_property(
          "max_trajectory_points",
          [](const jtac::JtacConfig& c) { return c.trajectory.max_trajectory_points; },
          [](jtac::JtacConfig& c, int v) { c.trajectory.max_trajectory_points = v; })
      .def_readwrite("urdf_xml", &jtac::JtacConfig::urdf_xml)
      .def_readwrite("base_frame", &jtac::JtacConfig::base_frame)
      .def_property(
          "tips", [](const jtac::JtacConfig& c) { return c.tips; },
          [](jtac::JtacConfig& c, const py::object& tips) { c.tips = tip_frames_from(tips); },
          "TipFrames (or (sensor_frame, ee_frame) pairs), one per tip")
      .def_readwrite("has_force_torque_sensor", &jtac::JtacConfig::has_force_torque_sensor)
      .def_readwrite("update_rate_hz", &jtac::JtacConfig::update_rate_hz,
                     "The rate update() runs at [Hz]; goal intake checks admittance stability at it")
      .def_readwrite("check_admittance_stability", &jtac::JtacConfig::check_admittance_stability,
                     "For tests only: False accepts admittance sets the stability check would reject");

  py::class_<jtac::JtacParameters>(m, "JtacParameters", "Run-time parameters, applied at a cycle boundary")
      .def(py::init([](const jtac::ControllerParameters& trajectory, double ft_cutoff_frequency_ratio,
                       double ft_force_deadband_N, double ft_torque_deadband_Nm,
                       const OptionalArray& default_absolute_force_torque_threshold,
                       const OptionalArray& gravity_base_m_s2, double jacobian_damping,
                       int zero_fts_num_samples) {
             jtac::JtacParameters p;
             p.trajectory = trajectory;
             p.ft_cutoff_frequency_ratio = ft_cutoff_frequency_ratio;
             p.ft_force_deadband_N = ft_force_deadband_N;
             p.ft_torque_deadband_Nm = ft_torque_deadband_Nm;
             if (default_absolute_force_torque_threshold) {
               p.default_absolute_force_torque_threshold = fixed_vector<6>(
                   *default_absolute_force_torque_threshold, "default_absolute_force_torque_threshold");
             }
             if (gravity_base_m_s2) {
               p.gravity_base_m_s2 = fixed_vector<3>(*gravity_base_m_s2, "gravity_base_m_s2");
             }
             p.jacobian_damping = jacobian_damping;
             p.zero_fts_num_samples = zero_fts_num_samples;
             return p;
           }),
           py::kw_only(), py::arg("trajectory") = parameter_defaults.trajectory,
           py::arg("ft_cutoff_frequency_ratio") = parameter_defaults.ft_cutoff_frequency_ratio,
           py::arg("ft_force_deadband_N") = parameter_defaults.ft_force_deadband_N,
           py::arg("ft_torque_deadband_Nm") = parameter_defaults.ft_torque_deadband_Nm,
           py::arg("default_absolute_force_torque_threshold") = py::none(),
           py::arg("gravity_base_m_s2") = py::none(),
           py::arg("jacobian_damping") = parameter_defaults.jacobian_damping,
           py::arg("zero_fts_num_samples") = parameter_defaults.zero_fts_num_samples)
      .def_readwrite("trajectory", &jtac::JtacParameters::trajectory, "The engine's ControllerParameters")
      .def_readwrite("ft_cutoff_frequency_ratio", &jtac::JtacParameters::ft_cutoff_frequency_ratio,
                     "Butterworth cutoff / update rate; >= 0.5 (1.0 default) = no filtering")
      .def_readwrite("ft_force_deadband_N", &jtac::JtacParameters::ft_force_deadband_N)
      .def_readwrite("ft_torque_deadband_Nm", &jtac::JtacParameters::ft_torque_deadband_Nm)
      .def_property(
          "default_absolute_force_torque_threshold",
          [](const jtac::JtacParameters& p) {
            return vector_array<6>(p.default_absolute_force_torque_threshold);
          },
          [](jtac::JtacParameters& p, const InputArray& v) {
            p.default_absolute_force_torque_threshold =
                fixed_vector<6>(v, "default_absolute_force_torque_threshold");
          },
          "[Fx Fy Fz Tx Ty Tz] limits of goals that give none [N, N·m]")
      .def_property(
          "gravity_base_m_s2",
          [](const jtac::JtacParameters& p) { return vector_array<3>(p.gravity_base_m_s2); },
          [](jtac::JtacParameters& p, const InputArray& v) {
            p.gravity_base_m_s2 = fixed_vector<3>(v, "gravity_base_m_s2");
          },
          "Gravity in the base frame [m/s²] (payload compensation)")
      .def_readwrite("jacobian_damping", &jtac::JtacParameters::jacobian_damping)
      .def_readwrite("zero_fts_num_samples", &jtac::JtacParameters::zero_fts_num_samples);
}

}  // namespace jtac_python
