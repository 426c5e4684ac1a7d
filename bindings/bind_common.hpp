// Conversions shared by the binding files (bind_trajectory.cpp defines them; bind_jtac.cpp uses
// them too): strict array conversion, numpy output, the polled event and the tips' reader, so that
// both controllers take and give the same Python types. Conversion only: no algorithm here.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "jtac_core/events.hpp"
#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "jtac_core/trajectory_controller.hpp"
#include "jtac_core/types.hpp"

namespace jtac_python {

namespace py = pybind11;

/// Any array-like of numbers, converted to contiguous doubles (lists, tuples, int arrays).
using InputArray = py::array_t<double, py::array::c_style | py::array::forcecast>;
/// An optional array argument (None = not given).
using OptionalArray = std::optional<InputArray>;

/// `expected` for joint_vector(): any size up to kMaxJoints.
inline constexpr Eigen::Index kAnySize = -1;

/// A 1-D array of `expected` entries (or at most kMaxJoints for kAnySize) as a JointVector;
/// std::invalid_argument (ValueError) naming `name` otherwise.
jtac::JointVector joint_vector(const InputArray& a, const char* name, Eigen::Index expected);

/// A joint vector as a new 1-D numpy array.
py::array_t<double> to_array(const jtac::JointVector& v);

/// A sequence of numbers as a vector (None = empty); ValueError naming `name` otherwise.
std::vector<double> double_list(const py::handle& value, const std::string& name);

/// Tips' admittance from None (none) or a sequence of TipGoal objects; TypeError naming the tip
/// otherwise (a mapping is turned into TipGoals on the Python side, jtac_py.goals).
std::vector<jtac::TipGoal> tip_goals_from(const py::handle& obj);

/// One event with its message, rendered when it is polled (the joint names are known then).
struct PolledEvent {
  jtac::Event event;
  std::string message;
};

/// The bound JointTrajectoryAdmittanceController with the output it writes every cycle: update()
/// reads the previous cycle's mode from its output, so the same JtacOutput must be passed every cycle
/// (the binding keeps it). The ControlLoop binding drives `core` from its own thread instead.
struct Controller {
  jtac::JointTrajectoryAdmittanceController core;
  jtac::JtacOutput out;
  bool has_sensor = false;
};

}  // namespace jtac_python
