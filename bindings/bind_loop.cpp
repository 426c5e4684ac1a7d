// pybind11 bindings of jtac_loop: the controller thread (ControlLoop), its laws (StreamLaw,
// CallbackLaw, the reference C laws); the cycle record's fields and the timing are converted in
// bind_loop_cycle.cpp. Conversion only: no algorithm here. Keyword defaults are those of the
// default-constructed C++ configurations (ChunkStreamConfig, CallbackLawConfig, ControlLoopConfig).
//
// The GIL: every call that may block or run for a while releases it — ControlLoop.step(n),
// start()/stop() (thread start/join) — so a Python thread waiting on the robot never holds the other
// Python threads, and the native threads themselves never touch Python. A ControlLoop keeps its
// interface and controller alive.
//
// Arrays: joints as (7,) float64, (H, 7) for a chunk's rows; a wrench [Fx Fy Fz Tx Ty Tz] as (6,)
// [N, N·m].

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "franka_hw/async_interface.hpp"
#include "jtac_loop/callback_law.hpp"
#include "jtac_loop/control_loop.hpp"
#include "jtac_loop/stream_law.hpp"

#include "bind_common.hpp"
#include "bind_hw_arrays.hpp"
#include "bind_loop_cycle.hpp"

namespace py = pybind11;

namespace {

using jtac::hw::AsyncInterface;
using jtac::hw::DeviceStatus;
using jtac::hw::JointArray;
using jtac::loop::ControlLoop;
using jtac_python::fixed;
using jtac_python::InputArray;

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

/// Rows of an (H, 7) array as joint arrays; `name` in errors.
std::vector<JointArray> joint_rows(const InputArray& a, const char* name) {
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
}

/// StreamState and StreamLaw; keyword defaults from ChunkStreamConfig and JtacGoal.
void bind_stream_law(py::module_& m) {
  const jtac::loop::ChunkStreamConfig stream_defaults{};
  const jtac::JtacGoal goal_defaults{};
  py::enum_<jtac::loop::StreamState>(m, "StreamState", "What a stream's command does")
      .value("HOLDING", jtac::loop::StreamState::kHolding)
      .value("FOLLOWING", jtac::loop::StreamState::kFollowing)
      .value("BRAKING", jtac::loop::StreamState::kBraking);
  // The stream's defaults for Python's own signatures (Controller.stream), so that no Python constant
  // repeats them.
  m.attr("STREAM_DEFAULTS") = py::dict(
      py::arg("chunk_capacity") = static_cast<std::int64_t>(stream_defaults.chunk_capacity),
      py::arg("blend_window_s") = stream_defaults.blend_window_s,
      py::arg("timeout_s") = stream_defaults.timeout_s, py::arg("run_out_s") = stream_defaults.run_out_s,
      py::arg("ensemble_weight") = stream_defaults.ensemble_weight,
      py::arg("joint_damping_per_s") = goal_defaults.joint_damping_per_s);
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
          py::arg("controller_period_s") = stream_defaults.controller_period_s, py::kw_only(),
          py::arg("chunk_capacity") = static_cast<std::int64_t>(stream_defaults.chunk_capacity),
          py::arg("blend_window_s") = stream_defaults.blend_window_s,
          py::arg("timeout_s") = stream_defaults.timeout_s, py::arg("run_out_s") = stream_defaults.run_out_s,
          py::arg("stop_accelerations_rad_s2") = py::none(),
          py::arg("ensemble_weight") = stream_defaults.ensemble_weight,
          py::arg("loop").none(true) = py::none(), py::arg("tips") = py::none(),
          py::arg("joint_damping_per_s") = goal_defaults.joint_damping_per_s,
          py::arg("absolute_force_torque_threshold") = py::none(),
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
          [](jtac::loop::StreamLaw& law, const InputArray& times, const InputArray& q,
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
}

/// CallbackLaw and the reference C laws' addresses; keyword defaults from CallbackLawConfig.
void bind_callback_law(py::module_& m) {
  const jtac::loop::CallbackLawConfig callback_defaults{};
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
           py::arg("urdf_xml") = callback_defaults.urdf_xml,
           py::arg("base_frame") = callback_defaults.base_frame,
           py::arg("joint_names") = callback_defaults.joint_names,
           py::arg("tcp_frame") = callback_defaults.tcp_frame,
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
}

/// ControlLoop; keyword defaults from ControlLoopConfig.
void bind_control_loop(py::module_& m) {
  const jtac::loop::ControlLoopConfig loop_defaults{};
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
           py::arg("interface"), py::arg("controller"), py::kw_only(),
           py::arg("update_rate_hz") = loop_defaults.update_rate_hz,
           py::arg("fifo_priority") = loop_defaults.fifo_priority, py::arg("cpu") = loop_defaults.cpu,
           py::arg("record_capacity") = static_cast<std::int64_t>(loop_defaults.record_capacity),
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
          "watch_peer",
          [](ControlLoop& l, const AsyncInterface& peer, double silence_s) {
            if (l.running()) {
              throw std::runtime_error("watch_peer: the loop runs; watch peers before start()");
            }
            if (!(silence_s >= 0.0) || !l.watch_peer(peer, std::llround(silence_s * 1e9))) {
              throw std::invalid_argument(
                  "watch_peer: this loop's own interface, a silence_s that is not >= 0, "
                  "or already " +
                  std::to_string(ControlLoop::kMaxPeers) + " peers");
            }
          },
          py::arg("peer"), py::arg("silence_s") = 0.0, py::keep_alive<1, 2>(),
          "Brakes the running law to rest at the next cycle once `peer` (another arm's AsyncInterface) "
          "stops by itself, or (silence_s > 0) runs but has written no packet for silence_s [s]")
      .def_property_readonly_static(
          "FRANKA_SILENCE_S", [](const py::object&) { return ControlLoop::kFrankaSilenceNs * 1e-9; },
          "A Franka arm's silence before a peer brakes for it [s] (20 lost cycles stop its motion)")
      .def(
          "clear_peers",
          [](ControlLoop& l) {
            if (l.running()) {
              throw std::runtime_error("clear_peers: the loop runs");
            }
            l.clear_peers();
          },
          "Watches no other arm")
      .def("request_peer_brake", &ControlLoop::request_peer_brake,
           "Brakes the running law as for a peer's fault at the next cycle (never waits)")
      .def("rearm_peer_watch", &ControlLoop::rearm_peer_watch,
           "Arms the peer watch again after a peer's fault was dealt with")
      .def_property_readonly("peer_brakes", &ControlLoop::peer_brakes, "Peer-fault brakes applied")
      .def("controller_time_at", &ControlLoop::controller_time_at, py::arg("host_ns"),
           "The controller time [s] at host steady-clock time host_ns [ns] (time.monotonic_ns()); NaN "
           "before the first cycle")
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
            return jtac_python::loop_snapshot_dict(s);
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
            return jtac_python::cycle_columns(rows);
          },
          "Every recorded row not yet drained, as columns")
      .def_property_readonly("dropped_records", &ControlLoop::dropped_records)
      .def_property_readonly("record_capacity", &ControlLoop::record_capacity)
      .def("timing", [](const ControlLoop& l) { return jtac_python::loop_timing_dict(l.timing()); })
      .def_property_readonly("update_rate_hz", &ControlLoop::update_rate_hz)
      .def_property_readonly("packets_per_cycle", &ControlLoop::packets_per_cycle);
}

}  // namespace

/// Registers the jtac_loop types in `m` (called from PYBIND11_MODULE after bind_jtac, whose
/// JointTrajectoryAdmittanceController the ControlLoop drives, and bind_hw, whose AsyncInterface it
/// runs on).
void bind_loop(py::module_& m) {
  jtac_python::bind_loop_cycle(m);
  bind_stream_law(m);
  bind_callback_law(m);
  bind_control_loop(m);
}
