// The only jtac_core translation unit that includes Pinocchio (see kinematics.hpp for why).
#include "jtac_core/kinematics.hpp"

#include <cmath>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/algorithm/model.hpp>
#include <pinocchio/multibody/data.hpp>
#include <pinocchio/multibody/model.hpp>
#include <pinocchio/parsers/urdf.hpp>
#include <stdexcept>

namespace jtac {

struct Kinematics::Impl {
  pinocchio::Model model;
  // mutable: evaluation is logically const; Data is scratch memory sized once at configure().
  mutable pinocchio::Data data;
  // Pinocchio's own joint-space buffers, sized at configure so evaluation never resizes them.
  mutable Eigen::VectorXd q_pin;
  mutable pinocchio::Data::Matrix6x J_world;
  // Pinocchio's configuration index (idx_q) of each controlled joint, in the caller's order.
  std::vector<int> q_index;
  std::vector<int> v_index;
  // True for a continuous joint, which Pinocchio stores as (cos θ, sin θ).
  std::vector<bool> unbounded;
  pinocchio::FrameIndex base_frame = 0;
  int num_joints = 0;

  // Writes the controlled joints' positions into Pinocchio's configuration vector.
  void set_configuration(const JointVector& q_rad) const noexcept {
    for (int i = 0; i < num_joints; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (unbounded[k]) {
        q_pin[q_index[k]] = std::cos(q_rad[i]);
        q_pin[q_index[k] + 1] = std::sin(q_rad[i]);
      } else {
        q_pin[q_index[k]] = q_rad[i];
      }
    }
  }
};

Kinematics::Kinematics() = default;
Kinematics::~Kinematics() = default;
Kinematics::Kinematics(Kinematics&&) noexcept = default;
Kinematics& Kinematics::operator=(Kinematics&&) noexcept = default;

void Kinematics::configure(const std::string& urdf_xml, const std::string& base_frame,
                           const std::vector<std::string>& joint_names) {
  if (joint_names.empty()) {
    throw std::invalid_argument("kinematics: no joints given");
  }
  if (joint_names.size() > static_cast<std::size_t>(kMaxJoints)) {
    throw std::invalid_argument("kinematics: " + std::to_string(joint_names.size()) +
                                " joints exceed the capacity of " + std::to_string(kMaxJoints));
  }
  pinocchio::Model full;
  try {
    pinocchio::urdf::buildModelFromXML(urdf_xml, full);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("kinematics: cannot parse the URDF: ") + e.what());
  }
  for (const auto& name : joint_names) {
    if (!full.existJointName(name)) {
      throw std::invalid_argument("kinematics: joint '" + name + "' is not in the URDF");
    }
    if (full.joints[full.getJointId(name)].nv() != 1) {
      throw std::invalid_argument("kinematics: joint '" + name + "' is not a 1-DOF joint");
    }
  }
  // Lock every joint that is not controlled (fingers, a second arm) at its neutral value.
  std::vector<pinocchio::JointIndex> locked;
  for (pinocchio::JointIndex j = 1; j < full.joints.size(); ++j) {
    bool controlled = false;
    for (const auto& name : joint_names) {
      controlled = controlled || full.names[j] == name;
    }
    if (!controlled) {
      locked.push_back(j);
    }
  }
  auto impl = std::make_unique<Impl>();
  impl->model = locked.empty() ? full : pinocchio::buildReducedModel(full, locked, pinocchio::neutral(full));
  if (!impl->model.existFrame(base_frame)) {
    throw std::invalid_argument("kinematics: base frame '" + base_frame + "' is not in the URDF");
  }
  impl->base_frame = impl->model.getFrameId(base_frame);
  impl->data = pinocchio::Data(impl->model);
  impl->q_pin = pinocchio::neutral(impl->model);
  impl->J_world = pinocchio::Data::Matrix6x::Zero(6, impl->model.nv);
  for (const auto& name : joint_names) {
    const auto id = impl->model.getJointId(name);
    impl->q_index.push_back(impl->model.joints[id].idx_q());
    impl->v_index.push_back(impl->model.joints[id].idx_v());
    impl->unbounded.push_back(impl->model.joints[id].nq() == 2);
  }
  impl->num_joints = static_cast<int>(joint_names.size());
  impl_ = std::move(impl);
}

int Kinematics::frame_index(const std::string& frame_name) const {
  if (!impl_) {
    throw std::logic_error("kinematics: frame_index() before configure()");
  }
  if (!impl_->model.existFrame(frame_name)) {
    throw std::invalid_argument("kinematics: frame '" + frame_name + "' is not in the URDF");
  }
  return static_cast<int>(impl_->model.getFrameId(frame_name));
}

namespace {

KinematicsStatus check_input(const Kinematics& kin, const JointVector& q_rad, int frame,
                             int num_frames) noexcept {
  if (!kin.configured()) {
    return KinematicsStatus::kNotConfigured;
  }
  if (q_rad.size() != kin.num_joints() || frame < 0 || frame >= num_frames) {
    return KinematicsStatus::kSizeMismatch;
  }
  if (!q_rad.allFinite()) {
    return KinematicsStatus::kNonFinite;
  }
  return KinematicsStatus::kOk;
}

}  // namespace

KinematicsStatus Kinematics::forward(const JointVector& q_rad, int frame,
                                     Eigen::Isometry3d& T_base_frame) const noexcept {
  const int num_frames = impl_ ? static_cast<int>(impl_->model.frames.size()) : 0;
  if (const auto status = check_input(*this, q_rad, frame, num_frames); status != KinematicsStatus::kOk) {
    return status;
  }
  auto& m = *impl_;
  m.set_configuration(q_rad);
  pinocchio::forwardKinematics(m.model, m.data, m.q_pin);
  const auto& T_world_base = pinocchio::updateFramePlacement(m.model, m.data, m.base_frame);
  const auto& T_world_frame =
      pinocchio::updateFramePlacement(m.model, m.data, static_cast<pinocchio::FrameIndex>(frame));
  const pinocchio::SE3 T = T_world_base.actInv(T_world_frame);
  T_base_frame.linear() = T.rotation();
  T_base_frame.translation() = T.translation();
  return KinematicsStatus::kOk;
}

KinematicsStatus Kinematics::jacobian(const JointVector& q_rad, int frame,
                                      Jacobian& J_base_frame) const noexcept {
  Eigen::Isometry3d unused;
  return forward_and_jacobian(q_rad, frame, unused, J_base_frame);
}

KinematicsStatus Kinematics::forward_and_jacobian(const JointVector& q_rad, int frame,
                                                  Eigen::Isometry3d& T_base_frame,
                                                  Jacobian& J_base_frame) const noexcept {
  const int num_frames = impl_ ? static_cast<int>(impl_->model.frames.size()) : 0;
  if (const auto status = check_input(*this, q_rad, frame, num_frames); status != KinematicsStatus::kOk) {
    return status;
  }
  auto& m = *impl_;
  m.set_configuration(q_rad);
  // computeJointJacobians also runs the forward kinematics: one pass gives pose and Jacobian.
  pinocchio::computeJointJacobians(m.model, m.data, m.q_pin);
  const auto frame_id = static_cast<pinocchio::FrameIndex>(frame);
  const auto& T_world_base = pinocchio::updateFramePlacement(m.model, m.data, m.base_frame);
  const auto& T_world_frame = pinocchio::updateFramePlacement(m.model, m.data, frame_id);
  const pinocchio::SE3 T = T_world_base.actInv(T_world_frame);
  T_base_frame.linear() = T.rotation();
  T_base_frame.translation() = T.translation();
  m.J_world.setZero();
  // LOCAL_WORLD_ALIGNED: velocity of the frame origin, axes of the world frame.
  pinocchio::getFrameJacobian(m.model, m.data, frame_id, pinocchio::LOCAL_WORLD_ALIGNED, m.J_world);
  const Eigen::Matrix3d R_base_world = T_world_base.rotation().transpose();
  J_base_frame.resize(6, m.num_joints);
  for (int i = 0; i < m.num_joints; ++i) {
    const auto col = m.v_index[static_cast<std::size_t>(i)];
    J_base_frame.block<3, 1>(0, i) = R_base_world * m.J_world.block<3, 1>(0, col);
    J_base_frame.block<3, 1>(3, i) = R_base_world * m.J_world.block<3, 1>(3, col);
  }
  return KinematicsStatus::kOk;
}

int Kinematics::num_joints() const noexcept { return impl_ ? impl_->num_joints : 0; }

bool Kinematics::configured() const noexcept { return impl_ != nullptr; }

}  // namespace jtac
