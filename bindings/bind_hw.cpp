// pybind11 bindings of franka_hw: the device contract (Device, the base of MujocoDevice and, in
// bind_franka.cpp, FrankaDevice), the simulated arm (MujocoDevice), the asynchronous interface (over
// any Device) and the controller thread (ControlLoop). Conversion only: no algorithm here.
//
// The GIL: every call that may block or run for a while releases it — Device.read_once()
// (waits for the next tick in real time), ControlLoop.step(n), start()/stop() (thread start/join)
// — so a Python thread waiting on the robot never holds the other Python threads, and the native
// threads themselves never touch Python. The Python objects keep what they hold alive: an
// AsyncInterface keeps its device, a ControlLoop its interface and controller.
//
// Arrays: joints as (7,) float64, wrenches [Fx Fy Fz Tx Ty Tz] as (6,) [N, N·m] (tip 0: wrench_*) and
// as (kMaxTips, 6) (every tip, tip 0 first: wrenches_*); a drained recording is a dict of column
// arrays, one row per controller cycle.
//
// Length: over 600 lines because it binds one layer's types in one file (ruckig's one-file wrapper is
// the model): devices, the asynchronous interface, the loop, its laws and the cycle record's fields.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "franka_hw/async_interface.hpp"
#include "franka_hw/device.hpp"
#include "franka_hw/mujoco_device.hpp"
#include "jtac_loop/callback_law.hpp"
#include "jtac_loop/control_loop.hpp"
#include "jtac_loop/stream_law.hpp"

#include "bind_common.hpp"

namespace py = pybind11;

namespace {

using jtac::hw::JointArray;
using jtac::hw::WrenchArray;
using jtac_python::InputArray;

template <std::size_t N>
std::array<double, N> fixed(const InputArray& a, const char* name) {
  if (a.ndim() != 1 || a.shape(0) != static_cast<py::ssize_t>(N)) {
    throw std::invalid_argument(std::string(name) + " must have shape (" + std::to_string(N) + ",)");
  }
  std::array<double, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    out[i] = a.data()[i];
  }
  return out;
}

template <std::size_t N>
py::array_t<double> array_of(const std::array<double, N>& v) {
  return py::array_t<double>(static_cast<py::ssize_t>(N), v.data());
}

/// Every tip's wrench as a (kMaxTips, 6) array (rows from the law's tip count on are zero).
py::array_t<double> tips_of(const jtac::loop::TipWrenchArray& w) {
  py::array_t<double> a({static_cast<py::ssize_t>(w.size()), py::ssize_t{6}});
  auto v = a.mutable_unchecked<2>();
  for (py::ssize_t k = 0; k < v.shape(0); ++k) {
    for (py::ssize_t i = 0; i < 6; ++i) {
      v(k, i) = w[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)];
    }
  }
  return a;
}

jtac::loop::WrenchSource wrench_source_of(const std::string& name) {
  if (name == "device") {
    return jtac::loop::WrenchSource::kDevice;
  }
  if (name == "external") {
    return jtac::loop::WrenchSource::kExternal;
  }
  if (name == "none") {
    return jtac::loop::WrenchSource::kNone;
  }
  throw std::invalid_argument("a wrench source is 'device', 'external' or 'none', got '" + name + "'");
}

const char* wrench_source_name(jtac::loop::WrenchSource source) {
  switch (source) {
    case jtac::loop::WrenchSource::kDevice:
      return "device";
    case jtac::loop::WrenchSource::kExternal:
      return "external";
    case jtac::loop::WrenchSource::kNone:
      break;
  }
  return "none";
}

jtac::loop::JtacLaw& jtac_law_of(jtac::loop::ControlLoop& loop) {
  jtac::loop::JtacLaw* law = loop.jtac_law();
  if (law == nullptr) {
    throw std::logic_error("ControlLoop: this loop runs no JTAC controller");
  }
  return *law;
}

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

py::dict timing_dict(const jtac::loop::LoopTiming& t) {
  py::dict d;
  d["cycles"] = t.cycles;
  d["cycles_without_state"] = t.cycles_without_state;
  d["stale_states"] = t.stale_states;
  d["overruns"] = t.overruns;
  d["update_not_ok"] = t.update_not_ok;
  d["commands_refused"] = t.commands_refused;
  d["largest_command_gap"] = t.largest_command_gap;
  d["unserved_cycles"] = t.unserved_cycles;
  d["max_device_command_gap_us"] = t.max_device_command_gap_us;
  d["last_cycle_duration_us"] = t.last_cycle_duration_us;
  d["max_cycle_duration_us"] = t.max_cycle_duration_us;
  d["last_interval_us"] = t.last_interval_us;
  d["max_interval_us"] = t.max_interval_us;
  return d;
}

// ---- one controller cycle: every field of jtac_loop/cycle_record.hpp's table, walked with
// for_each_cycle_field; the conversion follows the member's type.

using jtac::loop::CycleRecord;
using jtac::loop::TipWrenchArray;

template <class T>
constexpr bool kIsTips = std::is_same_v<T, TipWrenchArray>;

// The Python shape of one value: () for a number or an enum, (N,) for an array, (kMaxTips, 6) for
// every tip's wrench.
template <class T>
std::vector<py::ssize_t> cycle_shape() {
  if constexpr (kIsTips<T>) {
    return {static_cast<py::ssize_t>(jtac::kMaxTips), py::ssize_t{6}};
  } else if constexpr (std::is_class_v<T>) {
    return {static_cast<py::ssize_t>(std::tuple_size_v<T>)};
  } else {
    return {};
  }
}

// One value as Python: a number, the bound enum, or an array of its shape.
template <class T>
py::object cycle_value(const T& v) {
  if constexpr (kIsTips<T>) {
    return tips_of(v);
  } else if constexpr (std::is_class_v<T>) {
    return array_of(v);
  } else {
    return py::cast(v);
  }
}

// One field over `rows` as a column: (n,) float64 for a real number, (n,) int64 for an integer or an
// enum (its value), (n, shape...) float64 for an array (contiguous doubles, copied row by row).
template <class T, class Get>
py::array cycle_column(const std::vector<CycleRecord>& rows, Get get) {
  const auto n = static_cast<py::ssize_t>(rows.size());
  if constexpr (std::is_class_v<T>) {
    static_assert(sizeof(T) % sizeof(double) == 0);
    std::vector<py::ssize_t> shape = cycle_shape<T>();
    shape.insert(shape.begin(), n);
    py::array_t<double> a(shape);
    double* out = a.mutable_data();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::memcpy(out + i * (sizeof(T) / sizeof(double)), static_cast<const void*>(&get(rows[i])), sizeof(T));
    }
    return a;
  } else {
    using Column = std::conditional_t<std::is_floating_point_v<T>, double, std::int64_t>;
    py::array_t<Column> a(n);
    Column* out = a.mutable_data();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      out[i] = static_cast<Column>(get(rows[i]));
    }
    return a;
  }
}

/// A cycle as a dict: {"time": float, "q": (7,), "wrench_raw": (6,), "wrenches_raw": (kMaxTips, 6), ...}.
py::dict cycle_dict(const CycleRecord& r) {
  py::dict d;
  jtac::loop::for_each_cycle_field([&](const jtac::loop::CycleFieldInfo& f, auto member) {
    const auto& value = r.*member;
    if constexpr (kIsTips<std::decay_t<decltype(value)>>) {
      d[f.python_tip0] = array_of(value[0]);
    }
    d[f.python_name] = cycle_value(value);
  });
  return d;
}

/// The snapshot: the cycle's dict and its loop timing under "timing".
py::dict snapshot_dict(const jtac::loop::LoopSnapshot& s) {
  py::dict d = cycle_dict(s);
  d["timing"] = timing_dict(s.timing);
  return d;
}

/// The drained rows as columns: {"time": (n,), "q": (n, 7), "wrenches_raw": (n, kMaxTips, 6), ...}.
py::dict columns(const std::vector<CycleRecord>& rows) {
  py::dict d;
  jtac::loop::for_each_cycle_field([&](const jtac::loop::CycleFieldInfo& f, auto member) {
    using T = std::decay_t<decltype(rows.front().*member)>;
    if constexpr (kIsTips<T>) {
      d[f.python_tip0] = cycle_column<WrenchArray>(
          rows, [&](const CycleRecord& r) -> const WrenchArray& { return (r.*member)[0]; });
    }
    d[f.python_name] = cycle_column<T>(rows, [&](const CycleRecord& r) -> const T& { return r.*member; });
  });
  return d;
}

/// The cycle's fields for Python, in table order: ((name, shape, doc), ...); the keys of a snapshot
/// (less "timing") and the columns of a recording.
py::tuple cycle_fields() {
  py::list fields;
  jtac::loop::for_each_cycle_field([&](const jtac::loop::CycleFieldInfo& f, auto member) {
    using T = std::decay_t<decltype(std::declval<const CycleRecord&>().*member)>;
    if constexpr (kIsTips<T>) {
      fields.append(py::make_tuple(f.python_tip0, py::tuple(py::cast(cycle_shape<WrenchArray>())),
                                   std::string("tip 0: ") + f.doc));
      fields.append(py::make_tuple(f.python_name, py::tuple(py::cast(cycle_shape<T>())),
                                   std::string("every tip, tip 0 first: ") + f.doc));
    } else {
      fields.append(py::make_tuple(f.python_name, py::tuple(py::cast(cycle_shape<T>())), f.doc));
    }
  });
  return py::tuple(fields);
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

/// Registers the hardware types in `m` (called from PYBIND11_MODULE after bind_jtac, whose
/// JointTrajectoryAdmittanceController the ControlLoop drives).
void bind_hw(py::module_& m) {
  using jtac::hw::AsyncInterface;
  using jtac::hw::DeviceStatus;
  using jtac::hw::MujocoDevice;
  using jtac::loop::ControlLoop;

  m.attr("MAX_TIPS") = jtac::kMaxTips;  // tips one controller handles (wrenches_* rows)
  // One controller cycle's fields ((name, shape, doc), ...): the snapshot's keys and the recording's
  // columns; jtac_py builds RECORD_FIELDS and ControllerState from them.
  m.attr("CYCLE_FIELDS") = cycle_fields();
  // The values of a cycle no controller has run yet (the defaults of ControllerState's fields).
  m.attr("CYCLE_DEFAULTS") = cycle_dict(jtac::loop::CycleRecord{});

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

  // Rows of an (H, 7) array as joint arrays (a 1-D array of 7 values is one row); `name` in errors.
  const auto joint_rows = [](const InputArray& a, const char* name) {
    if (a.ndim() != 2 || a.shape(1) != 7) {
      throw std::invalid_argument(std::string(name) + " must have shape (H, 7), got " +
                                  std::to_string(a.ndim()) + " dimensions" +
                                  (a.ndim() == 2 ? " of width " + std::to_string(a.shape(1)) : ""));
    }
    std::vector<JointArray> rows(static_cast<std::size_t>(a.shape(0)));
    const auto view = a.unchecked<2>();
    for (py::ssize_t k = 0; k < a.shape(0); ++k) {
      for (py::ssize_t i = 0; i < 7; ++i) {
        rows[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)] = view(k, i);
      }
    }
    return rows;
  };
  py::enum_<jtac::loop::StreamState>(m, "StreamState", "What a stream's command does")
      .value("HOLDING", jtac::loop::StreamState::kHolding)
      .value("FOLLOWING", jtac::loop::StreamState::kFollowing)
      .value("BRAKING", jtac::loop::StreamState::kBraking);
  py::class_<jtac::loop::StreamLaw>(m, "StreamLaw",
                                    "A control law following timed action chunks and stamped single targets "
                                    "(ControlLoop.use_law); jtac_loop/chunk_stream.hpp")
      .def(
          py::init([](double controller_period_s, std::int64_t chunk_capacity, double blend_window_s,
                      double timeout_s, double run_out_s, const std::optional<InputArray>& stop_accelerations,
                      double ensemble_weight, ControlLoop* loop, const py::object& tips,
                      double joint_damping_per_s, const py::object& absolute_force_torque_threshold) {
            if (chunk_capacity < 1) {
              throw std::invalid_argument("chunk_capacity must be >= 1, got " +
                                          std::to_string(chunk_capacity));
            }
            jtac::loop::ChunkStreamConfig config;
            config.controller_period_s = controller_period_s;
            config.chunk_capacity = static_cast<std::size_t>(chunk_capacity);
            config.blend_window_s = blend_window_s;
            config.timeout_s = timeout_s;
            config.run_out_s = run_out_s;
            if (stop_accelerations) {
              config.stop_accelerations_rad_s2 = fixed<7>(*stop_accelerations, "stop_accelerations_rad_s2");
            }
            config.ensemble_weight = ensemble_weight;
            if (loop == nullptr) {
              return std::make_unique<jtac::loop::StreamLaw>(config);
            }
            jtac::JtacGoal admittance;
            admittance.tips = jtac_python::tip_goals_from(tips);
            admittance.joint_damping_per_s = joint_damping_per_s;
            admittance.absolute_force_torque_threshold =
                jtac_python::double_list(absolute_force_torque_threshold, "absolute_force_torque_threshold");
            return std::make_unique<jtac::loop::StreamLaw>(config, jtac_law_of(*loop), admittance);
          }),
          py::arg("controller_period_s") = 0.001, py::kw_only(), py::arg("chunk_capacity") = 64,
          py::arg("blend_window_s") = 0.1, py::arg("timeout_s") = 0.5, py::arg("run_out_s") = 0.02,
          py::arg("stop_accelerations_rad_s2") = py::none(), py::arg("ensemble_weight") = 1.0,
          py::arg("loop").none(true) = py::none(), py::arg("tips") = py::none(),
          py::arg("joint_damping_per_s") = 0.0, py::arg("absolute_force_torque_threshold") = py::none(),
          // Not keep_alive on `loop`: the loop keeps the laws it used (use_law), and the reverse would
          // make a cycle that is never freed; the Controller holds both.
          "ValueError for a configuration out of range. With `loop` (which must outlive the law): a "
          "compliant stream, driving that loop's JTAC controller in its external-reference mode with the "
          "admittance set `tips`, "
          "`joint_damping_per_s`, `absolute_force_torque_threshold` (as JtacGoal takes them), validated "
          "as goal intake validates a goal's (ValueError with intake's message)")
      .def(
          "set_target",
          [](jtac::loop::StreamLaw& law, const InputArray& q, const std::optional<InputArray>& dq,
             double stamp_s) {
            const JointArray q_rad = fixed<7>(q, "q_rad");
            return dq ? law.set_target(q_rad, fixed<7>(*dq, "dq_rad_s"), stamp_s)
                      : law.set_target(q_rad, stamp_s);
          },
          py::arg("q_rad"), py::arg("dq_rad_s") = py::none(), py::arg("stamp_s") = 0.0,
          "A single target sent at controller time stamp_s [s]; False (refused) for a non-finite value. "
          "Never waits")
      .def(
          "set_chunk",
          [joint_rows](jtac::loop::StreamLaw& law, const InputArray& times, const InputArray& q,
                       const std::optional<InputArray>& dq) {
            const std::vector<double> t(times.data(), times.data() + times.size());
            const std::vector<JointArray> q_rows = joint_rows(q, "positions_rad");
            const std::vector<JointArray> dq_rows =
                dq ? joint_rows(*dq, "velocities_rad_s") : std::vector<JointArray>{};
            const std::string message = law.validate_chunk(t, q_rows, dq_rows);
            if (!message.empty()) {
              throw std::invalid_argument(message);
            }
            return law.set_chunk(t, q_rows, dq_rows);
          },
          py::arg("times_s"), py::arg("positions_rad"), py::arg("velocities_rad_s") = py::none(),
          "An action chunk, times on the controller clock [s]; ValueError (nothing sent) for a malformed "
          "or non-finite one. Never waits")
      .def("controller_time_s", &jtac::loop::StreamLaw::controller_time_s,
           "The controller time now [s] from the host's steady clock (NaN before the law's first cycle)")
      .def_property_readonly("targets_taken", &jtac::loop::StreamLaw::targets_taken)
      .def_property_readonly("late_targets", &jtac::loop::StreamLaw::late_targets)
      .def_property_readonly("chunks_taken", &jtac::loop::StreamLaw::chunks_taken)
      .def_property_readonly("targets_refused", &jtac::loop::StreamLaw::targets_refused)
      .def_property_readonly("stale_chunks", &jtac::loop::StreamLaw::stale_chunks)
      .def_property_readonly("brakes", &jtac::loop::StreamLaw::brakes)
      .def_property_readonly("catch_ups", &jtac::loop::StreamLaw::catch_ups,
                             "Times the command caught up with the stream within the stop accelerations "
                             "(catch_up.hpp)")
      .def_property_readonly("state", &jtac::loop::StreamLaw::state)
      .def_property_readonly(
          "target_delay_s", [](const jtac::loop::StreamLaw& law) { return law.stream().target_delay_s(); },
          "The delay at which single targets are placed after their stamps [s]")
      .def_property_readonly("holding", &jtac::loop::StreamLaw::holding)
      .def_property_readonly("compliant", &jtac::loop::StreamLaw::compliant,
                             "True when the stream runs with the JTAC controller's admittance side")
      .def_property_readonly("admittance_warning", &jtac::loop::StreamLaw::admittance_warning,
                             "What intake accepted but warned about in the admittance set ('' when nothing)")
      .def_property_readonly("stop_code", &jtac::loop::StreamLaw::stop_code,
                             "Why a compliant stream stopped (a ResultCode; SUCCESSFUL while it has not)")
      .def("request_brake", &jtac::loop::StreamLaw::request_brake,
           "Brake to rest now within the stop accelerations in force, dropping the inputs not yet taken; "
           "the next input sent afterwards is followed again. Never waits")
      .def_property_readonly("brakes_requested", &jtac::loop::StreamLaw::brakes_requested,
                             "request_brake() calls the controller thread has served")
      .def_property_readonly("closing", &jtac::loop::StreamLaw::closing,
                             "True once the loop hands over from this stream (it brakes, takes no input)");

  py::class_<jtac::loop::CallbackLaw>(m, "CallbackLaw",
                                      "A control law behind a C function pointer (ControlLoop.use_law); "
                                      "jtac_loop/callback_law.hpp")
      .def(py::init([](std::uintptr_t address, const std::string& name, int num_params, int num_memory,
                       const std::optional<InputArray>& params,
                       const std::optional<InputArray>& stop_accelerations, const std::string& urdf_xml,
                       const std::string& base_frame, const std::vector<std::string>& joint_names,
                       const std::string& tcp_frame) {
             jtac::loop::CallbackLawConfig config;
             config.name = name;
             // The address of a function with the C ABI of CallbackLawFunction (a Numba cfunc's
             // `address`, or reference_law_address()).
             config.function = reinterpret_cast<jtac::loop::CallbackLawFunction>(address);
             config.num_params = num_params;
             config.num_memory = num_memory;
             if (params) {
               config.params.assign(params->data(), params->data() + params->size());
             }
             if (stop_accelerations) {
               config.stop_accelerations_rad_s2 = fixed<7>(*stop_accelerations, "stop_accelerations_rad_s2");
             }
             config.urdf_xml = urdf_xml;
             config.base_frame = base_frame;
             config.joint_names = joint_names;
             config.tcp_frame = tcp_frame;
             return std::make_unique<jtac::loop::CallbackLaw>(config);
           }),
           py::arg("address"), py::kw_only(), py::arg("name"), py::arg("num_params"), py::arg("num_memory"),
           py::arg("params") = py::none(), py::arg("stop_accelerations_rad_s2") = py::none(),
           py::arg("urdf_xml") = "", py::arg("base_frame") = "",
           py::arg("joint_names") = std::vector<std::string>{}, py::arg("tcp_frame") = "",
           "`address`: a C function with the law ABI, which must stay loaded while the law exists. "
           "ValueError naming the field for a bad configuration; without urdf_xml the law sees an identity "
           "TCP pose and a zero Jacobian")
      .def(
          "set_params",
          [](jtac::loop::CallbackLaw& law, const InputArray& params) {
            if (params.ndim() != 1) {
              throw std::invalid_argument("law '" + law.name() + "': params must be 1-D, got " +
                                          std::to_string(params.ndim()) + " dimensions");
            }
            const std::string message = law.set_params(
                std::span<const double>(params.data(), static_cast<std::size_t>(params.size())));
            if (!message.empty()) {
              throw std::invalid_argument(message);
            }
          },
          py::arg("params"),
          "New parameters, taken at the next cycle boundary; ValueError naming index and value")
      .def_property_readonly("failed", &jtac::loop::CallbackLaw::failed,
                             "True once the law failed in this activation (the arm stops, then holds)")
      .def_property_readonly(
          "error",
          [](const jtac::loop::CallbackLaw& law) -> py::object {
            const jtac::loop::CallbackLawError e = law.error();
            if (!e.failed) {
              return py::none();
            }
            py::dict d;
            d["message"] = std::string(e.message.data(), strnlen(e.message.data(), e.message.size()));
            d["code"] = e.code;
            d["joint"] = e.joint;
            d["value"] = e.value;
            d["time"] = e.time_s;
            return d;
          },
          "None, or why the law stopped: {message, code, joint (-1: none), value, time [s]}")
      .def_property_readonly("name", &jtac::loop::CallbackLaw::name)
      .def_property_readonly("num_params", &jtac::loop::CallbackLaw::num_params)
      .def_property_readonly("num_memory", &jtac::loop::CallbackLaw::num_memory)
      .def_property_readonly("calls", &jtac::loop::CallbackLaw::calls)
      .def_property_readonly("call_ns_total", &jtac::loop::CallbackLaw::call_ns_total,
                             "Time spent in the law's function so far [ns]")
      .def_property_readonly("call_ns_max", &jtac::loop::CallbackLaw::call_ns_max,
                             "Longest call of the law's function [ns]")
      .def_property_readonly("params_taken", &jtac::loop::CallbackLaw::params_taken,
                             "Parameter sets the controller thread has taken");
  m.def(
      "reference_law_address",
      [](const std::string& name) -> std::uintptr_t {
        if (name == "sine") {
          return reinterpret_cast<std::uintptr_t>(&jtac::loop::jtac_sine_law);
        }
        if (name == "joint_impedance") {
          return reinterpret_cast<std::uintptr_t>(&jtac::loop::jtac_joint_impedance_law);
        }
        throw std::invalid_argument("reference_law_address: unknown law '" + name +
                                    "' (sine, joint_impedance)");
      },
      py::arg("name"),
      "The address of a C reference law (jtac_loop/callback_law.hpp): 'sine', 'joint_impedance'");

  py::class_<ControlLoop>(m, "ControlLoop", "The controller thread: the JTAC controller at update_rate")
      .def(py::init([](AsyncInterface& interface, jtac_python::Controller& controller, int update_rate_hz,
                       int fifo_priority, int cpu, std::int64_t record_capacity) {
             if (record_capacity < 1) {
               throw std::invalid_argument("record_capacity must be >= 1, got " +
                                           std::to_string(record_capacity));
             }
             jtac::loop::ControlLoopConfig config;
             config.update_rate_hz = update_rate_hz;
             config.fifo_priority = fifo_priority;
             config.cpu = cpu;
             config.record_capacity = static_cast<std::size_t>(record_capacity);
             return std::make_unique<ControlLoop>(interface, controller.core, config);
           }),
           py::arg("interface"), py::arg("controller"), py::kw_only(), py::arg("update_rate_hz") = 1000,
           py::arg("fifo_priority") = 70, py::arg("cpu") = -1, py::arg("record_capacity") = 8192,
           py::keep_alive<1, 2>(), py::keep_alive<1, 3>(),
           "record_capacity: rows the record ring holds until drained (record_buffer_cycles)")
      .def(
          "start", [](ControlLoop& l) { return l.start(); }, "Real-time mode: starts the controller thread")
      .def(
          "stop",
          [](ControlLoop& l) {
            py::gil_scoped_release release;
            l.stop();
          },
          "Joins the controller thread and deactivates the controller")
      .def_property_readonly("running", &ControlLoop::running)
      .def(
          "step",
          [](ControlLoop& l, int packets) {
            if (packets < 0) {
              throw std::invalid_argument("packets must be >= 0, got " + std::to_string(packets));
            }
            py::gil_scoped_release release;
            DeviceStatus status = DeviceStatus::kOk;
            for (int i = 0; i < packets && status == DeviceStatus::kOk; ++i) {
              status = l.step();
            }
            return status;
          },
          py::arg("packets") = 1,
          "Lockstep: `packets` device packets (and the controller cycles due); stops at the first "
          "status that is not OK and returns it")
      .def_property_readonly("packets", &ControlLoop::packets)
      .def(
          "use_law", [](ControlLoop& l, jtac::loop::StreamLaw* law) { l.use_law(law); },
          py::arg("law").none(true), py::keep_alive<1, 2>(),
          "Switches the control law at the next cycle (None: back to the JTAC controller)")
      .def(
          "use_law", [](ControlLoop& l, jtac::loop::CallbackLaw* law) { l.use_law(law); }, py::arg("law"),
          py::keep_alive<1, 2>(), "Switches to a callback law at the next cycle")
      .def_property_readonly(
          "jtac_active", &ControlLoop::jtac_running,
          "True when the last cycle ran the JTAC law and no switch away from it is asked for")
      .def(
          "runs",
          [](const ControlLoop& l, const py::object& law) {
            const jtac::loop::ControlLaw* p = nullptr;
            if (py::isinstance<jtac::loop::StreamLaw>(law)) {
              p = law.cast<jtac::loop::StreamLaw*>();
            } else if (py::isinstance<jtac::loop::CallbackLaw>(law)) {
              p = law.cast<jtac::loop::CallbackLaw*>();
            } else {
              throw std::invalid_argument("runs: expected a StreamLaw or a CallbackLaw");
            }
            return l.active_law() == p && !l.handing_over();
          },
          py::arg("law"), "True when the last cycle ran `law` and it is not handing over")
      .def_property_readonly("handing_over", &ControlLoop::handing_over,
                             "True while the running law brakes to rest for a switch")
      .def_property_readonly("handovers", &ControlLoop::handovers, "Hand-overs completed")
      .def(
          "set_stop_accelerations",
          [](ControlLoop& l, const std::vector<double>& a) {
            if (a.size() != static_cast<std::size_t>(jtac::loop::kNumJoints)) {
              throw std::invalid_argument("set_stop_accelerations: " + std::to_string(a.size()) +
                                          " values, expected " + std::to_string(jtac::loop::kNumJoints));
            }
            jtac::loop::JointArray v{};
            for (std::size_t j = 0; j < v.size(); ++j) {
              if (!(std::isfinite(a[j]) && a[j] > 0.0)) {
                throw std::invalid_argument("set_stop_accelerations: joint " + std::to_string(j) + " is " +
                                            std::to_string(a[j]) + ", must be finite and > 0");
              }
              v[j] = a[j];
            }
            l.set_stop_accelerations(v);
          },
          py::arg("stop_accelerations_rad_s2"),
          "The deceleration of each joint for every law's brakes [rad/s²], from the next cycle")
      .def(
          "set_wrench_sources",
          [](ControlLoop& l, const std::vector<std::string>& sources) {
            if (sources.size() > static_cast<std::size_t>(jtac::kMaxTips)) {
              throw std::invalid_argument("set_wrench_sources: " + std::to_string(sources.size()) +
                                          " tips, at most " + std::to_string(jtac::kMaxTips));
            }
            std::array<jtac::loop::WrenchSource, jtac::kMaxTips> s{};
            for (std::size_t k = 0; k < sources.size(); ++k) {
              s[k] = wrench_source_of(sources[k]);
            }
            jtac_law_of(l).set_wrench_sources(s);
          },
          py::arg("sources"),
          "Where each tip's raw wrench comes from, tip 0 first: 'device' (the arm's F/T reading), "
          "'external' (feed_wrench) or 'none' (zero); tips not listed: 'none'")
      .def(
          "wrench_sources",
          [](ControlLoop& l) {
            std::vector<std::string> names;
            for (int k = 0; k < jtac::kMaxTips; ++k) {
              names.emplace_back(wrench_source_name(jtac_law_of(l).wrench_source(k)));
            }
            return names;
          },
          "Each tip's wrench source (kMaxTips entries)")
      .def(
          "feed_wrench",
          [](ControlLoop& l, int tip, const InputArray& wrench) {
            return jtac_law_of(l).feed_wrench(tip, fixed<6>(wrench, "wrench_N_Nm"));
          },
          py::arg("tip"), py::arg("wrench_N_Nm"),
          "The newest reading [Fx Fy Fz Tx Ty Tz] of tip `tip`'s external sensor (sensor frame), taken "
          "at the next cycle and held until the next; False for a tip whose source is not 'external'. "
          "Never waits on the controller thread")
      .def(
          "snapshot",
          [](ControlLoop& l) -> py::object {
            jtac::loop::LoopSnapshot s;
            if (!l.snapshot(s)) {
              return py::none();
            }
            return snapshot_dict(s);
          },
          "The last controller cycle (dict), None before the first")
      .def("start_recording", &ControlLoop::start_recording)
      .def("stop_recording", &ControlLoop::stop_recording)
      .def_property_readonly("recording", &ControlLoop::recording)
      .def(
          "drain",
          [](ControlLoop& l) {
            std::vector<jtac::loop::CycleRecord> rows;
            {
              py::gil_scoped_release release;
              rows.reserve(l.pending_records());
              l.drain(rows);
            }
            return columns(rows);
          },
          "Every recorded row not yet drained, as columns")
      .def_property_readonly("dropped_records", &ControlLoop::dropped_records)
      .def_property_readonly("record_capacity", &ControlLoop::record_capacity)
      .def("timing", [](const ControlLoop& l) { return timing_dict(l.timing()); })
      .def_property_readonly("update_rate_hz", &ControlLoop::update_rate_hz)
      .def_property_readonly("packets_per_cycle", &ControlLoop::packets_per_cycle);
}
