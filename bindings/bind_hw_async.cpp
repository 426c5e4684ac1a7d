// pybind11 bindings of franka_hw's asynchronous interface (AsyncInterface over any Device) and what it
// reports: the counters and the flight recorder from their field tables (async_records.hpp), the
// latency statistics. Keyword defaults are those of a default-constructed AsyncInterfaceConfig, the
// limits the robot's whole row of joint_limits.hpp. Conversion only: no algorithm here.
//
// The GIL: stop() (thread join) releases it. An AsyncInterface keeps its device alive.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "franka_hw/async_interface.hpp"
#include "franka_hw/joint_limits.hpp"

#include "bind_common.hpp"
#include "bind_hw_arrays.hpp"

namespace py = pybind11;

namespace {

using jtac::hw::AsyncInterface;
using jtac::hw::AsyncInterfaceConfig;
using jtac::hw::JointArray;
using jtac::hw::kNumJoints;
using jtac_python::array_of;
using jtac_python::fixed;
using jtac_python::InputArray;

// The flight recorder as column arrays, one per field of JTAC_PACKET_RECORD_FIELDS: (n,) of the
// field's integer type for a scalar, (n, kNumJoints) float64 for a joint array.
py::dict trace_dict(const AsyncInterface& a) {
  auto records = std::make_unique<std::array<jtac::hw::PacketRecord, AsyncInterface::kTraceCapacity>>();
  const std::size_t n = a.packet_trace(*records);
  const auto rows = static_cast<py::ssize_t>(n);
  py::dict d;
  jtac::hw::for_each_packet_record_field([&](const char* python_name, auto member) {
    using T = std::remove_cvref_t<decltype((*records)[0].*member)>;
    if constexpr (std::is_same_v<T, JointArray>) {
      py::array_t<double> column({rows, py::ssize_t{kNumJoints}});
      for (std::size_t k = 0; k < n; ++k) {
        for (py::ssize_t j = 0; j < kNumJoints; ++j) {
          column.mutable_at(static_cast<py::ssize_t>(k), j) =
              ((*records)[k].*member)[static_cast<std::size_t>(j)];
        }
      }
      d[python_name] = column;
    } else {
      py::array_t<T> column(rows);
      for (std::size_t k = 0; k < n; ++k) {
        column.mutable_at(static_cast<py::ssize_t>(k)) = (*records)[k].*member;
      }
      d[python_name] = column;
    }
  });
  return d;
}

// Every counter of JTAC_ASYNC_COUNTER_FIELDS: counts as ints, peaks in seconds.
py::dict counters_dict(const jtac::hw::AsyncCounters& c) {
  py::dict d;
  jtac::hw::for_each_counter(
      c, [&](const char* name, std::uint64_t count) { d[name] = count; },
      [&](const char* name, double peak_s) { d[name] = peak_s; });
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

const char* late_commands_name(jtac::hw::LateCommands late) {
  return late == jtac::hw::LateCommands::kDropped ? "dropped" : "applied";
}

jtac::hw::LateCommands late_commands_of(const std::string& name) {
  if (name == "dropped") {
    return jtac::hw::LateCommands::kDropped;
  }
  if (name == "applied") {
    return jtac::hw::LateCommands::kAppliedOnArrival;
  }
  throw std::invalid_argument("late_commands must be 'dropped' or 'applied', got '" + name + "'");
}

const char* limiter_name(jtac::hw::LimiterKind kind) {
  return kind == jtac::hw::LimiterKind::kRuckig ? "ruckig" : "motion";
}

jtac::hw::LimiterKind limiter_of(const std::string& name) {
  if (name == "motion") {
    return jtac::hw::LimiterKind::kMotionLimiter;
  }
  if (name == "ruckig") {
    return jtac::hw::LimiterKind::kRuckig;
  }
  throw std::invalid_argument("limiter must be 'motion' or 'ruckig', got '" + name + "'");
}

// The robot's whole row of joint_limits.hpp; ValueError naming the robots there otherwise.
jtac::hw::JointLimits robot_limits_of(const std::string& robot) {
  if (const jtac::hw::JointLimits* limits = jtac::hw::find_joint_limits(robot)) {
    return *limits;
  }
  std::string known;
  for (const auto& row : jtac::hw::kRobotJointLimits) {
    known += (known.empty() ? "" : ", ") + std::string(row.robot);
  }
  throw std::invalid_argument("robot must be one of " + known + ", got '" + robot + "'");
}

struct AsyncInterfaceArgs {
  std::string robot;
  double limit_margin;
  int fifo_priority;
  int cpu;
  std::optional<InputArray> dq_max, ddq_max, dddq_max;
  std::string late_commands;
  std::optional<bool> position_based_velocity_limits;
  std::string limiter;
};

// The configuration from the keyword arguments: the robot's row, then the rates given on top of it.
AsyncInterfaceConfig async_config(const AsyncInterfaceArgs& args) {
  if (!(args.limit_margin > 0.0 && args.limit_margin <= 1.0)) {
    throw std::invalid_argument("limit_margin must be in (0, 1], got " + std::to_string(args.limit_margin));
  }
  AsyncInterfaceConfig config;
  config.late_commands = late_commands_of(args.late_commands);
  config.limiter = limiter_of(args.limiter);
  config.limit_margin = args.limit_margin;
  config.limits = robot_limits_of(args.robot);
  if (args.dq_max) {
    config.limits.dq_max_rad_s = fixed<kNumJoints>(*args.dq_max, "dq_max_rad_s");
  }
  if (args.ddq_max) {
    config.limits.ddq_max_rad_s2 = fixed<kNumJoints>(*args.ddq_max, "ddq_max_rad_s2");
  }
  if (args.dddq_max) {
    config.limits.dddq_max_rad_s3 = fixed<kNumJoints>(*args.dddq_max, "dddq_max_rad_s3");
  }
  if (args.position_based_velocity_limits) {
    config.limits.position_based_velocity_limits = *args.position_based_velocity_limits;
  }
  config.fifo_priority = args.fifo_priority;
  config.cpu = args.cpu;
  return config;
}

}  // namespace

/// Registers AsyncInterface in `m` (from bind_hw, after the Device base).
void bind_hw_async(py::module_& m) {
  const AsyncInterfaceConfig defaults;
  py::class_<AsyncInterface>(m, "AsyncInterface",
                             "The hardware real-time thread: rate matching, limiter, one packet per tick")
      .def(py::init([](jtac::hw::Device& device, double limit_margin, int fifo_priority, int cpu,
                       const std::optional<InputArray>& dq_max, const std::optional<InputArray>& ddq_max,
                       const std::optional<InputArray>& dddq_max, const std::string& late_commands,
                       std::optional<bool> position_based_velocity_limits, const std::string& limiter,
                       const std::string& robot) {
             const AsyncInterfaceArgs args{robot,    limit_margin,  fifo_priority,
                                           cpu,      dq_max,        ddq_max,
                                           dddq_max, late_commands, position_based_velocity_limits,
                                           limiter};
             return std::make_unique<AsyncInterface>(device, async_config(args));
           }),
           py::arg("device"), py::kw_only(), py::arg("limit_margin") = defaults.limit_margin,
           py::arg("fifo_priority") = defaults.fifo_priority, py::arg("cpu") = defaults.cpu,
           py::arg("dq_max_rad_s") = py::none(), py::arg("ddq_max_rad_s2") = py::none(),
           py::arg("dddq_max_rad_s3") = py::none(),
           py::arg("late_commands") = late_commands_name(defaults.late_commands),
           py::arg("position_based_velocity_limits") = py::none(),
           py::arg("limiter") = limiter_name(defaults.limiter),
           py::arg("robot") = std::string(jtac::hw::kDefaultRobot), py::keep_alive<1, 2>(),
           "robot: whose whole limit table the limiter enforces ('fr3', 'panda': velocity, acceleration, "
           "jerk, joint range and position-based envelope of that one robot); dq_max_rad_s, "
           "ddq_max_rad_s2, dddq_max_rad_s3 replace its rates where given. The limiter allows "
           "limit_margin of them. late_commands: what the robot does with a command that missed its "
           "cycle, 'dropped' (Franka's control) or 'applied' (franka-sim); it decides how the reference "
           "continues after skipped ticks. position_based_velocity_limits: keep the velocity inside the "
           "robot's position-based envelope (None: as the robot's table says; the Panda has none). "
           "limiter: 'motion' (MotionLimiter, the default) or 'ruckig' (RuckigLimiter; with "
           "late_commands='dropped' only, franka_hw/README.md)")
      .def_property_readonly(
          "limits",
          [](const AsyncInterface& a) {
            const jtac::hw::JointLimits& l = a.limiter().limits();
            const double margin = a.limiter().margin();
            py::dict d;
            // The limiter holds its rates × margin; Python sees the published ones it was given.
            JointArray dq{}, ddq{}, dddq{};
            for (std::size_t i = 0; i < dq.size(); ++i) {
              dq[i] = l.dq_max_rad_s[i] / margin;
              ddq[i] = l.ddq_max_rad_s2[i] / margin;
              dddq[i] = l.dddq_max_rad_s3[i] / margin;
            }
            d["dq_max_rad_s"] = array_of(dq);
            d["ddq_max_rad_s2"] = array_of(ddq);
            d["dddq_max_rad_s3"] = array_of(dddq);
            d["position_based_velocity_limits"] = l.position_based_velocity_limits;
            d["q_min_rad"] = array_of(l.q_min_rad);
            d["q_max_rad"] = array_of(l.q_max_rad);
            d["limit_margin"] = margin;
            return d;
          },
          "The limit table the limiter enforces (published values; it allows limit_margin of the rates)")
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
      .def_property_readonly(
          "last_packet_ns", &AsyncInterface::last_packet_ns,
          "Host steady clock of this run's last packet [ns] (time.monotonic_ns()); 0 before one")
      .def("step_once", &AsyncInterface::step_once, "One packet on this thread (lockstep)")
      .def(
          "inject_disturbance",
          [](AsyncInterface& a, int joint, double v_rad_s, double a_rad_s2, double j_rad_s3) {
            return a.inject_disturbance({joint, v_rad_s, a_rad_s2, j_rad_s3});
          },
          py::arg("joint"), py::arg("v_rad_s") = 0.0, py::arg("a_rad_s2") = 0.0, py::arg("j_rad_s3") = 0.0,
          "Tests only: from the next packet, adds a motion of velocity v, acceleration a, jerk j to joint's "
          "command after the "
          "limiter (flag 128 in the flight recorder), to provoke a reflex on purpose; False for a bad joint "
          "or value, or while one is pending or running")
      .def("begin_lockstep_run", &AsyncInterface::begin_lockstep_run,
           "Lockstep: a new run starting at the robot's echo at rest (False while the thread runs)")
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
          "4 sample taken, 8 held, 16 limited, 32 late read, 64 resynced to the echo, 128 disturbed), "
          "q_d_echo, q_cmd, "
          "dq_cmd (n, NUM_JOINTS). After stop() "
          "or after "
          "the thread ended on a device error.");
}
