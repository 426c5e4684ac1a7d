// Fixed-size array conversions shared by the franka_hw and jtac_loop binding files (bind_hw*.cpp,
// bind_loop*.cpp): a Python array of exactly N numbers <-> std::array<double, N>. Conversion only.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "bind_common.hpp"

namespace jtac_python {

template <std::size_t N>
inline std::array<double, N> fixed(const InputArray& a, const char* name) {
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
inline py::array_t<double> array_of(const std::array<double, N>& v) {
  return py::array_t<double>(static_cast<py::ssize_t>(N), v.data());
}

}  // namespace jtac_python
