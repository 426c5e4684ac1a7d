// Forward kinematics and frame Jacobians of one serial chain, from a URDF.
//
// Pinocchio stays behind this interface (src/kinematics.cpp is the only translation unit that
// includes it): instantiating its algorithms costs ~30 s and 2 GB of compiler per file.
// configure() builds the model and every buffer; the evaluation methods are real-time safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jtac_core/types.hpp"

namespace jtac {

/// Status of a real-time kinematics call.
enum class KinematicsStatus {
  kOk,
  kNotConfigured,
  kSizeMismatch,  ///< q has a different number of entries than the configured joints
  kNonFinite,     ///< q contains NaN or Inf
};

/// Kinematics of the chain from `base_frame` to any frame of the URDF, over the named joints.
class Kinematics {
 public:
  Kinematics();
  ~Kinematics();
  Kinematics(const Kinematics&) = delete;
  Kinematics& operator=(const Kinematics&) = delete;
  Kinematics(Kinematics&&) noexcept;
  Kinematics& operator=(Kinematics&&) noexcept;

  /// Builds the model from URDF text; joints not named are locked at zero. Not real-time.
  /// Throws std::invalid_argument naming the unknown joint or frame, or the URDF error.
  void configure(const std::string& urdf_xml, const std::string& base_frame,
                 const std::vector<std::string>& joint_names);

  /// Index of a frame for the evaluation methods. Not real-time; throws naming an unknown frame.
  int frame_index(const std::string& frame_name) const;

  /// Pose of `frame` in the base frame at joint positions `q_rad`. Real-time safe.
  KinematicsStatus forward(const JointVector& q_rad, int frame,
                           Eigen::Isometry3d& T_base_frame) const noexcept;

  /// Jacobian of `frame`'s origin, [v; ω] expressed in the base frame. Real-time safe.
  KinematicsStatus jacobian(const JointVector& q_rad, int frame, Jacobian& J_base_frame) const noexcept;

  /// forward() and jacobian() at the same configuration in one kinematics pass. Real-time safe.
  KinematicsStatus forward_and_jacobian(const JointVector& q_rad, int frame, Eigen::Isometry3d& T_base_frame,
                                        Jacobian& J_base_frame) const noexcept;

  /// Number of controlled joints.
  int num_joints() const noexcept;

  /// True once configure() succeeded.
  bool configured() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jtac
