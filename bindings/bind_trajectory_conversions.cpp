// The conversions bind_common.hpp declares, shared by every binding file: strict joint vectors,
// numpy output and number lists. Every array is converted strictly: one-dimensional, the exact
// number of joints (or at most kMaxJoints where nothing fixes it), otherwise ValueError naming the
// argument. Conversion only: no algorithm here.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>
#include <vector>

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

}  // namespace jtac_python
