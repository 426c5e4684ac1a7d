// pybind11 bindings of franka_hw_mujoco: the simulated arm (MujocoDevice) behind the device contract.
// Keyword defaults are those of a default-constructed MujocoDeviceConfig. Conversion only.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "franka_hw/mujoco_device.hpp"

#include "bind_common.hpp"
#include "bind_hw_arrays.hpp"

namespace py = pybind11;

namespace {

using jtac::hw::kNumJoints;
using jtac_python::fixed;
using jtac_python::InputArray;

const char* clock_name(jtac::hw::ClockMode clock) {
  return clock == jtac::hw::ClockMode::kLockstep ? "lockstep" : "realtime";
}

const char* hand_kind_name(jtac::hw::HandCommandKind kind) {
  switch (kind) {
    case jtac::hw::HandCommandKind::kHoming:
      return "homing";
    case jtac::hw::HandCommandKind::kMove:
      return "move";
    case jtac::hw::HandCommandKind::kGrasp:
      return "grasp";
    case jtac::hw::HandCommandKind::kStop:
      return "stop";
  }
  return "unknown";
}

jtac::hw::HandCommandKind hand_kind(const std::string& name) {
  for (const auto kind : {jtac::hw::HandCommandKind::kHoming, jtac::hw::HandCommandKind::kMove,
                          jtac::hw::HandCommandKind::kGrasp, jtac::hw::HandCommandKind::kStop}) {
    if (name == hand_kind_name(kind)) {
      return kind;
    }
  }
  throw std::invalid_argument("hand command: kind must be 'homing', 'move', 'grasp' or 'stop', got '" + name +
                              "'");
}

const char* hand_status_name(jtac::hw::HandStatus status) {
  switch (status) {
    case jtac::hw::HandStatus::kIdle:
      return "idle";
    case jtac::hw::HandStatus::kRunning:
      return "running";
    case jtac::hw::HandStatus::kSuccess:
      return "success";
    case jtac::hw::HandStatus::kUnsuccessful:
      return "unsuccessful";
    case jtac::hw::HandStatus::kBlocked:
      return "blocked";
    case jtac::hw::HandStatus::kAborted:
      return "aborted";
  }
  return "unknown";
}

void bind_hand_state(py::module_& m) {
  using jtac::hw::HandState;
  py::class_<HandState>(m, "HandState",
                        "The simulated Franka Hand at one device tick (MujocoDevice.hand_state())")
      .def_readonly("width_m", &HandState::width_m, "Width between the finger pads [m]")
      .def_readonly("width_velocity_m_s", &HandState::width_velocity_m_s, "Its rate, positive opening [m/s]")
      .def_readonly("force_n", &HandState::force_N,
                    "Force the drive applies on each finger, positive closing [N]")
      .def_readonly("temperature_c", &HandState::temperature_C, "[°C]")
      .def_readonly("is_grasped", &HandState::is_grasped,
                    "A successful grasp holds, its width within the band")
      .def_readonly("moving", &HandState::moving, "|width velocity| >= 5 mm/s")
      .def_readonly("command_id", &HandState::command_id, "The newest command taken (0: none since reset)")
      .def_property_readonly(
          "command_kind", [](const HandState& s) { return hand_kind_name(s.command_kind); },
          "'homing' | 'move' | 'grasp' | 'stop'")
      .def_property_readonly(
          "status", [](const HandState& s) { return hand_status_name(s.status); },
          "The newest command: 'idle' | 'running' | 'success' | 'unsuccessful' | 'blocked' | 'aborted'")
      .def_readonly("tick", &HandState::tick, "The device tick whose state width_m measures")
      .def("__repr__", [](const HandState& s) {
        return "HandState(width_m=" + std::to_string(s.width_m) +
               ", command_id=" + std::to_string(s.command_id) + ", command_kind='" +
               hand_kind_name(s.command_kind) + "', status='" + hand_status_name(s.status) +
               "', is_grasped=" + (s.is_grasped ? "True" : "False") + ", tick=" + std::to_string(s.tick) +
               ")";
      });
}

}  // namespace

/// Registers MujocoDevice in `m` (from bind_hw, after the Device base).
void bind_hw_mujoco(py::module_& m) {
  using jtac::hw::MujocoDevice;
  const jtac::hw::MujocoDeviceConfig defaults;
  bind_hand_state(m);

  py::class_<MujocoDevice, jtac::hw::Device>(
      m, "MujocoDevice", "The simulated Franka arm (MuJoCo) behind libfranka's packet semantics")
      .def(
          py::init([](const std::string& mjcf_xml, const std::string& name_prefix,
                      const std::optional<InputArray>& q_init_rad, const std::optional<InputArray>& stiffness,
                      const std::optional<InputArray>& damping, const std::string& clock) {
            jtac::hw::MujocoDeviceConfig config;
            config.mjcf_xml = mjcf_xml;
            config.name_prefix = name_prefix;
            if (q_init_rad) {
              config.q_init_rad = fixed<kNumJoints>(*q_init_rad, "q_init_rad");
            }
            if (stiffness) {
              config.stiffness_Nm_rad = fixed<kNumJoints>(*stiffness, "stiffness_Nm_rad");
            }
            if (damping) {
              config.damping_Nm_s_rad = fixed<kNumJoints>(*damping, "damping_Nm_s_rad");
            }
            if (clock == "lockstep") {
              config.clock = jtac::hw::ClockMode::kLockstep;
            } else if (clock == "realtime") {
              config.clock = jtac::hw::ClockMode::kRealTime;
            } else {
              throw std::invalid_argument("clock must be 'lockstep' or 'realtime', got '" + clock + "'");
            }
            return std::make_unique<MujocoDevice>(config);
          }),
          py::arg("mjcf_xml"), py::kw_only(), py::arg("name_prefix") = defaults.name_prefix,
          py::arg("q_init_rad") = py::none(), py::arg("stiffness_Nm_rad") = py::none(),
          py::arg("damping_Nm_s_rad") = py::none(), py::arg("clock") = clock_name(defaults.clock),
          "Compiles the MJCF text (ValueError/RuntimeError with MuJoCo's message); clock 'lockstep' or "
          "'realtime'")
      .def(
          "reset", [](MujocoDevice& d, const InputArray& q) { d.reset(fixed<kNumJoints>(q, "q_rad")); },
          py::arg("q_rad"), "Back to tick 0 at rest at q_rad")
      .def_property_readonly("clock", [](const MujocoDevice& d) { return clock_name(d.clock()); })
      .def(
          "push",
          [](MujocoDevice& d, const std::string& frame, const InputArray& wrench, double duration_s) {
            d.push(frame, fixed<6>(wrench, "wrench_world_N_Nm"), duration_s);
          },
          py::arg("frame"), py::arg("wrench_world_N_Nm"), py::arg("duration_s"),
          "Applies [Fx Fy Fz Tx Ty Tz] (world axes) at the origin of a site/body for duration_s from the "
          "next tick; any thread")
      .def("inject_sensor_fault", &MujocoDevice::inject_sensor_fault, py::arg("value"), py::arg("duration_s"),
           "Every F/T component reads `value` (e.g. NaN) for duration_s from the next tick; any thread")
      .def("inject_fault", &MujocoDevice::inject_fault,
           "Robot fault (as a reflex): every read fails with DEVICE_ERROR from the next one on, until "
           "clear_fault(); any thread")
      .def("clear_fault", &MujocoDevice::clear_fault, "Ends an injected fault; any thread")
      .def_property_readonly("fault_injected", &MujocoDevice::fault_injected)
      .def_property_readonly("pushes_active", &MujocoDevice::pushes_active)
      .def_property_readonly("pushes_dropped", &MujocoDevice::pushes_dropped)
      .def(
          "frame_pose",
          [](const MujocoDevice& d, const std::string& frame) {
            std::array<double, 3> p{};
            std::array<double, 9> r{};
            d.frame_pose(frame, p.data(), r.data());
            py::array_t<double> T({4, 4});
            auto t = T.mutable_unchecked<2>();
            for (py::ssize_t i = 0; i < 4; ++i) {
              for (py::ssize_t j = 0; j < 4; ++j) {
                t(i, j) = (i == 3) ? (j == 3 ? 1.0 : 0.0)
                                   : (j == 3 ? p[static_cast<std::size_t>(i)]
                                             : r[static_cast<std::size_t>(i * 3 + j)]);
              }
            }
            return T;
          },
          py::arg("frame"), "4x4 world pose of a site or body at the current state")
      .def_property_readonly("has_hand", &MujocoDevice::has_hand,
                             "Whether the model has the Franka Hand (finger joints and the hand actuator)")
      .def(
          "hand_command",
          [](MujocoDevice& d, const std::string& kind, double width_m, double speed_m_s, double force_n,
             double epsilon_inner_m, double epsilon_outer_m) {
            jtac::hw::HandCommand command;
            command.kind = hand_kind(kind);
            command.width_m = width_m;
            command.speed_m_s = speed_m_s;
            command.force_N = force_n;
            command.epsilon_inner_m = epsilon_inner_m;
            command.epsilon_outer_m = epsilon_outer_m;
            const py::gil_scoped_release release;  // writers serialize on a short lock
            return d.hand_command(command);
          },
          py::arg("kind"), py::arg("width_m") = 0.0, py::arg("speed_m_s") = 0.1, py::arg("force_n") = 0.0,
          py::arg("epsilon_inner_m") = 0.005, py::arg("epsilon_outer_m") = 0.005,
          "Starts 'homing' | 'move' | 'grasp' | 'stop' at the next tick, aborting the running command; "
          "returns "
          "its id (> 0). ValueError naming the field of a bad value; RuntimeError without a hand. Any thread")
      .def("hand_state", &MujocoDevice::hand_state,
           "The hand at the last tick (HandState; width_m nan without a hand). Any thread, never blocks");
}
