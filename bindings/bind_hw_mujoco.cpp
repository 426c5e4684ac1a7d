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

}  // namespace

/// Registers MujocoDevice in `m` (from bind_hw, after the Device base).
void bind_hw_mujoco(py::module_& m) {
  using jtac::hw::MujocoDevice;
  const jtac::hw::MujocoDeviceConfig defaults;

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
          py::arg("frame"), "4x4 world pose of a site or body at the current state");
}
