// pybind11 bindings of the trajectory engine's pure pieces: interpolation, angle differences, the
// speed scale (TimeScaler) and the minimum-time stop (StopTrajectory). Conversion only.
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

namespace jtac_python {

void bind_trajectory_functions(py::module_& m) {
  const jtac::ScalarSample sample_defaults;
  py::class_<jtac::ScalarSample>(m, "ScalarSample", "Position [rad], velocity [rad/s], acceleration [rad/s²]")
      .def(py::init([](double p, double v, double a) { return jtac::ScalarSample{p, v, a}; }),
           py::arg("position") = sample_defaults.position, py::arg("velocity") = sample_defaults.velocity,
           py::arg("acceleration") = sample_defaults.acceleration)
      .def_readwrite("position", &jtac::ScalarSample::position)
      .def_readwrite("velocity", &jtac::ScalarSample::velocity)
      .def_readwrite("acceleration", &jtac::ScalarSample::acceleration)
      .def("__iter__", [](const jtac::ScalarSample& s) { return py::iter(py::cast(to_tuple(s))); })
      .def("__repr__", [](const jtac::ScalarSample& s) {
        return "ScalarSample(" + std::to_string(s.position) + ", " + std::to_string(s.velocity) + ", " +
               std::to_string(s.acceleration) + ")";
      });

  m.def("segment_kind", &jtac::segment_kind, py::arg("both_have_velocities"),
        py::arg("both_have_accelerations"), "The kind a segment gets from what its two end points carry");
  m.def(
      "sample_segment",
      [](jtac::SegmentKind kind, const jtac::ScalarSample& start, const jtac::ScalarSample& end,
         double duration_s,
         double t_s) { return to_tuple(jtac::sample_segment(kind, start, end, duration_s, t_s)); },
      py::arg("kind"), py::arg("start"), py::arg("end"), py::arg("duration_s"), py::arg("t_s"),
      "(position, velocity, acceleration) of the segment polynomial at t_s (clamped to [0, duration_s])");
  m.def(
      "sample_segment",
      [](jtac::SegmentKind kind, const std::array<double, 3>& start, const std::array<double, 3>& end,
         double duration_s, double t_s) {
        return to_tuple(
            jtac::sample_segment(kind, scalar_sample(start), scalar_sample(end), duration_s, t_s));
      },
      py::arg("kind"), py::arg("start"), py::arg("end"), py::arg("duration_s"), py::arg("t_s"),
      "start / end as (position, velocity, acceleration) sequences");
  m.def(
      "sample_segment_many",
      [](jtac::SegmentKind kind, const std::array<double, 3>& start, const std::array<double, 3>& end,
         double duration_s, const InputArray& t_s) {
        if (t_s.ndim() != 1) {
          throw std::invalid_argument("t_s must be one-dimensional");
        }
        const py::ssize_t n = t_s.shape(0);
        py::array_t<double> p(n), v(n), a(n);
        auto pp = p.mutable_unchecked<1>();
        auto vv = v.mutable_unchecked<1>();
        auto aa = a.mutable_unchecked<1>();
        const auto tt = t_s.unchecked<1>();
        for (py::ssize_t i = 0; i < n; ++i) {
          const jtac::ScalarSample s =
              jtac::sample_segment(kind, scalar_sample(start), scalar_sample(end), duration_s, tt(i));
          pp(i) = s.position;
          vv(i) = s.velocity;
          aa(i) = s.acceleration;
        }
        return Triple{p, v, a};
      },
      py::arg("kind"), py::arg("start"), py::arg("end"), py::arg("duration_s"), py::arg("t_s"),
      "sample_segment at every time of the 1-D array t_s: (positions, velocities, accelerations)");

  m.def("shortest_angular_difference", py::vectorize([](double from_rad, double to_rad) {
          return jtac::shortest_angular_difference(from_rad, to_rad);
        }),
        py::arg("from_rad"), py::arg("to_rad"), "Shortest signed angle from from_rad to to_rad, in [-π, π)");
  m.def("joint_difference", py::vectorize([](double from_rad, double to_rad, bool continuous) {
          return jtac::joint_difference(from_rad, to_rad, continuous);
        }),
        py::arg("from_rad"), py::arg("to_rad"), py::arg("continuous"),
        "to − from: shortest angular difference for a continuous joint, raw difference otherwise");
  m.def("whole_turn_offset", py::vectorize([](double reference_rad, double target_rad) {
          return jtac::whole_turn_offset(reference_rad, target_rad);
        }),
        py::arg("reference_rad"), py::arg("target_rad"),
        "The whole-turn offset 2πk [rad] that brings target_rad closest to reference_rad");

  py::class_<jtac::TimeScaler>(m, "TimeScaler", "First-order-lag, rate-limited speed scale")
      .def(py::init<>())
      .def_readonly_static("MAX_RATE_PERCENT_PER_S", &jtac::TimeScaler::kMaxRatePercentPerS)
      .def("reset", &jtac::TimeScaler::reset, py::arg("percent"), "Starts at `percent` with no transient")
      .def("set_target_percent", &jtac::TimeScaler::set_target_percent, py::arg("percent"),
           "New requested percentage (clamped to [0, 100]; non-finite ignored)")
      .def("set_filter_constant", &jtac::TimeScaler::set_filter_constant, py::arg("seconds"),
           "Filter time constant [s] (ignored unless positive and finite)")
      .def(
          "update",
          [](jtac::TimeScaler& s, double dt_s) {
            const jtac::TimeScale ts = s.update(dt_s);
            return std::make_pair(ts.scale, ts.scale_rate_per_s);
          },
          py::arg("dt_s"), "Advances by dt_s [s]: (scale, scale_rate_per_s)")
      .def(
          "update_many",
          [](jtac::TimeScaler& s, double dt_s, py::ssize_t count) {
            if (count < 0) {
              throw std::invalid_argument("count = " + std::to_string(count) + ": must be >= 0");
            }
            py::array_t<double> scales(count), rates(count);
            auto ss = scales.mutable_unchecked<1>();
            auto rr = rates.mutable_unchecked<1>();
            for (py::ssize_t i = 0; i < count; ++i) {
              const jtac::TimeScale ts = s.update(dt_s);
              ss(i) = ts.scale;
              rr(i) = ts.scale_rate_per_s;
            }
            return std::make_pair(scales, rates);
          },
          py::arg("dt_s"), py::arg("count"), "update(dt_s) `count` times: (scales, scale_rates) arrays")
      .def(
          "current",
          [](const jtac::TimeScaler& s) {
            const jtac::TimeScale ts = s.current();
            return std::make_pair(ts.scale, ts.scale_rate_per_s);
          },
          "(scale, scale_rate_per_s) as of the last update()")
      .def_property_readonly("target_percent", &jtac::TimeScaler::target_percent, "The requested percentage");

  py::class_<jtac::StopTrajectory>(m, "StopTrajectory", "A synchronised constant-deceleration stop")
      .def(py::init<>())
      .def(
          "start",
          [](jtac::StopTrajectory& stop, const InputArray& q0_rad, const InputArray& v0_rad_s,
             const InputArray& a_max_rad_s2) {
            const jtac::JointVector q = joint_vector(q0_rad, "q0_rad", kAnySize);
            stop.start(q, joint_vector(v0_rad_s, "v0_rad_s", q.size()),
                       joint_vector(a_max_rad_s2, "a_max_rad_s2", q.size()));
          },
          py::arg("q0_rad"), py::arg("v0_rad_s"), py::arg("a_max_rad_s2"),
          "Plans the stop from q0 [rad], v0 [rad/s] within deceleration limits a_max [rad/s²]")
      .def(
          "sample",
          [](const jtac::StopTrajectory& stop, double t_s) {
            jtac::JointVector q, v, a;
            stop.sample(t_s, q, v, a);
            return to_triple(q, v, a);
          },
          py::arg("t_s"), "(q [rad], v [rad/s], a [rad/s²]) t_s [s] after the start")
      .def("duration", &jtac::StopTrajectory::duration, "Time to standstill [s]")
      .def(
          "final_position", [](const jtac::StopTrajectory& stop) { return to_array(stop.final_position()); },
          "Where the arm comes to rest [rad]");
}

}  // namespace jtac_python
