// pybind11 bindings of franka_hw, the device layer: the outcome of a packet (DeviceStatus) and the
// device contract (Device, the base of every device) here; the simulated arm in bind_hw_mujoco.cpp, the
// asynchronous interface in bind_hw_async.cpp, the libfranka device in bind_franka.cpp. The controller
// thread (ControlLoop) and its laws are bound in bind_loop.cpp. Conversion only: no algorithm here.
//
// The GIL: every call that may block or run for a while releases it (Device.read_once() waits for the
// next tick in real time), so a Python thread waiting on the robot never holds the other Python
// threads, and the native threads themselves never touch Python.
//
// Arrays: joints as (kNumJoints,) float64, wrenches [Fx Fy Fz Tx Ty Tz] as (6,) [N, N·m].
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <type_traits>

#include "franka_hw/device.hpp"

#include "bind_common.hpp"
#include "bind_hw_arrays.hpp"

namespace py = pybind11;

void bind_hw_mujoco(py::module_& m);  // bind_hw_mujoco.cpp
void bind_hw_async(py::module_& m);   // bind_hw_async.cpp

namespace {

using jtac::hw::kNumJoints;
using jtac_python::array_of;
using jtac_python::fixed;
using jtac_python::InputArray;

/// What a Python thread driving the device itself (read_once → … → write_once) gets back: every field
/// of device.hpp's JTAC_DEVICE_STATE_FIELDS under its Python name (arrays as numpy arrays).
py::dict device_state_dict(const jtac::hw::DeviceState& s) {
  py::dict d;
  jtac::hw::for_each_device_state_field([&](const char* python_name, auto member) {
    const auto& value = s.*member;
    using T = std::remove_cvref_t<decltype(value)>;
    if constexpr (std::is_same_v<T, jtac::hw::JointArray> || std::is_same_v<T, jtac::hw::WrenchArray>) {
      d[python_name] = array_of(value);
    } else {
      d[python_name] = value;
    }
  });
  return d;
}

}  // namespace

/// Registers the franka_hw types in `m` (called from PYBIND11_MODULE before bind_loop, whose
/// ControlLoop drives an AsyncInterface).
void bind_hw(py::module_& m) {
  using jtac::hw::DeviceStatus;

  m.attr("NUM_JOINTS") = kNumJoints;  // joints of every arm (the robot descriptions' count)

  py::enum_<DeviceStatus>(m, "DeviceStatus", "Outcome of a device read/write or a loop step")
      .value("OK", DeviceStatus::kOk)
      .value("NOT_CONFIGURED", DeviceStatus::kNotConfigured)
      .value("INVALID_COMMAND", DeviceStatus::kInvalidCommand)
      .value("MOTION_FINISHED", DeviceStatus::kMotionFinished)
      .value("DEVICE_ERROR", DeviceStatus::kDeviceError)
      .value("WAITING", DeviceStatus::kWaiting);

  // The device contract: any device (MujocoDevice, FrankaDevice) can be driven packet by packet from
  // Python and handed to an AsyncInterface.
  py::class_<jtac::hw::Device>(m, "Device", "A robot arm with libfranka's packet semantics (device.hpp)")
      .def(
          "read_once",
          [](jtac::hw::Device& d) {
            jtac::hw::DeviceState state;
            DeviceStatus status;
            {
              py::gil_scoped_release release;
              status = d.read_once(state);
            }
            return py::make_tuple(status, device_state_dict(state));
          },
          "(status, state dict) of the next tick; waits for it in real time (GIL released)")
      .def(
          "write_once",
          [](jtac::hw::Device& d, const InputArray& q_d, const InputArray& dq_d, bool motion_finished) {
            jtac::hw::DeviceCommand command;
            command.q_d_rad = fixed<kNumJoints>(q_d, "q_d_rad");
            command.dq_d_rad_s = fixed<kNumJoints>(dq_d, "dq_d_rad_s");
            command.motion_finished = motion_finished;
            py::gil_scoped_release release;
            return d.write_once(command);
          },
          py::arg("q_d_rad"), py::arg("dq_d_rad_s"), py::arg("motion_finished") = false,
          "Hands over the command for the coming tick")
      .def_property_readonly("period_s", &jtac::hw::Device::period_s);

  bind_hw_mujoco(m);
  bind_hw_async(m);
}
