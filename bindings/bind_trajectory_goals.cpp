// pybind11 bindings of what goes into the trajectory engine: its run-time ControllerParameters, goals
// (GoalPoint, TrajectoryGoal) and what submit_goal() answers (SubmitResult). A keyword's default is
// the default-constructed C++ struct's value. Conversion only: no algorithm here.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "jtac_core/events.hpp"
#include "jtac_core/interpolation.hpp"
#include "jtac_core/result_code.hpp"
#include "jtac_core/stop_trajectory.hpp"
#include "jtac_core/time_scaling.hpp"
#include "jtac_core/tolerances.hpp"
#include "jtac_core/trajectory.hpp"
#include "jtac_core/trajectory_controller.hpp"
#include "jtac_core/types.hpp"

#include "bind_trajectory.hpp"

namespace jtac_python {

/// The JointVector field `member` of ControllerParameters as a numpy property.
template <jtac::JointVector jtac::ControllerParameters::* member>
void def_vector_field(py::class_<jtac::ControllerParameters>& cls, const char* name, const char* doc) {
  cls.def_property(
      name, [](const jtac::ControllerParameters& p) { return to_array(p.*member); },
      [name](jtac::ControllerParameters& p, const InputArray& value) {
        p.*member = joint_vector(value, name, kAnySize);
      },
      doc);
}

void bind_trajectory_goals(py::module_& m) {
  const jtac::ControllerParameters parameter_defaults;
  const jtac::TrajectoryGoal goal_defaults;
  py::class_<jtac::ControllerParameters> params(
      m, "ControllerParameters", "Run-time parameters; per-joint arrays in controller joint order");
  params.def(
      py::init([](const OptionalArray& stop_accelerations_rad_s2,
                  const OptionalArray& default_path_tolerance_rad,
                  const OptionalArray& default_goal_tolerance_rad, double default_goal_time_tolerance_s,
                  double time_scale_percentage, double time_scale_filter_constant_s,
                  double start_position_tolerance_rad, double start_velocity_tolerance_rad_s,
                  double stitch_position_tolerance_rad, double stitch_velocity_tolerance_rad_s) {
        jtac::ControllerParameters p;
        if (stop_accelerations_rad_s2) {
          p.stop_accelerations_rad_s2 =
              joint_vector(*stop_accelerations_rad_s2, "stop_accelerations_rad_s2", kAnySize);
        }
        if (default_path_tolerance_rad) {
          p.default_path_tolerance_rad =
              joint_vector(*default_path_tolerance_rad, "default_path_tolerance_rad", kAnySize);
        }
        if (default_goal_tolerance_rad) {
          p.default_goal_tolerance_rad =
              joint_vector(*default_goal_tolerance_rad, "default_goal_tolerance_rad", kAnySize);
        }
        p.default_goal_time_tolerance_s = default_goal_time_tolerance_s;
        p.time_scale_percentage = time_scale_percentage;
        p.time_scale_filter_constant_s = time_scale_filter_constant_s;
        p.start_position_tolerance_rad = start_position_tolerance_rad;
        p.start_velocity_tolerance_rad_s = start_velocity_tolerance_rad_s;
        p.stitch_position_tolerance_rad = stitch_position_tolerance_rad;
        p.stitch_velocity_tolerance_rad_s = stitch_velocity_tolerance_rad_s;
        return p;
      }),
      py::kw_only(), py::arg("stop_accelerations_rad_s2") = py::none(),
      py::arg("default_path_tolerance_rad") = py::none(), py::arg("default_goal_tolerance_rad") = py::none(),
      py::arg("default_goal_time_tolerance_s") = parameter_defaults.default_goal_time_tolerance_s,
      py::arg("time_scale_percentage") = parameter_defaults.time_scale_percentage,
      py::arg("time_scale_filter_constant_s") = parameter_defaults.time_scale_filter_constant_s,
      py::arg("start_position_tolerance_rad") = parameter_defaults.start_position_tolerance_rad,
      py::arg("start_velocity_tolerance_rad_s") = parameter_defaults.start_velocity_tolerance_rad_s,
      py::arg("stitch_position_tolerance_rad") = parameter_defaults.stitch_position_tolerance_rad,
      py::arg("stitch_velocity_tolerance_rad_s") = parameter_defaults.stitch_velocity_tolerance_rad_s);
  def_vector_field<&jtac::ControllerParameters::stop_accelerations_rad_s2>(
      params, "stop_accelerations_rad_s2", "Per-joint deceleration limits of a stop [rad/s²]");
  def_vector_field<&jtac::ControllerParameters::default_path_tolerance_rad>(
      params, "default_path_tolerance_rad", "Per-joint path tolerance [rad] (inf = no limit)");
  def_vector_field<&jtac::ControllerParameters::default_goal_tolerance_rad>(
      params, "default_goal_tolerance_rad", "Per-joint goal tolerance [rad] (inf = no limit)");
  params
      .def_readwrite("default_goal_time_tolerance_s",
                     &jtac::ControllerParameters::default_goal_time_tolerance_s)
      .def_readwrite("time_scale_percentage", &jtac::ControllerParameters::time_scale_percentage)
      .def_readwrite("time_scale_filter_constant_s",
                     &jtac::ControllerParameters::time_scale_filter_constant_s)
      .def_readwrite("start_position_tolerance_rad",
                     &jtac::ControllerParameters::start_position_tolerance_rad)
      .def_readwrite("start_velocity_tolerance_rad_s",
                     &jtac::ControllerParameters::start_velocity_tolerance_rad_s)
      .def_readwrite("stitch_position_tolerance_rad",
                     &jtac::ControllerParameters::stitch_position_tolerance_rad)
      .def_readwrite("stitch_velocity_tolerance_rad_s",
                     &jtac::ControllerParameters::stitch_velocity_tolerance_rad_s);

  py::class_<jtac::GoalPoint>(m, "GoalPoint", "One waypoint in goal joint order; empty = not provided")
      .def(py::init([](double time_from_start_s, const py::object& positions_rad,
                       const py::object& velocities_rad_s, const py::object& accelerations_rad_s2,
                       const py::object& effort) {
             jtac::GoalPoint p;
             p.time_from_start_s = time_from_start_s;
             p.positions_rad = double_list(positions_rad, "positions_rad");
             p.velocities_rad_s = double_list(velocities_rad_s, "velocities_rad_s");
             p.accelerations_rad_s2 = double_list(accelerations_rad_s2, "accelerations_rad_s2");
             p.effort = double_list(effort, "effort");
             return p;
           }),
           py::arg("time_from_start_s"), py::arg("positions_rad"), py::arg("velocities_rad_s") = py::none(),
           py::arg("accelerations_rad_s2") = py::none(), py::arg("effort") = py::none())
      .def_readwrite("time_from_start_s", &jtac::GoalPoint::time_from_start_s)
      .def_readwrite("positions_rad", &jtac::GoalPoint::positions_rad)
      .def_readwrite("velocities_rad_s", &jtac::GoalPoint::velocities_rad_s)
      .def_readwrite("accelerations_rad_s2", &jtac::GoalPoint::accelerations_rad_s2)
      .def_readwrite("effort", &jtac::GoalPoint::effort, "refused when given: jtac commands positions");

  py::class_<jtac::TrajectoryGoal>(m, "TrajectoryGoal",
                                   "A trajectory goal (lists are copied: assign whole lists)")
      .def(py::init([](std::vector<std::string> joint_names, std::vector<jtac::GoalPoint> points,
                       double start_time_s, const py::object& path_tolerance_rad,
                       const py::object& goal_tolerance_rad, double goal_time_tolerance_s) {
             jtac::TrajectoryGoal g;
             g.joint_names = std::move(joint_names);
             g.points = std::move(points);
             g.start_time_s = start_time_s;
             g.path_tolerance_rad = double_list(path_tolerance_rad, "path_tolerance_rad");
             g.goal_tolerance_rad = double_list(goal_tolerance_rad, "goal_tolerance_rad");
             g.goal_time_tolerance_s = goal_time_tolerance_s;
             return g;
           }),
           py::arg("joint_names"), py::arg("points"), py::arg("start_time_s") = goal_defaults.start_time_s,
           py::arg("path_tolerance_rad") = py::none(), py::arg("goal_tolerance_rad") = py::none(),
           py::arg("goal_time_tolerance_s") = goal_defaults.goal_time_tolerance_s)
      .def_readwrite("joint_names", &jtac::TrajectoryGoal::joint_names)
      .def_readwrite("points", &jtac::TrajectoryGoal::points)
      .def_readwrite("start_time_s", &jtac::TrajectoryGoal::start_time_s)
      .def_readwrite("path_tolerance_rad", &jtac::TrajectoryGoal::path_tolerance_rad)
      .def_readwrite("goal_tolerance_rad", &jtac::TrajectoryGoal::goal_tolerance_rad)
      .def_readwrite("goal_time_tolerance_s", &jtac::TrajectoryGoal::goal_time_tolerance_s);

  py::class_<jtac::SubmitResult>(m, "SubmitResult", "Result of submit_goal()")
      .def_readonly("code", &jtac::SubmitResult::code)
      .def_readonly("message", &jtac::SubmitResult::message)
      .def_readonly("goal_id", &jtac::SubmitResult::goal_id)
      .def_readonly("busy", &jtac::SubmitResult::busy)
      .def_readonly("warning", &jtac::SubmitResult::warning)
      .def("__repr__", [](const jtac::SubmitResult& r) {
        return "SubmitResult(code=" + std::string(jtac::to_string(r.code)) +
               ", goal_id=" + std::to_string(r.goal_id) + ", busy=" + (r.busy ? "True" : "False") +
               ", message='" + r.message + "'" + (r.warning.empty() ? "" : ", warning='" + r.warning + "'") +
               ")";
      });
}

}  // namespace jtac_python
