// pybind11 bindings of the composed controller's goals: TipGoal (admittance and payload of one tip)
// and JtacGoal (a trajectory plus its tips). Fields are passed through as given: the core's goal
// validation names the field, the axis and the value. Conversion only: no algorithm here.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "bind_jtac.hpp"

namespace jtac_python {

void bind_jtac_goals(py::module_& m) {
  const jtac::TipGoal tip_defaults;
  const jtac::JtacGoal goal_defaults;
  py::class_<jtac::TipGoal>(m, "TipGoal",
                            "Admittance and payload of one tip (lists are copied: assign whole lists); axes "
                            "[x y z rx ry rz] of the control frame. ee_pose_control: a 4x4 matrix or a pair "
                            "(xyz [m], quaternion [x y z w]), the control frame in the ee frame")
      .def(py::init([](std::string end_effector_frame, const py::object& mass, const py::object& stiffness,
                       const py::object& damping, const py::object& selected_axes,
                       const py::object& ee_pose_control, double end_effector_mass_kg,
                       const py::object& end_effector_cog_m,
                       const py::object& absolute_force_torque_threshold) {
             jtac::TipGoal t;
             t.end_effector_frame = std::move(end_effector_frame);
             t.mass = double_list(mass, "mass");
             t.stiffness = double_list(stiffness, "stiffness");
             t.damping = double_list(damping, "damping");
             t.selected_axes = bool_list(selected_axes, "selected_axes");
             t.T_ee_control = pose_from(ee_pose_control, "ee_pose_control");
             t.end_effector_mass_kg = end_effector_mass_kg;
             t.end_effector_cog_m = double_list(end_effector_cog_m, "end_effector_cog_m");
             t.absolute_force_torque_threshold =
                 double_list(absolute_force_torque_threshold, "absolute_force_torque_threshold");
             return t;
           }),
           py::kw_only(), py::arg("end_effector_frame") = tip_defaults.end_effector_frame,
           py::arg("mass") = py::none(), py::arg("stiffness") = py::none(), py::arg("damping") = py::none(),
           py::arg("selected_axes") = py::none(), py::arg("ee_pose_control") = py::none(),
           py::arg("end_effector_mass_kg") = tip_defaults.end_effector_mass_kg,
           py::arg("end_effector_cog_m") = py::none(),
           py::arg("absolute_force_torque_threshold") = py::none())
      .def_readwrite("end_effector_frame", &jtac::TipGoal::end_effector_frame,
                     "One of the configured ee frames; '' = the tip at this position")
      .def_property(
          "mass", [](const jtac::TipGoal& t) { return t.mass; },
          [](jtac::TipGoal& t, const py::object& v) { t.mass = double_list(v, "mass"); },
          "6 or empty [kg, kg·m²]")
      .def_property(
          "stiffness", [](const jtac::TipGoal& t) { return t.stiffness; },
          [](jtac::TipGoal& t, const py::object& v) { t.stiffness = double_list(v, "stiffness"); },
          "6 or empty [N/m, N·m/rad]")
      .def_property(
          "damping", [](const jtac::TipGoal& t) { return t.damping; },
          [](jtac::TipGoal& t, const py::object& v) { t.damping = double_list(v, "damping"); },
          "6 or empty [N·s/m, N·m·s/rad] (absolute, not a ratio)")
      .def_property(
          "selected_axes", [](const jtac::TipGoal& t) { return t.selected_axes; },
          [](jtac::TipGoal& t, const py::object& v) { t.selected_axes = bool_list(v, "selected_axes"); },
          "6 or empty: the compliant axes")
      .def_property(
          "ee_pose_control", [](const jtac::TipGoal& t) { return matrix_array(t.T_ee_control.matrix()); },
          [](jtac::TipGoal& t, const py::object& v) { t.T_ee_control = pose_from(v, "ee_pose_control"); },
          "The control frame in the ee frame: 4x4 out; 4x4 or (xyz, quaternion [x y z w]) in")
      .def_readwrite("end_effector_mass_kg", &jtac::TipGoal::end_effector_mass_kg,
                     "Payload mass [kg]; 0 = none")
      .def_property(
          "end_effector_cog_m", [](const jtac::TipGoal& t) { return t.end_effector_cog_m; },
          [](jtac::TipGoal& t, const py::object& v) {
            t.end_effector_cog_m = double_list(v, "end_effector_cog_m");
          },
          "3 or empty: the payload's centre of gravity in the ee frame [m]")
      .def_property(
          "absolute_force_torque_threshold",
          [](const jtac::TipGoal& t) { return t.absolute_force_torque_threshold; },
          [](jtac::TipGoal& t, const py::object& v) {
            t.absolute_force_torque_threshold = double_list(v, "absolute_force_torque_threshold");
          },
          "6 or empty (= the goal's) [N, N·m]");

  py::class_<jtac::JtacGoal>(m, "JtacGoal", "A trajectory goal with admittance per tip (lists are copied)")
      .def(py::init([](jtac::TrajectoryGoal trajectory, std::vector<jtac::TipGoal> tips,
                       double joint_damping_per_s, const py::object& absolute_force_torque_threshold) {
             jtac::JtacGoal g;
             g.trajectory = std::move(trajectory);
             g.tips = std::move(tips);
             g.joint_damping_per_s = joint_damping_per_s;
             g.absolute_force_torque_threshold =
                 double_list(absolute_force_torque_threshold, "absolute_force_torque_threshold");
             return g;
           }),
           py::arg("trajectory"), py::kw_only(), py::arg("tips") = std::vector<jtac::TipGoal>{},
           py::arg("joint_damping_per_s") = goal_defaults.joint_damping_per_s,
           py::arg("absolute_force_torque_threshold") = py::none(),
           "From its typed pieces: a TrajectoryGoal and TipGoal objects (jtac_py.goals builds them, from "
           "a mapping too)")
      .def_property(
          "trajectory", [](const jtac::JtacGoal& g) { return g.trajectory; },
          [](jtac::JtacGoal& g, const jtac::TrajectoryGoal& v) { g.trajectory = v; })
      .def_property(
          "tips", [](const jtac::JtacGoal& g) { return g.tips; },
          [](jtac::JtacGoal& g, const py::object& v) { g.tips = tip_goals_from(v); },
          "TipGoal objects (a copy: assign a whole list)")
      .def_readwrite("joint_damping_per_s", &jtac::JtacGoal::joint_damping_per_s, "[1/s], >= 0")
      .def_property(
          "absolute_force_torque_threshold",
          [](const jtac::JtacGoal& g) { return g.absolute_force_torque_threshold; },
          [](jtac::JtacGoal& g, const py::object& v) {
            g.absolute_force_torque_threshold = double_list(v, "absolute_force_torque_threshold");
          },
          "6 or empty (= default_absolute_force_torque_threshold) [N, N·m]");
}

}  // namespace jtac_python
