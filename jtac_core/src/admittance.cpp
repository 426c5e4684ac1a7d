#include "jtac_core/admittance.hpp"

#include <Eigen/Cholesky>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace jtac {

namespace {

// Regularisation of the null-space projector [m²]: negligible against any usable σ².
constexpr double kProjectorEpsilon = 1e-12;

// Skew-symmetric matrix of v: skew(v)·w = v × w.
Eigen::Matrix3d skew(const Eigen::Vector3d& v) noexcept {
  Eigen::Matrix3d m;
  m << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
  return m;
}

}  // namespace

void Admittance::configure(const Kinematics* kinematics, const std::array<int, kMaxTips>& ee_frames,
                           int num_tips) {
  if (kinematics == nullptr || !kinematics->configured()) {
    throw std::invalid_argument("admittance: kinematics not configured");
  }
  if (num_tips < 0 || num_tips > kMaxTips) {
    throw std::invalid_argument("admittance: " + std::to_string(num_tips) + " tips; at most " +
                                std::to_string(kMaxTips));
  }
  kinematics_ = kinematics;
  ee_frames_ = ee_frames;
  num_tips_ = num_tips;
  num_joints_ = kinematics->num_joints();
  J_.setZero(6 * num_tips_, num_joints_);
  e_ddot_.setZero(6 * num_tips_);
  JJt_.setZero(6 * num_tips_, 6 * num_tips_);
  J_tip_.setZero(6, num_joints_);
  q_current_rad_.setZero(num_joints_);
  goal_ = AdmittanceGoal{};
  clear();
}

void Admittance::clear() noexcept {
  offset_rad_.setZero(num_joints_);
  offset_velocity_rad_s_.setZero(num_joints_);
  for (auto& d : displacement_) {
    d.setZero();
  }
  bad_index_ = -1;
}

void Admittance::reset(const AdmittanceGoal& goal) noexcept {
  goal_ = goal;
  offset_velocity_rad_s_.setZero(num_joints_);
}

AdmittanceStatus Admittance::step(double dt_s, const JointVector& q_nominal_rad,
                                  const std::array<Vector6, kMaxTips>& wrench_control,
                                  double jacobian_damping) noexcept {
  if (num_tips_ == 0 || q_nominal_rad.size() != num_joints_) {
    return AdmittanceStatus::kKinematicsFailed;
  }
  constexpr double kOmega = 2.0 * std::numbers::pi * kHoldFrequencyHz;
  q_current_rad_ = q_nominal_rad + offset_rad_;
  // At the nominal configuration the displacement is zero, not the rounding of R·Rᵀ (~1e-16 rad):
  // with no offset, no offset velocity and no wrench the integrator then stays exactly at rest.
  const bool at_nominal = (offset_rad_.array() == 0.0).all();
  const int tips = goal_.num_tips < num_tips_ ? goal_.num_tips : num_tips_;
  J_.setZero(6 * num_tips_, num_joints_);
  e_ddot_.setZero(6 * num_tips_);
  for (int k = 0; k < num_tips_; ++k) {
    const auto tip = static_cast<std::size_t>(k);
    const int frame = ee_frames_[tip];
    const TipAdmittance& p = goal_.tips[tip];
    const Eigen::Isometry3d T_ee_control = k < tips ? p.T_ee_control : Eigen::Isometry3d::Identity();
    Eigen::Isometry3d T_base_ee_nominal;
    Eigen::Isometry3d T_base_ee_current;
    if (kinematics_->forward(q_nominal_rad, frame, T_base_ee_nominal) != KinematicsStatus::kOk ||
        kinematics_->forward_and_jacobian(q_current_rad_, frame, T_base_ee_current, J_tip_) !=
            KinematicsStatus::kOk) {
      return AdmittanceStatus::kKinematicsFailed;
    }
    const Eigen::Isometry3d T_nominal = T_base_ee_nominal * T_ee_control;
    const Eigen::Isometry3d T_current = T_base_ee_current * T_ee_control;
    const Eigen::Matrix3d R_control_base = T_current.linear().transpose();
    // Displacement of the current control frame from the nominal one, in current control axes.
    Vector6 e = Vector6::Zero();
    if (!at_nominal) {
      const Eigen::AngleAxisd rotation(T_current.linear() * T_nominal.linear().transpose());
      e.head<3>() = R_control_base * (T_current.translation() - T_nominal.translation());
      e.tail<3>() = R_control_base * (rotation.angle() * rotation.axis());
    }
    displacement_[tip] = e;
    // Jacobian of the control-frame origin (the ee Jacobian is of the ee origin, base axes),
    // rotated into control axes.
    const Eigen::Vector3d lever_base = T_current.translation() - T_base_ee_current.translation();
    auto rows = J_.middleRows(6 * k, 6);
    rows.topRows(3) = R_control_base * (J_tip_.topRows(3) - skew(lever_base) * J_tip_.bottomRows(3));
    rows.bottomRows(3) = R_control_base * J_tip_.bottomRows(3);
    const Vector6 e_dot = rows * offset_velocity_rad_s_;
    for (int a = 0; a < 6; ++a) {
      const auto axis = static_cast<std::size_t>(a);
      const bool compliant = k < tips && p.selected[axis];
      e_ddot_[6 * k + a] =
          compliant ? (wrench_control[tip][a] - p.damping[a] * e_dot[a] - p.stiffness[a] * e[a]) / p.mass[a]
                    : -(2.0 * kOmega * e_dot[a] + kOmega * kOmega * e[a]);
    }
  }
  // Damped least squares: q̈ = Jᵀ (J Jᵀ + λ² I)⁻¹ ë.
  JJt_.noalias() = J_ * J_.transpose();
  JJt_.diagonal().array() += jacobian_damping * jacobian_damping;
  const Eigen::LDLT<StackedSquare> ldlt(JJt_);
  const StackedVector y = ldlt.solve(e_ddot_);
  JointVector q_ddot = J_.transpose() * y - goal_.joint_damping_per_s * offset_velocity_rad_s_;
  // The tips constrain at most 6 Cartesian directions each; what the joints can do without moving
  // them (the null space, e.g. a 7-DOF elbow) would drift freely. A critically damped joint-space
  // spring projected into that null space, N = I − J⁺J, returns the offset there to zero.
  constexpr double kNullOmega = 2.0 * std::numbers::pi * kNullSpaceFrequencyHz;
  // N·w = w − J⁺(J·w) with an almost undamped J⁺ = Jᵀ(JJᵀ + εI)⁻¹: the projector's eigenvalues
  // σ²/(σ² + ε) lie in [0, 1) for any ε > 0, so N stays a contraction at singularities, while the
  // motion's λ (which would let the spring leak into the tips' directions) is not used here.
  JJt_.diagonal().array() += kProjectorEpsilon - jacobian_damping * jacobian_damping;
  const Eigen::LDLT<StackedSquare> projector_ldlt(JJt_);
  const JointVector spring =
      -(kNullOmega * kNullOmega) * offset_rad_ - 2.0 * kNullOmega * offset_velocity_rad_s_;
  const StackedVector J_spring = J_ * spring;
  q_ddot += spring - J_.transpose() * projector_ldlt.solve(J_spring);
  JointVector velocity = offset_velocity_rad_s_ + q_ddot * dt_s;
  JointVector offset = offset_rad_ + velocity * dt_s;
  for (int j = 0; j < num_joints_; ++j) {
    if (!std::isfinite(velocity[j]) || !std::isfinite(offset[j])) {
      bad_index_ = j;
      return AdmittanceStatus::kNonFinite;
    }
  }
  offset_velocity_rad_s_ = velocity;
  offset_rad_ = offset;
  return AdmittanceStatus::kOk;
}

}  // namespace jtac
