// pybind11 bindings of jtac_core's trajectory engine: TrajectoryController, its cycle input and
// output and its events; bind_trajectory() also registers the parts in bind_trajectory_*.cpp (enums,
// interpolation and stops, Trajectory, parameters and goals; helpers in bind_trajectory.hpp).
// Conversion only: no algorithm here.
//
// Every array argument is converted strictly: one-dimensional, the exact number of joints (or at
// most kMaxJoints where nothing fixes it), otherwise ValueError naming the argument. Nothing of a
// wrong size ever reaches the core, whose real-time functions do not check sizes.
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

namespace py = pybind11;

namespace {

using namespace jtac_python;  // the shared conversions (bind_common.hpp, bind_trajectory.hpp)

/// A stop requested through the cycle input (CycleSeams without the offset).
struct StopRequest {
  jtac::ResultCode code = jtac::ResultCode::kForceTorqueThresholdExceeded;
  int index = -1;
  double value = 0.0;
  double limit = 0.0;
};

/// What update() returns: its status and the cycle's output.
struct CycleResult {
  jtac::UpdateStatus status = jtac::UpdateStatus::kOk;
  jtac::ControllerOutput output;
};

void bind_controller(py::module_& m) {
  const jtac::ControllerConfig config_defaults;
  const StopRequest stop_defaults;
  py::class_<StopRequest>(m, "StopRequest", "A stop requested through the cycle input (e.g. F/T threshold)")
      .def(py::init([](jtac::ResultCode code, int index, double value, double limit) {
             return StopRequest{code, index, value, limit};
           }),
           py::arg("code"), py::arg("index") = stop_defaults.index, py::arg("value") = stop_defaults.value,
           py::arg("limit") = stop_defaults.limit)
      .def_readwrite("code", &StopRequest::code)
      .def_readwrite("index", &StopRequest::index)
      .def_readwrite("value", &StopRequest::value)
      .def_readwrite("limit", &StopRequest::limit);
  py::implicitly_convertible<jtac::ResultCode, StopRequest>();

  py::class_<PolledEvent>(m, "Event", "One report from the real-time side, with its message")
      .def_property_readonly("type", [](const PolledEvent& e) { return e.event.type; })
      .def_property_readonly("detail", [](const PolledEvent& e) { return e.event.detail; })
      .def_property_readonly("code", [](const PolledEvent& e) { return e.event.code; })
      .def_property_readonly("goal_id", [](const PolledEvent& e) { return e.event.goal_id; })
      .def_property_readonly("joint", [](const PolledEvent& e) { return e.event.joint; })
      .def_property_readonly("value", [](const PolledEvent& e) { return e.event.value; })
      .def_property_readonly("limit", [](const PolledEvent& e) { return e.event.limit; })
      .def_property_readonly("time_s", [](const PolledEvent& e) { return e.event.time_s; })
      .def_property_readonly("stop_duration_s", [](const PolledEvent& e) { return e.event.stop_duration_s; })
      .def_readonly("message", &PolledEvent::message)
      .def("__repr__", [](const PolledEvent& e) {
        return "Event(goal_id=" + std::to_string(e.event.goal_id) +
               ", code=" + std::string(jtac::to_string(e.event.code)) + ", message='" + e.message + "')";
      });

  py::class_<CycleResult>(m, "ControllerOutput", "What one update() produced, as numpy arrays")
      .def_readonly("status", &CycleResult::status)
      .def_property_readonly("command_position_rad",
                             [](const CycleResult& r) { return to_array(r.output.command.position_rad); })
      .def_property_readonly("command_velocity_rad_s",
                             [](const CycleResult& r) { return to_array(r.output.command.velocity_rad_s); })
      .def_property_readonly(
          "command_acceleration_rad_s2",
          [](const CycleResult& r) { return to_array(r.output.command.acceleration_rad_s2); })
      .def_property_readonly("reference_position_rad",
                             [](const CycleResult& r) { return to_array(r.output.reference.position_rad); })
      .def_property_readonly("reference_velocity_rad_s",
                             [](const CycleResult& r) { return to_array(r.output.reference.velocity_rad_s); })
      .def_property_readonly(
          "reference_acceleration_rad_s2",
          [](const CycleResult& r) { return to_array(r.output.reference.acceleration_rad_s2); })
      .def_property_readonly("error_rad", [](const CycleResult& r) { return to_array(r.output.error_rad); })
      .def_property_readonly("mode", [](const CycleResult& r) { return r.output.mode; })
      .def_property_readonly("time_scale", [](const CycleResult& r) { return r.output.time_scale; })
      .def_property_readonly("trajectory_time_s",
                             [](const CycleResult& r) { return r.output.trajectory_time_s; })
      .def_property_readonly("goal_id", [](const CycleResult& r) { return r.output.goal_id; });

  py::class_<jtac::TrajectoryController>(m, "TrajectoryController", "The trajectory engine")
      .def(py::init<>())
      .def(
          "configure",
          [](jtac::TrajectoryController& c, std::vector<std::string> joint_names,
             std::vector<std::string> continuous_joints, int max_trajectory_points,
             const jtac::ControllerParameters& parameters, std::vector<double> max_velocity_rad_s,
             std::vector<double> max_acceleration_rad_s2) {
            jtac::ControllerConfig config;
            config.joint_names = std::move(joint_names);
            config.continuous_joints = std::move(continuous_joints);
            config.max_trajectory_points = max_trajectory_points;
            config.max_velocity_rad_s = std::move(max_velocity_rad_s);
            config.max_acceleration_rad_s2 = std::move(max_acceleration_rad_s2);
            c.configure(config, parameters);  // std::invalid_argument -> ValueError
          },
          py::arg("joint_names"), py::arg("continuous_joints"), py::arg("max_trajectory_points"),
          py::arg("parameters"), py::kw_only(),
          py::arg("max_velocity_rad_s") = config_defaults.max_velocity_rad_s,
          py::arg("max_acceleration_rad_s2") = config_defaults.max_acceleration_rad_s2,
          "Claims all memory; ValueError naming the offending joint or value. max_velocity_rad_s / "
          "max_acceleration_rad_s2: the robot's joint limits that bound the segment to a goal's first point "
          "(empty = unchecked)")
      .def("validate_parameters", &jtac::TrajectoryController::validate_parameters, py::arg("parameters"),
           "'' or a message naming the parameter, joint and value")
      .def("set_parameters", &jtac::TrajectoryController::set_parameters, py::arg("parameters"),
           "Publishes new run-time parameters; returns '' or the validation message")
      .def(
          "submit_goal",
          [](jtac::TrajectoryController& c, const jtac::TrajectoryGoal& goal, double now_s) {
            return c.submit_goal(goal, now_s);
          },
          py::arg("goal"), py::arg("now_s"), "Validates and queues a TrajectoryGoal")
      .def("request_cancel", &jtac::TrajectoryController::request_cancel, py::arg("goal_id"))
      .def(
          "poll_events",
          [](jtac::TrajectoryController& c) {
            std::vector<PolledEvent> events;
            jtac::Event e;
            while (c.poll_event(e)) {
              events.push_back({e, jtac::describe(e, c.joint_names())});
            }
            return events;
          },
          "Every queued event, oldest first")
      .def("dropped_events", &jtac::TrajectoryController::dropped_events)
      .def("activate", py::overload_cast<>(&jtac::TrajectoryController::activate),
           "Starts control; the command reference starts at the first measurement")
      .def(
          "activate",
          [](jtac::TrajectoryController& c, const InputArray& command_position_rad) {
            c.activate(joint_vector(command_position_rad, "command_position_rad", c.num_joints()));
          },
          py::arg("command_position_rad"),
          "Starts control holding command_position_rad (the position the hardware is commanded)")
      .def("deactivate", &jtac::TrajectoryController::deactivate, py::arg("time_s"))
      .def(
          "update",
          [](jtac::TrajectoryController& c, double time_s, double period_s, const InputArray& position_rad,
             const InputArray& velocity_rad_s, const OptionalArray& joint_offset_rad,
             const std::optional<StopRequest>& stop_request) {
            const Eigen::Index n = c.num_joints();
            if (n == 0) {
              throw std::logic_error("TrajectoryController.update: call configure() first");
            }
            const jtac::JointVector q = joint_vector(position_rad, "position_rad", n);
            const jtac::JointVector dq = joint_vector(velocity_rad_s, "velocity_rad_s", n);
            jtac::JointVector offset;
            jtac::CycleSeams seams;
            if (joint_offset_rad) {
              offset = joint_vector(*joint_offset_rad, "joint_offset_rad", n);
              seams.joint_offset_rad = &offset;
            }
            if (stop_request) {
              seams.stop_requested = true;
              seams.stop_code = stop_request->code;
              seams.stop_index = stop_request->index;
              seams.stop_value = stop_request->value;
              seams.stop_limit = stop_request->limit;
            }
            CycleResult r;
            r.status = c.update(time_s, period_s, q, dq, seams, r.output);
            return r;
          },
          py::arg("time_s"), py::arg("period_s"), py::arg("position_rad"), py::arg("velocity_rad_s"),
          py::arg("joint_offset_rad") = py::none(), py::arg("stop_request") = py::none(),
          "One control cycle: ControllerOutput (with .status)")
      .def_property_readonly("joint_names", &jtac::TrajectoryController::joint_names)
      .def_property_readonly("num_joints", &jtac::TrajectoryController::num_joints)
      .def_property_readonly("is_active", &jtac::TrajectoryController::is_active);
}

}  // namespace

/// Registers the trajectory engine's classes and functions in `m` (called from PYBIND11_MODULE).
void bind_trajectory(py::module_& m) {
  jtac_python::bind_trajectory_enums(m);
  jtac_python::bind_trajectory_functions(m);
  jtac_python::bind_trajectory_class(m);
  jtac_python::bind_trajectory_goals(m);
  bind_controller(m);
}
