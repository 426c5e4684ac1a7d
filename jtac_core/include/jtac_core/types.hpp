// Fixed-capacity types shared by every jtac_core header.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace jtac {

/// Most joints one controller handles; storage for joint vectors is reserved for this many so
/// that nothing on the real-time path allocates. Seven for an FR3, room for a mobile base.
inline constexpr int kMaxJoints = 16;

/// A joint-space vector (one entry per controlled joint) that lives on the stack.
using JointVector = Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kMaxJoints, 1>;

/// A 6 x n Jacobian [linear; angular] with fixed capacity, no heap.
using Jacobian = Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::ColMajor, 6, kMaxJoints>;

/// A Cartesian 6-vector [x y z rx ry rz] (twist, wrench, per-axis gains).
using Vector6 = Eigen::Matrix<double, 6, 1>;

}  // namespace jtac
