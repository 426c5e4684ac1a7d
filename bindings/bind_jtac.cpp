// pybind11 bindings of the composed controller (JointTrajectoryAdmittanceController): its per-cycle
// output and the controller itself; bind_jtac() also registers the parts in bind_jtac_*.cpp (the
// force/torque pieces, the configuration, the goals; shared conversions in bind_jtac.hpp).
// Conversion only: no algorithm here.
//
// Conventions as in bind_trajectory*.cpp: every array that reaches a real-time call (update(), the
// filter, the pipeline) is converted strictly (exact shape, else ValueError naming the argument);
// goal fields are passed through as given, because the core's goal validation is what names the
// field, the axis and the value (INVALID_GOAL with a message). ControllerParameters, TrajectoryGoal,
// SubmitResult, Event and the enums are the ones bind_trajectory*.cpp register.
// Wrenches: rows [Fx Fy Fz Tx Ty Tz] in [N, N·m], one row per tip, in that tip's sensor frame.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>

#include "bind_jtac.hpp"

namespace py = pybind11;

namespace {

using namespace jtac_python;  // the shared conversions (bind_common.hpp, bind_jtac.hpp)

/// What update() returns: its status and a copy of the cycle's output.
struct JtacCycleResult {
  jtac::UpdateStatus status = jtac::UpdateStatus::kOk;
  jtac::JtacOutput output;
  int num_tips = 0;
};

void configure(Controller& c, const jtac::JtacConfig& config, const jtac::JtacParameters& parameters) {
  c.core.configure(config, parameters);  // std::invalid_argument -> ValueError
  c.out = jtac::JtacOutput{};
  c.has_sensor = config.has_force_torque_sensor;
}

jtac::TipWrenches wrenches_from(const Controller& c, const OptionalArray& wrenches) {
  jtac::TipWrenches w{};
  for (auto& row : w) {
    row.setZero();
  }
  const int tips = c.core.num_tips();
  if (!wrenches) {
    if (c.has_sensor) {
      throw std::invalid_argument("wrenches is required: this controller has a force/torque sensor (an (" +
                                  std::to_string(tips) + ", 6) array, one row per tip)");
    }
    return w;
  }
  const InputArray& a = *wrenches;
  if (a.ndim() != 2 || a.shape(0) != tips || a.shape(1) != 6) {
    throw std::invalid_argument("wrenches must have shape (" + std::to_string(tips) +
                                ", 6) (one row [Fx Fy Fz Tx Ty Tz] per tip, sensor frame), got " +
                                shape_text(a));
  }
  const auto aa = a.unchecked<2>();
  for (int k = 0; k < tips; ++k) {
    for (int i = 0; i < 6; ++i) {
      w[static_cast<std::size_t>(k)][i] = aa(k, i);
    }
  }
  return w;
}

void bind_controller(py::module_& m) {
  py::class_<JtacCycleResult>(m, "JtacOutput", "What one update() produced, as numpy arrays")
      .def_readonly("status", &JtacCycleResult::status)
      .def_property_readonly(
          "command_position_rad",
          [](const JtacCycleResult& r) { return to_array(r.output.trajectory.command.position_rad); })
      .def_property_readonly(
          "command_velocity_rad_s",
          [](const JtacCycleResult& r) { return to_array(r.output.trajectory.command.velocity_rad_s); })
      .def_property_readonly(
          "command_acceleration_rad_s2",
          [](const JtacCycleResult& r) { return to_array(r.output.trajectory.command.acceleration_rad_s2); })
      .def_property_readonly(
          "reference_position_rad",
          [](const JtacCycleResult& r) { return to_array(r.output.trajectory.reference.position_rad); })
      .def_property_readonly(
          "reference_velocity_rad_s",
          [](const JtacCycleResult& r) { return to_array(r.output.trajectory.reference.velocity_rad_s); })
      .def_property_readonly("reference_acceleration_rad_s2",
                             [](const JtacCycleResult& r) {
                               return to_array(r.output.trajectory.reference.acceleration_rad_s2);
                             })
      .def_property_readonly("error_rad",
                             [](const JtacCycleResult& r) { return to_array(r.output.trajectory.error_rad); })
      .def_property_readonly("mode", [](const JtacCycleResult& r) { return r.output.trajectory.mode; })
      .def_property_readonly("time_scale",
                             [](const JtacCycleResult& r) { return r.output.trajectory.time_scale; })
      .def_property_readonly("trajectory_time_s",
                             [](const JtacCycleResult& r) { return r.output.trajectory.trajectory_time_s; })
      .def_property_readonly("goal_id", [](const JtacCycleResult& r) { return r.output.trajectory.goal_id; })
      .def_property_readonly(
          "wrench_filtered_sensor",
          [](const JtacCycleResult& r) {
            return wrenches_array(r.output.wrench_filtered_sensor, r.num_tips);
          },
          "(num_tips, 6): tared, filtered, deadbanded, payload weight included, sensor frames [N, N·m]")
      .def_property_readonly(
          "wrench_control",
          [](const JtacCycleResult& r) { return wrenches_array(r.output.wrench_control, r.num_tips); },
          "(num_tips, 6): compensated, in the control frames (the admittance's input) [N, N·m]")
      .def_property_readonly(
          "joint_offset_rad", [](const JtacCycleResult& r) { return to_array(r.output.joint_offset_rad); },
          "The admittance's joint offset added to the command [rad]");

  py::class_<Controller>(m, "JointTrajectoryAdmittanceController",
                         "Trajectory tracking with Cartesian admittance at one or more tips")
      .def(py::init<>())
      .def(
          "configure",
          [](Controller& c, const jtac::JtacConfig& config, const jtac::JtacParameters& parameters) {
            configure(c, config, parameters);
          },
          py::arg("config"), py::arg("parameters"),
          "Claims all memory; ValueError naming the offending value")
      .def(
          "configure",
          [](Controller& c, std::vector<std::string> joint_names, std::vector<std::string> continuous_joints,
             int max_trajectory_points, std::string urdf_xml, std::string base_frame, const py::object& tips,
             bool has_force_torque_sensor, const jtac::JtacParameters& parameters) {
            jtac::JtacConfig config;
            config.trajectory.joint_names = std::move(joint_names);
            config.trajectory.continuous_joints = std::move(continuous_joints);
            config.trajectory.max_trajectory_points = max_trajectory_points;
            config.urdf_xml = std::move(urdf_xml);
            config.base_frame = std::move(base_frame);
            config.tips = tip_frames_from(tips);
            config.has_force_torque_sensor = has_force_torque_sensor;
            configure(c, config, parameters);
          },
          py::arg("joint_names"), py::arg("continuous_joints"), py::arg("max_trajectory_points"),
          py::arg("urdf_xml"), py::arg("base_frame"), py::arg("tips"), py::arg("has_force_torque_sensor"),
          py::arg("parameters"), "tips: [(sensor_frame, ee_frame), ...] or TipFrames")
      .def(
          "set_parameters",
          [](Controller& c, const jtac::JtacParameters& parameters) {
            return c.core.set_parameters(parameters);
          },
          py::arg("parameters"), "Publishes new run-time parameters; '' or the validation message")
      .def(
          "submit_goal",
          [](Controller& c, const jtac::JtacGoal& goal, double now_s) {
            return c.core.submit_goal(goal, now_s);
          },
          py::arg("goal"), py::arg("now_s"), "Validates and queues a JtacGoal")
      .def(
          "request_cancel", [](Controller& c, std::uint64_t goal_id) { c.core.request_cancel(goal_id); },
          py::arg("goal_id"))
      .def(
          "request_zero_fts", [](Controller& c, int tip) { return c.core.request_zero_fts(tip); },
          py::arg("tip"),
          "Asks for a tare of tip `tip`'s sensor; '' when queued (the outcome is an event), else why not")
      .def(
          "poll_events",
          [](Controller& c) {
            std::vector<PolledEvent> events;
            jtac::Event e;
            while (c.core.poll_event(e)) {
              events.push_back({e, jtac::describe(e, c.core.joint_names())});
            }
            return events;
          },
          "Every queued event, oldest first")
      .def("dropped_events", [](const Controller& c) { return c.core.trajectory().dropped_events(); })
      .def("activate", [](Controller& c) { c.core.activate(); })
      .def(
          "deactivate", [](Controller& c, double time_s) { c.core.deactivate(time_s); }, py::arg("time_s"))
      .def(
          "update",
          [](Controller& c, double time_s, double period_s, const InputArray& position_rad,
             const InputArray& velocity_rad_s, const OptionalArray& wrenches) {
            const Eigen::Index n = c.core.trajectory().num_joints();
            if (n == 0) {
              throw std::logic_error("JointTrajectoryAdmittanceController.update: call configure() first");
            }
            const jtac::JointVector q = joint_vector(position_rad, "position_rad", n);
            const jtac::JointVector dq = joint_vector(velocity_rad_s, "velocity_rad_s", n);
            const jtac::TipWrenches w = wrenches_from(c, wrenches);
            JtacCycleResult r;
            r.status = c.core.update(time_s, period_s, q, dq, w, c.out);
            r.output = c.out;
            r.num_tips = c.core.num_tips();
            return r;
          },
          py::arg("time_s"), py::arg("period_s"), py::arg("position_rad"), py::arg("velocity_rad_s"),
          py::arg("wrenches") = py::none(),
          "One control cycle; wrenches (num_tips, 6), raw, sensor frames (optional without a sensor): "
          "JtacOutput (with .status)")
      .def_property_readonly("joint_names", [](const Controller& c) { return c.core.joint_names(); })
      .def_property_readonly("num_joints",
                             [](const Controller& c) { return c.core.trajectory().num_joints(); })
      .def_property_readonly("num_tips", [](const Controller& c) { return c.core.num_tips(); })
      .def_property_readonly("ee_frames", [](const Controller& c) { return c.core.ee_frames(); })
      .def_property_readonly("sensor_frames", [](const Controller& c) { return c.core.sensor_frames(); })
      .def_property_readonly("has_force_torque_sensor", [](const Controller& c) { return c.has_sensor; })
      .def_property_readonly("is_active",
                             [](const Controller& c) { return c.core.trajectory().is_active(); });
}

}  // namespace

/// Registers the composed controller and the force/torque pieces in `m` (called from PYBIND11_MODULE,
/// after bind_trajectory, whose types it reuses).
void bind_jtac(py::module_& m) {
  jtac_python::bind_signal_processing(m);
  jtac_python::bind_jtac_configuration(m);
  jtac_python::bind_jtac_goals(m);
  bind_controller(m);
}
