// Conversions shared by the composed controller's binding files (bind_jtac*.cpp): fixed-size vectors,
// matrices and poses with strict shapes, wrenches as arrays, and the tip frames' reader; and the parts
// bind_jtac() registers. Conversion only: no algorithm here.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "jtac_core/joint_trajectory_admittance_controller.hpp"

#include "bind_common.hpp"

namespace jtac_python {

/// An array's shape as Python prints it: "(3,)", "(4, 4)".
std::string shape_text(const py::array& a);

/// Any object as an array of doubles; ValueError naming `name` when it is not numeric.
InputArray input_array(const py::handle& obj, const std::string& name);

/// A 1-D array of exactly N entries as a fixed-size vector.
template <int N>
Eigen::Matrix<double, N, 1> fixed_vector(const InputArray& a, const std::string& name) {
  if (a.ndim() != 1 || a.shape(0) != N) {
    throw std::invalid_argument(name + " must have shape (" + std::to_string(N) + ",), got " + shape_text(a));
  }
  Eigen::Matrix<double, N, 1> v;
  for (int i = 0; i < N; ++i) {
    v[i] = a.data()[i];
  }
  return v;
}

/// A 2-D array of exactly Rows x Cols entries as a fixed-size matrix.
template <int Rows, int Cols>
Eigen::Matrix<double, Rows, Cols> fixed_matrix(const InputArray& a, const std::string& name) {
  if (a.ndim() != 2 || a.shape(0) != Rows || a.shape(1) != Cols) {
    throw std::invalid_argument(name + " must have shape (" + std::to_string(Rows) + ", " +
                                std::to_string(Cols) + "), got " + shape_text(a));
  }
  Eigen::Matrix<double, Rows, Cols> m;
  for (int r = 0; r < Rows; ++r) {
    for (int c = 0; c < Cols; ++c) {
      m(r, c) = a.data()[r * Cols + c];  // c_style: row-major
    }
  }
  return m;
}

/// A 4x4 homogeneous matrix as an isometry (the rotation is not checked here: the core does).
Eigen::Isometry3d isometry(const InputArray& a, const std::string& name);

/// A pose from None (identity), a 4x4 matrix, or a pair (xyz [m], quaternion [x y z w]).
Eigen::Isometry3d pose_from(const py::handle& obj, const std::string& name);

/// A fixed-size vector as a new 1-D numpy array.
template <int N>
py::array_t<double> vector_array(const Eigen::Matrix<double, N, 1>& v) {
  return py::array_t<double>(static_cast<py::ssize_t>(N), v.data());
}

/// A matrix as a new row-major 2-D numpy array.
py::array_t<double> matrix_array(const Eigen::Ref<const Eigen::MatrixXd>& m);

/// The first `num_tips` wrenches as a (num_tips, 6) array.
py::array_t<double> wrenches_array(const jtac::TipWrenches& w, int num_tips);

/// A sequence of booleans as a vector (None = empty); ValueError naming `name` otherwise.
std::vector<bool> bool_list(const py::handle& value, const std::string& name);

/// TipFrames from a sequence of TipFrames or (sensor_frame, ee_frame) pairs.
std::vector<jtac::TipFrames> tip_frames_from(const py::handle& obj);

/// The parts bind_jtac() registers, in this order (each in its own bind_jtac_*.cpp).
void bind_signal_processing(py::module_& m);   // bind_jtac_signal_processing.cpp
void bind_jtac_configuration(py::module_& m);  // bind_jtac_configuration.cpp
void bind_jtac_goals(py::module_& m);          // bind_jtac_goals.cpp

}  // namespace jtac_python
