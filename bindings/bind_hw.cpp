// pybind11 bindings of franka_hw: the device contract (Device, the base of MujocoDevice and, in
// bind_franka.cpp, FrankaDevice), the simulated arm (MujocoDevice) and the asynchronous interface (over
// any Device). The controller thread (ControlLoop) and its laws are bound in bind_loop.cpp.
// Conversion only: no algorithm here.
//
// The GIL: every call that may block or run for a while releases it — Device.read_once()
// (waits for the next tick in real time) — so a Python thread waiting on the robot never holds the
// other Python threads, and the native threads themselves never touch Python. An AsyncInterface keeps
// its device alive.
//
// Arrays: joints as (7,) float64, wrenches [Fx Fy Fz Tx Ty Tz] as (6,) [N, N·m].

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "franka_hw/async_interface.hpp"
#include "franka_hw/device.hpp"
#include "franka_hw/mujoco_device.hpp"

#include "bind_common.hpp"
#include "bind_hw_arrays.hpp"

namespace py = pybind11;

namespace {

using jtac::hw::JointArray;
using jtac::hw::WrenchArray;
using jtac_python::array_of;
using jtac_python::fixed;
using jtac_python::InputArray;

// The flight recorder as column arrays (packet, tick, read/write host time, flags, q_d echo, command).
py::dict trace_dict(const jtac::hw::AsyncInterface& a) {
  using jtac::hw::AsyncInterface;
  auto records = std::make_unique<std::array<jtac::hw::PacketRecord, AsyncInterface::kTraceCapacity>>();
  const std::size_t n = a.packet_trace(*records);
  const auto rows = static_cast<py::ssize_t>(n);
  py::array_t<std::uint64_t> packet(rows), tick(rows), step_periods(rows);
  py::array_t<std::int64_t> read_ns(rows), write_ns(rows);
  py::array_t<std::uint8_t> flags(rows);
  py::array_t<double> q_d_echo({rows, py::ssize_t{7}}), q_cmd({rows, py::ssize_t{7}}),
      dq_cmd({rows, py::ssize_t{7}});
  for (std::size_t k = 0; k < n; ++k) {
    const auto& r = (*records)[k];
    const auto i = static_cast<py::ssize_t>(k);
    packet.mutable_at(i) = r.packet;
    tick.mutable_at(i) = r.tick;
    step_periods.mutable_at(i) = r.step_periods;
    read_ns.mutable_at(i) = r.read_ns;
    write_ns.mutable_at(i) = r.write_ns;
    flags.mutable_at(i) = r.flags;
    for (py::ssize_t j = 0; j < 7; ++j) {
      const auto jj = static_cast<std::size_t>(j);
      q_d_echo.mutable_at(i, j) = r.q_d_echo_rad[jj];
      q_cmd.mutable_at(i, j) = r.q_cmd_rad[jj];
      dq_cmd.mutable_at(i, j) = r.dq_cmd_rad_s[jj];
    }
  }
  py::dict d;
  d["packet"] = packet;
  d["tick"] = tick;
  d["read_ns"] = read_ns;
  d["write_ns"] = write_ns;
  d["step_periods"] = step_periods;
  d["flags"] = flags;
  d["q_d_echo"] = q_d_echo;
  d["q_cmd"] = q_cmd;
  d["dq_cmd"] = dq_cmd;
  return d;
}

py::dict counters_dict(const jtac::hw::AsyncCounters& c) {
  py::dict d;
  d["packets"] = c.packets;
  d["commands_received"] = c.commands_received;
  d["commands_refused"] = c.commands_refused;
  d["held_packets"] = c.held_packets;
  d["limiter_activations"] = c.limiter_activations;
  d["largest_command_gap"] = c.largest_command_gap;
  d["anomalous_ticks"] = c.anomalous_ticks;
  d["late_commands"] = c.late_commands;
  d["late_reads"] = c.late_reads;
  d["echo_resyncs"] = c.echo_resyncs;
  d["device_errors"] = c.device_errors;
  d["max_write_interval_s"] = static_cast<double>(c.max_write_interval_ns) * 1e-9;
  d["max_latency_s"] = static_cast<double>(c.max_latency_ns) * 1e-9;
  return d;
}

py::dict latency_dict(const jtac::hw::LatencyStats& l) {
  py::dict d;
  d["samples"] = l.samples;
  d["min_s"] = l.min_s;
  d["median_s"] = l.median_s;
  d["p99_s"] = l.p99_s;
  d["max_s"] = l.max_s;
  return d;
}

/// What a Python thread driving the device itself (read_once → … → write_once) gets back.
py::dict device_state_dict(const jtac::hw::DeviceState& s) {
  py::dict d;
  d["tick"] = s.tick;
  d["time"] = s.time_s;
  d["ticks_missed_by_reader"] = s.ticks_missed_by_reader;
  d["ticks_without_new_command"] = s.ticks_without_new_command;
  d["q"] = array_of(s.q_rad);
  d["dq"] = array_of(s.dq_rad_s);
  d["q_d"] = array_of(s.q_d_rad);
  d["dq_d"] = array_of(s.dq_d_rad_s);
  d["ddq_d"] = array_of(s.ddq_d_rad_s2);
  d["tau_J"] = array_of(s.tau_J_Nm);
  d["tau_ext"] = array_of(s.tau_ext_Nm);
  d["has_wrench"] = s.has_wrench;
  d["wrench"] = array_of(s.wrench_sensor_N_Nm);
  d["motion_finished"] = s.motion_finished;
  return d;
}

}  // namespace

/// Registers the franka_hw types in `m` (called from PYBIND11_MODULE before bind_loop, whose
/// ControlLoop drives an AsyncInterface).
void bind_hw(py::module_& m) {
  using jtac::hw::AsyncInterface;
  using jtac::hw::DeviceStatus;
  using jtac::hw::MujocoDevice;

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
            command.q_d_rad = fixed<7>(q_d, "q_d_rad");
            command.dq_d_rad_s = fixed<7>(dq_d, "dq_d_rad_s");
            command.motion_finished = motion_finished;
            py::gil_scoped_release release;
            return d.write_once(command);
          },
          py::arg("q_d_rad"), py::arg("dq_d_rad_s"), py::arg("motion_finished") = false,
          "Hands over the command for the coming tick")
      .def_property_readonly("period_s", &jtac::hw::Device::period_s);

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
              config.q_init_rad = fixed<7>(*q_init_rad, "q_init_rad");
            }
            if (stiffness) {
              config.stiffness_Nm_rad = fixed<7>(*stiffness, "stiffness_Nm_rad");
            }
            if (damping) {
              config.damping_Nm_s_rad = fixed<7>(*damping, "damping_Nm_s_rad");
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
          py::arg("mjcf_xml"), py::kw_only(), py::arg("name_prefix") = "fr3",
          py::arg("q_init_rad") = py::none(), py::arg("stiffness_Nm_rad") = py::none(),
          py::arg("damping_Nm_s_rad") = py::none(), py::arg("clock") = "lockstep",
          "Compiles the MJCF text (ValueError/RuntimeError with MuJoCo's message); clock 'lockstep' or "
          "'realtime'")
      .def(
          "reset", [](MujocoDevice& d, const InputArray& q) { d.reset(fixed<7>(q, "q_rad")); },
          py::arg("q_rad"), "Back to tick 0 at rest at q_rad")
      .def_property_readonly("clock",
                             [](const MujocoDevice& d) {
                               return d.clock() == jtac::hw::ClockMode::kLockstep ? "lockstep" : "realtime";
                             })
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

  py::class_<AsyncInterface>(m, "AsyncInterface",
                             "The hardware real-time thread: rate matching, limiter, one packet per tick")
      .def(py::init([](jtac::hw::Device& device, double limit_margin, int fifo_priority, int cpu,
                       const std::optional<InputArray>& dq_max, const std::optional<InputArray>& ddq_max,
                       const std::optional<InputArray>& dddq_max, const std::string& late_commands,
                       bool position_based_velocity_limits, const std::string& limiter) {
             jtac::hw::AsyncInterfaceConfig config;
             if (late_commands == "dropped") {
               config.late_commands = jtac::hw::LateCommands::kDropped;
             } else if (late_commands == "applied") {
               config.late_commands = jtac::hw::LateCommands::kAppliedOnArrival;
             } else {
               throw std::invalid_argument("late_commands must be 'dropped' or 'applied', got '" +
                                           late_commands + "'");
             }
             if (!(limit_margin > 0.0 && limit_margin <= 1.0)) {
               throw std::invalid_argument("limit_margin must be in (0, 1], got " +
                                           std::to_string(limit_margin));
             }
             config.limit_margin = limit_margin;
             if (dq_max) {
               config.limits.dq_max_rad_s = fixed<7>(*dq_max, "dq_max_rad_s");
             }
             if (ddq_max) {
               config.limits.ddq_max_rad_s2 = fixed<7>(*ddq_max, "ddq_max_rad_s2");
             }
             if (dddq_max) {
               config.limits.dddq_max_rad_s3 = fixed<7>(*dddq_max, "dddq_max_rad_s3");
             }
             config.limits.position_based_velocity_limits = position_based_velocity_limits;
             if (limiter == "motion") {
               config.limiter = jtac::hw::LimiterKind::kMotionLimiter;
             } else if (limiter == "ruckig") {
               config.limiter = jtac::hw::LimiterKind::kRuckig;
             } else {
               throw std::invalid_argument("limiter must be 'motion' or 'ruckig', got '" + limiter + "'");
             }
             config.fifo_priority = fifo_priority;
             config.cpu = cpu;
             return std::make_unique<AsyncInterface>(device, config);
           }),
           py::arg("device"), py::kw_only(), py::arg("limit_margin") = 0.8, py::arg("fifo_priority") = 80,
           py::arg("cpu") = -1, py::arg("dq_max_rad_s") = py::none(), py::arg("ddq_max_rad_s2") = py::none(),
           py::arg("dddq_max_rad_s3") = py::none(), py::arg("late_commands") = "dropped",
           py::arg("position_based_velocity_limits") = true, py::arg("limiter") = "motion",
           py::keep_alive<1, 2>(),
           "Limits default to the FR3's published ones; the limiter allows limit_margin of them. "
           "late_commands: what the robot does with a command that missed its cycle, 'dropped' (Franka's "
           "control) or 'applied' (franka-sim); it decides how the reference continues after skipped ticks. "
           "position_based_velocity_limits: keep the velocity inside the FR3's position-based envelope "
           "(False for a robot without one, e.g. the Panda). limiter: 'motion' (MotionLimiter, the "
           "default) or 'ruckig' (RuckigLimiter; with late_commands='dropped' only, franka_hw/README.md)")
      .def(
          "start", [](AsyncInterface& a) { return a.start(); }, "Starts the real-time thread")
      .def(
          "stop",
          [](AsyncInterface& a) {
            py::gil_scoped_release release;
            a.stop();
          },
          "Stops and joins the real-time thread")
      .def_property_readonly("running", &AsyncInterface::running)
      .def_property_readonly("exit_status", &AsyncInterface::exit_status)
      .def("step_once", &AsyncInterface::step_once, "One packet on this thread (lockstep)")
      .def(
          "last_command",
          [](const AsyncInterface& a) {
            if (a.running()) {
              throw std::logic_error(
                  "AsyncInterface.last_command: only while the real-time thread is stopped");
            }
            const auto& c = a.last_command();
            return py::make_tuple(array_of(c.q_d_rad), array_of(c.dq_d_rad_s));
          },
          "(q_d, dq_d) of the last packet written to the device (lockstep, or after stop())")
      .def("counters", [](const AsyncInterface& a) { return counters_dict(a.counters()); })
      .def(
          "latency", [](const AsyncInterface& a) { return latency_dict(a.latency()); },
          "dEXT (read-to-write) over the last 1024 packets [s]")
      .def("reset_peaks", &AsyncInterface::reset_peaks)
      .def(
          "packet_trace",
          [](const AsyncInterface& a) {
            if (a.running()) {
              throw std::logic_error(
                  "AsyncInterface.packet_trace: only while the real-time thread is stopped");
            }
            return trace_dict(a);
          },
          "The flight recorder: the last packets (up to 256, oldest first) as column arrays — packet, "
          "tick, read_ns/write_ns (host steady clock), step_periods, flags (1 anomalous tick, 2 late, "
          "4 sample taken, 8 held, 16 limited, 32 late read, 64 resynced to the echo), q_d_echo, q_cmd, "
          "dq_cmd (n, 7). After stop() "
          "or after "
          "the thread ended on a device error.");
}
