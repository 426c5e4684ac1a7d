// The conversions bind_common.hpp declares, shared by every binding file: strict joint vectors,
// numpy output, number lists and the trajectory-goal reader. Every array is converted strictly:
// one-dimensional, the exact number of joints (or at most kMaxJoints where nothing fixes it),
// otherwise ValueError naming the argument. Conversion only: no algorithm here.
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
