// pybind11 bindings of jtac_core's trajectory engine: interpolation, time scaling, stops,
// tolerances, Trajectory and TrajectoryController. Conversion only: no algorithm here.
//
// Every array argument is converted strictly: one-dimensional, the exact number of joints (or at
// most kMaxJoints where nothing fixes it), otherwise ValueError naming the argument. Nothing of a
// wrong size ever reaches the core, whose real-time functions do not check sizes.
//
// Length: over 600 lines because it binds the trajectory engine's types in one file (ruckig's one-file
// wrapper is the model), each with its strict conversion.
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

#include "bind_common.hpp"

namespace py = pybind11;

// ----------------------------------------------------------- shared conversions (bind_common.hpp)

namespace jtac_python {

/// A 1-D array of `expected` entries (or at most kMaxJoints for kAnySize) as a JointVector.
jtac::JointVector joint_vector(const InputArray& a, const char* name, Eigen::Index expected) {
  if (a.ndim() != 1) {
    throw std::invalid_argument(std::string(name) + " must be one-dimensional, got " +
                                std::to_string(a.ndim()) + " dimensions");
  }
  const auto size = static_cast<Eigen::Index>(a.shape(0));
  if (expected != kAnySize && size != expected) {
    throw std::invalid_argument(std::string(name) + " has " + std::to_string(size) + " entries, expected " +
                                std::to_string(expected));
  }
  if (size > jtac::kMaxJoints) {
    throw std::invalid_argument(std::string(name) + " has " + std::to_string(size) + " entries, at most " +
                                std::to_string(jtac::kMaxJoints) + " joints are supported");
  }
  jtac::JointVector v(size);
  const double* data = a.data();
  for (Eigen::Index i = 0; i < size; ++i) {
    v[i] = data[i];
  }
  return v;
}

py::array_t<double> to_array(const jtac::JointVector& v) {
  return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
}

std::vector<double> double_list(const py::handle& value, const std::string& name) {
  if (value.is_none()) {
    return {};
  }
  try {
    return value.cast<std::vector<double>>();
  } catch (const py::cast_error&) {
    throw std::invalid_argument(name + " must be a sequence of numbers, got " +
                                std::string(py::str(py::type::handle_of(value).attr("__name__"))));
  }
}

namespace {

jtac::GoalPoint goal_point_from(const py::handle& item, std::size_t index) {
  if (py::isinstance<jtac::GoalPoint>(item)) {
    return item.cast<jtac::GoalPoint>();
  }
  const std::string where = "points[" + std::to_string(index) + "]";
  if (!py::isinstance<py::dict>(item)) {
    throw std::invalid_argument(where + " must be a GoalPoint or a dict");
  }
  jtac::GoalPoint p;
  for (const auto& [key_obj, value] : item.cast<py::dict>()) {
    const auto key = key_obj.cast<std::string>();
    if (key == "time_from_start_s") {
      p.time_from_start_s = value.cast<double>();
    } else if (key == "positions_rad") {
      p.positions_rad = double_list(value, where + ".positions_rad");
    } else if (key == "velocities_rad_s") {
      p.velocities_rad_s = double_list(value, where + ".velocities_rad_s");
    } else if (key == "accelerations_rad_s2") {
      p.accelerations_rad_s2 = double_list(value, where + ".accelerations_rad_s2");
    } else if (key == "effort") {
      p.effort = double_list(value, where + ".effort");
    } else {
      throw std::invalid_argument(
          where + ": unknown key '" + key +
          "' (time_from_start_s, positions_rad, velocities_rad_s, accelerations_rad_s2, effort)");
    }
  }
  return p;
}

}  // namespace

/// A TrajectoryGoal from a bound TrajectoryGoal or a dict with the same field names.
jtac::TrajectoryGoal goal_from(const py::handle& obj) {
  if (py::isinstance<jtac::TrajectoryGoal>(obj)) {
    return obj.cast<jtac::TrajectoryGoal>();
  }
  if (!py::isinstance<py::dict>(obj)) {
    throw std::invalid_argument("goal must be a TrajectoryGoal or a dict");
  }
  jtac::TrajectoryGoal goal;
  for (const auto& [key_obj, value] : obj.cast<py::dict>()) {
    const auto key = key_obj.cast<std::string>();
    if (key == "joint_names") {
      goal.joint_names = value.cast<std::vector<std::string>>();
    } else if (key == "points") {
      std::size_t i = 0;
      for (const auto& item : value) {
        goal.points.push_back(goal_point_from(item, i++));
      }
    } else if (key == "start_time_s") {
      goal.start_time_s = value.cast<double>();
    } else if (key == "path_tolerance_rad") {
      goal.path_tolerance_rad = double_list(value, "path_tolerance_rad");
    } else if (key == "goal_tolerance_rad") {
      goal.goal_tolerance_rad = double_list(value, "goal_tolerance_rad");
    } else if (key == "goal_time_tolerance_s") {
      goal.goal_time_tolerance_s = value.cast<double>();
    } else {
      throw std::invalid_argument(
          "goal: unknown key '" + key +
          "' (joint_names, points, start_time_s, path_tolerance_rad, goal_tolerance_rad, "
          "goal_time_tolerance_s)");
    }
  }
  return goal;
}

}  // namespace jtac_python

namespace {

using jtac_python::double_list;
using jtac_python::goal_from;
using jtac_python::InputArray;
using jtac_python::joint_vector;
using jtac_python::kAnySize;
using jtac_python::OptionalArray;
using jtac_python::PolledEvent;
using jtac_python::to_array;

using Triple = std::tuple<py::array_t<double>, py::array_t<double>, py::array_t<double>>;

Triple to_triple(const jtac::JointVector& q, const jtac::JointVector& v, const jtac::JointVector& a) {
  return {to_array(q), to_array(v), to_array(a)};
}

Triple to_triple(const jtac::JointTrajectoryState& s) {
  return to_triple(s.position_rad, s.velocity_rad_s, s.acceleration_rad_s2);
}

jtac::ScalarSample scalar_sample(const std::array<double, 3>& pva) { return {pva[0], pva[1], pva[2]}; }

std::tuple<double, double, double> to_tuple(const jtac::ScalarSample& s) {
  return {s.position, s.velocity, s.acceleration};
}

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

/// The JointVector field `member` of ControllerParameters as a numpy property.
template <jtac::JointVector jtac::ControllerParameters::* member>
void def_vector_field(py::class_<jtac::ControllerParameters>& cls, const char* name, const char* doc) {
  cls.def_property(
      name, [](const jtac::ControllerParameters& p) { return to_array(p.*member); },
      [name](jtac::ControllerParameters& p, const InputArray& value) {
        p.*member = joint_vector(value, name, kAnySize);
      },
      doc);
}

void bind_enums(py::module_& m) {
  py::enum_<jtac::SegmentKind>(m, "SegmentKind", "Order of the polynomial across one segment")
      .value("LINEAR", jtac::SegmentKind::kLinear)
      .value("CUBIC", jtac::SegmentKind::kCubic)
      .value("QUINTIC", jtac::SegmentKind::kQuintic);
  py::enum_<jtac::ControllerMode>(m, "ControllerMode", "What the engine is doing")
      .value("INACTIVE", jtac::ControllerMode::kInactive)
      .value("IDLE", jtac::ControllerMode::kIdle)
      .value("WAITING", jtac::ControllerMode::kWaiting)
      .value("EXECUTING", jtac::ControllerMode::kExecuting)
      .value("SETTLING", jtac::ControllerMode::kSettling)
      .value("STOPPING", jtac::ControllerMode::kStopping);
  py::enum_<jtac::UpdateStatus>(m, "UpdateStatus", "Status of one update()")
      .value("OK", jtac::UpdateStatus::kOk)
      .value("INACTIVE", jtac::UpdateStatus::kInactive)
      .value("BAD_INPUT", jtac::UpdateStatus::kBadInput)
      .value("HOLDING_COMMAND", jtac::UpdateStatus::kHoldingCommand);
  py::enum_<jtac::EventType>(m, "EventType", "What happened")
      .value("GOAL_STARTED", jtac::EventType::kGoalStarted)
      .value("GOAL_SUCCEEDED", jtac::EventType::kGoalSucceeded)
      .value("GOAL_ABORTED", jtac::EventType::kGoalAborted)
      .value("GOAL_CANCELED", jtac::EventType::kGoalCanceled)
      .value("STOP_STARTED", jtac::EventType::kStopStarted)
      .value("TARE_SUCCEEDED", jtac::EventType::kTareSucceeded)
      .value("TARE_FAILED", jtac::EventType::kTareFailed);
  py::enum_<jtac::EventDetail>(m, "EventDetail", "Why, with joint/value/limit giving the numbers")
      .value("NONE", jtac::EventDetail::kNone)
      .value("PATH_TOLERANCE", jtac::EventDetail::kPathTolerance)
      .value("GOAL_TOLERANCE", jtac::EventDetail::kGoalTolerance)
      .value("CANCELED", jtac::EventDetail::kCanceled)
      .value("NON_FINITE_MEASURED_POSITION", jtac::EventDetail::kNonFiniteMeasuredPosition)
      .value("NON_FINITE_MEASURED_VELOCITY", jtac::EventDetail::kNonFiniteMeasuredVelocity)
      .value("NON_FINITE_COMMAND", jtac::EventDetail::kNonFiniteCommand)
      .value("NON_FINITE_JOINT_OFFSET", jtac::EventDetail::kNonFiniteJointOffset)
      .value("START_POSITION_JUMP", jtac::EventDetail::kStartPositionJump)
      .value("START_VELOCITY_JUMP", jtac::EventDetail::kStartVelocityJump)
      .value("STITCH_POSITION_JUMP", jtac::EventDetail::kStitchPositionJump)
      .value("STITCH_VELOCITY_JUMP", jtac::EventDetail::kStitchVelocityJump)
      .value("GOAL_DURING_SETTLING", jtac::EventDetail::kGoalDuringSettling)
      .value("ARRIVED_WHILE_BRAKING", jtac::EventDetail::kArrivedWhileBraking)
      .value("TRAJECTORY_IN_THE_PAST", jtac::EventDetail::kTrajectoryInThePast)
      .value("REPLACED_BY_STITCHING", jtac::EventDetail::kReplacedByStitching)
      .value("DEACTIVATED", jtac::EventDetail::kDeactivated)
      .value("EXTERNAL_STOP", jtac::EventDetail::kExternalStop)
      .value("FORCE_TORQUE_THRESHOLD", jtac::EventDetail::kForceTorqueThreshold)
      .value("NON_FINITE_WRENCH", jtac::EventDetail::kNonFiniteWrench)
      .value("ADMITTANCE_NON_FINITE", jtac::EventDetail::kAdmittanceNonFinite)
      .value("STITCH_PAYLOAD_MISMATCH", jtac::EventDetail::kStitchPayloadMismatch)
      .value("TARE_WHILE_EXECUTING", jtac::EventDetail::kTareWhileExecuting)
      .value("CONNECTING_VELOCITY", jtac::EventDetail::kConnectingVelocity)
      .value("CONNECTING_ACCELERATION", jtac::EventDetail::kConnectingAcceleration)
      .value("SPLINE_VELOCITY", jtac::EventDetail::kSplineVelocity)
      .value("SPLINE_ACCELERATION", jtac::EventDetail::kSplineAcceleration)
      .value("HANDED_OVER", jtac::EventDetail::kHandedOver);
}

void bind_pure_functions(py::module_& m) {
  py::class_<jtac::ScalarSample>(m, "ScalarSample", "Position [rad], velocity [rad/s], acceleration [rad/s²]")
      .def(py::init([](double p, double v, double a) { return jtac::ScalarSample{p, v, a}; }),
           py::arg("position") = 0.0, py::arg("velocity") = 0.0, py::arg("acceleration") = 0.0)
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

void bind_trajectory_class(py::module_& m) {
  py::class_<jtac::Trajectory>(m, "Trajectory",
                               "Waypoints with fixed capacity, sampled by piecewise polynomials")
      .def(py::init<>())
      .def(
          "reserve",
          [](jtac::Trajectory& t, int num_joints, int max_points) {
            if (num_joints < 1 || num_joints > jtac::kMaxJoints) {
              throw std::invalid_argument("num_joints = " + std::to_string(num_joints) + ": must be in [1, " +
                                          std::to_string(jtac::kMaxJoints) + "]");
            }
            if (max_points < 1) {
              throw std::invalid_argument("max_points = " + std::to_string(max_points) +
                                          ": must be at least 1");
            }
            t.reserve(num_joints, max_points);
          },
          py::arg("num_joints"), py::arg("max_points"), "Claims storage (allocates)")
      .def("clear", &jtac::Trajectory::clear, "Removes every point; keeps the storage")
      .def(
          "append",
          [](jtac::Trajectory& t, double time_from_start_s, const InputArray& positions_rad,
             const OptionalArray& velocities_rad_s, const OptionalArray& accelerations_rad_s2) {
            if (t.capacity() == 0) {
              throw std::logic_error("Trajectory.append: call reserve() first");
            }
            const Eigen::Index n = t.num_joints();
            const jtac::JointVector q = joint_vector(positions_rad, "positions_rad", n);
            jtac::JointVector v, a;
            if (velocities_rad_s) {
              v = joint_vector(*velocities_rad_s, "velocities_rad_s", n);
            }
            if (accelerations_rad_s2) {
              a = joint_vector(*accelerations_rad_s2, "accelerations_rad_s2", n);
            }
            return t.append(time_from_start_s, q.data(), velocities_rad_s ? v.data() : nullptr,
                            accelerations_rad_s2 ? a.data() : nullptr);
          },
          py::arg("time_from_start_s"), py::arg("positions_rad"), py::arg("velocities_rad_s") = py::none(),
          py::arg("accelerations_rad_s2") = py::none(),
          "Appends a point; False when full or when time does not strictly increase")
      .def(
          "offset_joint",
          [](jtac::Trajectory& t, int joint, double offset_rad) {
            if (joint < 0 || joint >= t.num_joints()) {
              throw std::out_of_range("joint = " + std::to_string(joint) + " is out of range");
            }
            t.offset_joint(joint, offset_rad);
          },
          py::arg("joint"), py::arg("offset_rad"), "Adds offset_rad to every position of `joint`")
      .def(
          "set_start_state",
          [](jtac::Trajectory& t, const InputArray& q, const InputArray& v, const InputArray& a,
             double start_tau_s) {
            const Eigen::Index n = t.num_joints();
            jtac::JointTrajectoryState s;
            s.position_rad = joint_vector(q, "q", n);
            s.velocity_rad_s = joint_vector(v, "v", n);
            s.acceleration_rad_s2 = joint_vector(a, "a", n);
            t.set_start_state(s, start_tau_s);
          },
          py::arg("q"), py::arg("v"), py::arg("a"), py::arg("start_tau") = 0.0,
          "The state the segment before the first point starts from, at trajectory time start_tau [s]")
      .def(
          "sample",
          [](const jtac::Trajectory& t, double tau_s) {
            jtac::JointTrajectoryState s;
            t.sample(tau_s, s);
            return to_triple(s);
          },
          py::arg("tau"), "(q, v, a) at trajectory time tau [s]")
      .def(
          "sample_many",
          [](const jtac::Trajectory& t, const InputArray& taus) {
            if (taus.ndim() != 1) {
              throw std::invalid_argument("taus must be one-dimensional");
            }
            const py::ssize_t count = taus.shape(0);
            const py::ssize_t n = t.num_joints();
            py::array_t<double> q({count, n}), v({count, n}), a({count, n});
            auto qq = q.mutable_unchecked<2>();
            auto vv = v.mutable_unchecked<2>();
            auto aa = a.mutable_unchecked<2>();
            const auto tt = taus.unchecked<1>();
            jtac::JointTrajectoryState s;
            for (py::ssize_t i = 0; i < count; ++i) {
              t.sample(tt(i), s);
              for (py::ssize_t j = 0; j < n; ++j) {
                qq(i, j) = s.position_rad[j];
                vv(i, j) = s.velocity_rad_s[j];
                aa(i, j) = s.acceleration_rad_s2[j];
              }
            }
            return Triple{q, v, a};
          },
          py::arg("taus"),
          "sample() at every time of a 1-D array: (q, v, a), each of shape (len(taus), num_joints)")
      .def(
          "position",
          [](const jtac::Trajectory& t, int index, int joint) {
            if (index < 0 || index >= t.size() || joint < 0 || joint >= t.num_joints()) {
              throw std::out_of_range("point " + std::to_string(index) + ", joint " + std::to_string(joint) +
                                      " is out of range");
            }
            return t.position(index, joint);
          },
          py::arg("index"), py::arg("joint"), "Position of `joint` at point `index` [rad]")
      .def(
          "time_from_start",
          [](const jtac::Trajectory& t, int index) {
            if (index < 0 || index >= t.size()) {
              throw std::out_of_range("point " + std::to_string(index) + " is out of range");
            }
            return t.time_from_start(index);
          },
          py::arg("index"), "time_from_start of point `index` [s]")
      .def("duration", &jtac::Trajectory::duration, "Time of the last point [s]; 0 when empty")
      .def("size", &jtac::Trajectory::size)
      .def("__len__", &jtac::Trajectory::size)
      .def("capacity", &jtac::Trajectory::capacity)
      .def("num_joints", &jtac::Trajectory::num_joints);
}

void bind_controller(py::module_& m) {
  py::class_<jtac::ControllerParameters> params(
      m, "ControllerParameters", "Run-time parameters; per-joint arrays in controller joint order");
  params.def(
      py::init([](const OptionalArray& stop_accelerations_rad_s2,
                  const OptionalArray& default_path_tolerance_rad,
                  const OptionalArray& default_goal_tolerance_rad, double default_goal_time_tolerance_s,
                  double time_scale_percentage, double time_scale_filter_constant_s,
                  double start_position_tolerance_rad, double start_velocity_tolerance_rad_s,
                  double stitch_position_tolerance_rad, double stitch_velocity_tolerance_rad_s) {
        jtac::ControllerParameters p;
        if (stop_accelerations_rad_s2) {
          p.stop_accelerations_rad_s2 =
              joint_vector(*stop_accelerations_rad_s2, "stop_accelerations_rad_s2", kAnySize);
        }
        if (default_path_tolerance_rad) {
          p.default_path_tolerance_rad =
              joint_vector(*default_path_tolerance_rad, "default_path_tolerance_rad", kAnySize);
        }
        if (default_goal_tolerance_rad) {
          p.default_goal_tolerance_rad =
              joint_vector(*default_goal_tolerance_rad, "default_goal_tolerance_rad", kAnySize);
        }
        p.default_goal_time_tolerance_s = default_goal_time_tolerance_s;
        p.time_scale_percentage = time_scale_percentage;
        p.time_scale_filter_constant_s = time_scale_filter_constant_s;
        p.start_position_tolerance_rad = start_position_tolerance_rad;
        p.start_velocity_tolerance_rad_s = start_velocity_tolerance_rad_s;
        p.stitch_position_tolerance_rad = stitch_position_tolerance_rad;
        p.stitch_velocity_tolerance_rad_s = stitch_velocity_tolerance_rad_s;
        return p;
      }),
      py::kw_only(), py::arg("stop_accelerations_rad_s2") = py::none(),
      py::arg("default_path_tolerance_rad") = py::none(), py::arg("default_goal_tolerance_rad") = py::none(),
      py::arg("default_goal_time_tolerance_s") = 0.0, py::arg("time_scale_percentage") = 100.0,
      py::arg("time_scale_filter_constant_s") = 0.1, py::arg("start_position_tolerance_rad") = 0.05,
      py::arg("start_velocity_tolerance_rad_s") = 0.05, py::arg("stitch_position_tolerance_rad") = 0.01,
      py::arg("stitch_velocity_tolerance_rad_s") = 0.05);
  def_vector_field<&jtac::ControllerParameters::stop_accelerations_rad_s2>(
      params, "stop_accelerations_rad_s2", "Per-joint deceleration limits of a stop [rad/s²]");
  def_vector_field<&jtac::ControllerParameters::default_path_tolerance_rad>(
      params, "default_path_tolerance_rad", "Per-joint path tolerance [rad] (inf = no limit)");
  def_vector_field<&jtac::ControllerParameters::default_goal_tolerance_rad>(
      params, "default_goal_tolerance_rad", "Per-joint goal tolerance [rad] (inf = no limit)");
  params
      .def_readwrite("default_goal_time_tolerance_s",
                     &jtac::ControllerParameters::default_goal_time_tolerance_s)
      .def_readwrite("time_scale_percentage", &jtac::ControllerParameters::time_scale_percentage)
      .def_readwrite("time_scale_filter_constant_s",
                     &jtac::ControllerParameters::time_scale_filter_constant_s)
      .def_readwrite("start_position_tolerance_rad",
                     &jtac::ControllerParameters::start_position_tolerance_rad)
      .def_readwrite("start_velocity_tolerance_rad_s",
                     &jtac::ControllerParameters::start_velocity_tolerance_rad_s)
      .def_readwrite("stitch_position_tolerance_rad",
                     &jtac::ControllerParameters::stitch_position_tolerance_rad)
      .def_readwrite("stitch_velocity_tolerance_rad_s",
                     &jtac::ControllerParameters::stitch_velocity_tolerance_rad_s);

  py::class_<jtac::GoalPoint>(m, "GoalPoint", "One waypoint in goal joint order; empty = not provided")
      .def(py::init([](double time_from_start_s, const py::object& positions_rad,
                       const py::object& velocities_rad_s, const py::object& accelerations_rad_s2,
                       const py::object& effort) {
             jtac::GoalPoint p;
             p.time_from_start_s = time_from_start_s;
             p.positions_rad = double_list(positions_rad, "positions_rad");
             p.velocities_rad_s = double_list(velocities_rad_s, "velocities_rad_s");
             p.accelerations_rad_s2 = double_list(accelerations_rad_s2, "accelerations_rad_s2");
             p.effort = double_list(effort, "effort");
             return p;
           }),
           py::arg("time_from_start_s"), py::arg("positions_rad"), py::arg("velocities_rad_s") = py::none(),
           py::arg("accelerations_rad_s2") = py::none(), py::arg("effort") = py::none())
      .def_readwrite("time_from_start_s", &jtac::GoalPoint::time_from_start_s)
      .def_readwrite("positions_rad", &jtac::GoalPoint::positions_rad)
      .def_readwrite("velocities_rad_s", &jtac::GoalPoint::velocities_rad_s)
      .def_readwrite("accelerations_rad_s2", &jtac::GoalPoint::accelerations_rad_s2)
      .def_readwrite("effort", &jtac::GoalPoint::effort, "refused when given: jtac commands positions");

  py::class_<jtac::TrajectoryGoal>(m, "TrajectoryGoal",
                                   "A trajectory goal (lists are copied: assign whole lists)")
      .def(py::init([](std::vector<std::string> joint_names, std::vector<jtac::GoalPoint> points,
                       double start_time_s, const py::object& path_tolerance_rad,
                       const py::object& goal_tolerance_rad, double goal_time_tolerance_s) {
             jtac::TrajectoryGoal g;
             g.joint_names = std::move(joint_names);
             g.points = std::move(points);
             g.start_time_s = start_time_s;
             g.path_tolerance_rad = double_list(path_tolerance_rad, "path_tolerance_rad");
             g.goal_tolerance_rad = double_list(goal_tolerance_rad, "goal_tolerance_rad");
             g.goal_time_tolerance_s = goal_time_tolerance_s;
             return g;
           }),
           py::arg("joint_names"), py::arg("points"), py::arg("start_time_s") = 0.0,
           py::arg("path_tolerance_rad") = py::none(), py::arg("goal_tolerance_rad") = py::none(),
           py::arg("goal_time_tolerance_s") = 0.0)
      .def_readwrite("joint_names", &jtac::TrajectoryGoal::joint_names)
      .def_readwrite("points", &jtac::TrajectoryGoal::points)
      .def_readwrite("start_time_s", &jtac::TrajectoryGoal::start_time_s)
      .def_readwrite("path_tolerance_rad", &jtac::TrajectoryGoal::path_tolerance_rad)
      .def_readwrite("goal_tolerance_rad", &jtac::TrajectoryGoal::goal_tolerance_rad)
      .def_readwrite("goal_time_tolerance_s", &jtac::TrajectoryGoal::goal_time_tolerance_s);

  py::class_<jtac::SubmitResult>(m, "SubmitResult", "Result of submit_goal()")
      .def_readonly("code", &jtac::SubmitResult::code)
      .def_readonly("message", &jtac::SubmitResult::message)
      .def_readonly("goal_id", &jtac::SubmitResult::goal_id)
      .def_readonly("busy", &jtac::SubmitResult::busy)
      .def_readonly("warning", &jtac::SubmitResult::warning)
      .def("__repr__", [](const jtac::SubmitResult& r) {
        return "SubmitResult(code=" + std::string(jtac::to_string(r.code)) +
               ", goal_id=" + std::to_string(r.goal_id) + ", busy=" + (r.busy ? "True" : "False") +
               ", message='" + r.message + "'" + (r.warning.empty() ? "" : ", warning='" + r.warning + "'") +
               ")";
      });

  py::class_<StopRequest>(m, "StopRequest", "A stop requested through the cycle input (e.g. F/T threshold)")
      .def(py::init([](jtac::ResultCode code, int index, double value, double limit) {
             return StopRequest{code, index, value, limit};
           }),
           py::arg("code"), py::arg("index") = -1, py::arg("value") = 0.0, py::arg("limit") = 0.0)
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
          py::arg("parameters"), py::kw_only(), py::arg("max_velocity_rad_s") = std::vector<double>{},
          py::arg("max_acceleration_rad_s2") = std::vector<double>{},
          "Claims all memory; ValueError naming the offending joint or value. max_velocity_rad_s / "
          "max_acceleration_rad_s2: the robot's joint limits that bound the segment to a goal's first point "
          "(empty = unchecked)")
      .def("validate_parameters", &jtac::TrajectoryController::validate_parameters, py::arg("parameters"),
           "'' or a message naming the parameter, joint and value")
      .def("set_parameters", &jtac::TrajectoryController::set_parameters, py::arg("parameters"),
           "Publishes new run-time parameters; returns '' or the validation message")
      .def(
          "submit_goal",
          [](jtac::TrajectoryController& c, const py::object& goal, double now_s) {
            return c.submit_goal(goal_from(goal), now_s);
          },
          py::arg("goal"), py::arg("now_s"), "Validates and queues a goal (TrajectoryGoal or dict)")
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
  bind_enums(m);
  bind_pure_functions(m);
  bind_trajectory_class(m);
  bind_controller(m);
}
