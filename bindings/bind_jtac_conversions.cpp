// The composed controller's binding conversions (bind_jtac.hpp): strict fixed-size arrays, poses
// (a 4x4 homogeneous matrix, or a pair (xyz [m], quaternion [x, y, z, w]) in ROS geometry_msgs order,
// not normalised: one not of unit length gives a matrix the goal validation refuses as "not a finite
// rigid transform"), wrenches as (tips, 6) arrays, and the tips' and tip frames' readers. Conversion
// only.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bind_jtac.hpp"

namespace jtac_python {

/// An array's shape as Python prints it: "(3,)", "(4, 4)".
std::string shape_text(const py::array& a) {
  std::string text = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    text += (d == 0 ? "" : ", ") + std::to_string(a.shape(d));
  }
  return text + (a.ndim() == 1 ? ",)" : ")");
}

/// Any object as an array of doubles; ValueError naming `name` when it is not numeric.
InputArray input_array(const py::handle& obj, const std::string& name) {
  try {
    return obj.cast<InputArray>();
  } catch (const py::cast_error&) {
    throw std::invalid_argument(name + " must be an array of numbers, got " +
                                std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
  }
}

/// A 4x4 homogeneous matrix as an isometry (the rotation is not checked here: the core does).
Eigen::Isometry3d isometry(const InputArray& a, const std::string& name) {
  const Eigen::Matrix4d m = fixed_matrix<4, 4>(a, name);
  if (m(3, 0) != 0.0 || m(3, 1) != 0.0 || m(3, 2) != 0.0 || m(3, 3) != 1.0) {
    throw std::invalid_argument(name + ": the last row of a 4x4 pose must be [0 0 0 1]");
  }
  Eigen::Isometry3d T;
  T.matrix() = m;
  return T;
}

/// A pose from None (identity), a 4x4 matrix, or a pair (xyz, quaternion [x y z w]).
Eigen::Isometry3d pose_from(const py::handle& obj, const std::string& name) {
  if (obj.is_none()) {
    return Eigen::Isometry3d::Identity();
  }
  if ((py::isinstance<py::tuple>(obj) || py::isinstance<py::list>(obj)) && py::len(obj) == 2) {
    const auto pair = obj.cast<py::sequence>();
    const Eigen::Vector3d xyz = fixed_vector<3>(input_array(pair[0], name + " xyz"), name + " xyz");
    const Eigen::Vector4d xyzw =
        fixed_vector<4>(input_array(pair[1], name + " quaternion"), name + " quaternion [x y z w]");
    // The homogeneous form of the rotation (w² + x² − y² − z² on the diagonal, not 1 − 2(y² + z²)):
    // it equals the rotation for a unit quaternion and is |q|² times it otherwise, so a quaternion
    // that is not of unit length (even a scaled identity) is refused by the goal validation instead
    // of being normalised or read as a different rotation.
    const double x = xyzw[0], y = xyzw[1], z = xyzw[2], w = xyzw[3];
    Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
    T.linear() << w * w + x * x - y * y - z * z, 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),  //
        2.0 * (x * y + w * z), w * w - x * x + y * y - z * z, 2.0 * (y * z - w * x),            //
        2.0 * (x * z - w * y), 2.0 * (y * z + w * x), w * w - x * x - y * y + z * z;
    T.translation() = xyz;
    return T;
  }
  return isometry(input_array(obj, name), name);
}

/// A matrix as a new row-major 2-D numpy array.
py::array_t<double> matrix_array(const Eigen::Ref<const Eigen::MatrixXd>& m) {
  py::array_t<double> a({static_cast<py::ssize_t>(m.rows()), static_cast<py::ssize_t>(m.cols())});
  auto aa = a.mutable_unchecked<2>();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      aa(r, c) = m(r, c);
    }
  }
  return a;
}

/// The first `num_tips` wrenches as a (num_tips, 6) array.
py::array_t<double> wrenches_array(const jtac::TipWrenches& w, int num_tips) {
  py::array_t<double> a({static_cast<py::ssize_t>(num_tips), static_cast<py::ssize_t>(6)});
  auto aa = a.mutable_unchecked<2>();
  for (int k = 0; k < num_tips; ++k) {
    for (int i = 0; i < 6; ++i) {
      aa(k, i) = w[static_cast<std::size_t>(k)][i];
    }
  }
  return a;
}

/// A sequence of booleans as a vector (None = empty); ValueError naming `name` otherwise.
std::vector<bool> bool_list(const py::handle& value, const std::string& name) {
  if (value.is_none()) {
    return {};
  }
  try {
    return value.cast<std::vector<bool>>();
  } catch (const py::cast_error&) {
    throw std::invalid_argument(name + " must be a sequence of booleans, got " +
                                std::string(py::str(py::type::handle_of(value).attr("__name__"))));
  }
}

/// TipGoals from None (none) or a sequence of TipGoals; TypeError naming the tip otherwise.
std::vector<jtac::TipGoal> tip_goals_from(const py::handle& obj) {
  std::vector<jtac::TipGoal> tips;
  if (obj.is_none()) {
    return tips;
  }
  std::size_t i = 0;
  for (const auto& item : obj) {
    if (!py::isinstance<jtac::TipGoal>(item)) {
      throw py::type_error("tips[" + std::to_string(i) + "] must be a TipGoal, got " +
                           std::string(py::str(py::type::handle_of(item).attr("__name__"))));
    }
    tips.push_back(item.cast<jtac::TipGoal>());
    ++i;
  }
  return tips;
}

/// TipFrames from a sequence of TipFrames or (sensor_frame, ee_frame) pairs.
std::vector<jtac::TipFrames> tip_frames_from(const py::handle& obj) {
  std::vector<jtac::TipFrames> tips;
  std::size_t i = 0;
  for (const auto& item : obj) {
    if (py::isinstance<jtac::TipFrames>(item)) {
      tips.push_back(item.cast<jtac::TipFrames>());
    } else {
      const std::string where = "tips[" + std::to_string(i) + "]";
      try {
        const auto pair = item.cast<std::pair<std::string, std::string>>();
        tips.push_back({pair.first, pair.second});
      } catch (const py::cast_error&) {
        throw std::invalid_argument(where + " must be a TipFrames or a pair (sensor_frame, ee_frame)");
      }
    }
    ++i;
  }
  return tips;
}

}  // namespace jtac_python
