// Helpers shared by the trajectory engine's binding files (bind_trajectory*.cpp): joint states and
// scalar samples as Python tuples, and the parts bind_trajectory() registers. Conversion only.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <tuple>

#include "jtac_core/interpolation.hpp"
#include "jtac_core/types.hpp"

#include "bind_common.hpp"

namespace jtac_python {

/// Position, velocity and acceleration as three numpy arrays.
using Triple = std::tuple<py::array_t<double>, py::array_t<double>, py::array_t<double>>;

inline Triple to_triple(const jtac::JointVector& q, const jtac::JointVector& v, const jtac::JointVector& a) {
  return {to_array(q), to_array(v), to_array(a)};
}

inline Triple to_triple(const jtac::JointTrajectoryState& s) {
  return to_triple(s.position_rad, s.velocity_rad_s, s.acceleration_rad_s2);
}

/// (position, velocity, acceleration) as a ScalarSample.
inline jtac::ScalarSample scalar_sample(const std::array<double, 3>& pva) { return {pva[0], pva[1], pva[2]}; }

inline std::tuple<double, double, double> to_tuple(const jtac::ScalarSample& s) {
  return {s.position, s.velocity, s.acceleration};
}

/// The parts bind_trajectory() registers, in this order (each in its own bind_trajectory_*.cpp).
void bind_trajectory_enums(py::module_& m);      // bind_trajectory_enums.cpp
void bind_trajectory_functions(py::module_& m);  // bind_trajectory_functions.cpp
void bind_trajectory_class(py::module_& m);      // bind_trajectory_class.cpp
void bind_trajectory_goals(py::module_& m);      // bind_trajectory_goals.cpp

}  // namespace jtac_python
