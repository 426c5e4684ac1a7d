// Cartesian admittance of one or more tips, mapped to a joint-space offset.
//
// Per tip and per selected axis of its control frame:  M·ë + D·ė + K·e = F,
// where e is the displacement of the commanded (current) configuration from the nominal
// (trajectory) configuration, expressed in the control frame, and F the external wrench on the
// tool expressed in the control frame (the compensated sensor wrench; the arm yields along it).
// Unselected axes are held on the nominal path by a stiff critically damped spring
// (kHoldFrequencyHz) so that the joint offset, which also moves them through coupling, returns them.
// The stacked Cartesian accelerations of all tips map to joint accelerations by damped least
// squares, q̈ = Jᵀ(J·Jᵀ + λ²·I)⁻¹·ë − joint_damping·q̇, integrated into the per-cycle joint offset
// (semi-implicit Euler). The offset is what TrajectoryController adds to its command (CycleSeams).
// Joint motion that moves no tip (the null space of the stacked Jacobian) is returned to zero by a
// critically damped joint-space spring (kNullSpaceFrequencyHz) projected into that null space.
//
// configure() claims all memory; reset(), step() are real-time safe (noexcept, no allocation).
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "jtac_core/kinematics.hpp"
#include "jtac_core/types.hpp"

namespace jtac {

/// Most tips one controller handles (one stacked 6·kMaxTips-row solve).
inline constexpr int kMaxTips = 4;

/// Admittance parameters of one tip (from the goal). Axes ordered [x y z rx ry rz].
struct TipAdmittance {
  Vector6 mass = Vector6::Ones();       ///< [kg, kg·m²], > 0 on selected axes
  Vector6 stiffness = Vector6::Zero();  ///< [N/m, Nm/rad], >= 0
  Vector6 damping = Vector6::Zero();    ///< [N·s/m, Nm·s/rad], >= 0 (absolute, not a ratio)
  std::array<bool, 6> selected{};       ///< compliant axes of the control frame
  Eigen::Isometry3d T_ee_control = Eigen::Isometry3d::Identity();  ///< control frame in the ee frame
  // Captured with the goal for the force/torque pipeline of this tip:
  double payload_mass_kg = 0.0;                                ///< >= 0; 0 = no gravity compensation
  Eigen::Vector3d payload_cog_ee_m = Eigen::Vector3d::Zero();  ///< in the ee frame [m]
  Vector6 threshold = Vector6::Constant(std::numeric_limits<double>::infinity());  ///< [N, Nm]
};

/// Admittance parameters of a goal: one entry per tip, plus the joint damping.
struct AdmittanceGoal {
  int num_tips = 0;
  std::array<TipAdmittance, kMaxTips> tips{};
  double joint_damping_per_s = 0.0;                    ///< [1/s], >= 0
  Eigen::Vector3d gravity_base_m_s2{0.0, 0.0, -9.81};  ///< captured at acceptance [m/s²]

  /// Stitching may change a tip's payload only if both goals carry none there; returns the first
  /// incompatible tip or −1.
  int first_payload_mismatch(const AdmittanceGoal& next) const noexcept {
    for (int i = 0; i < kMaxTips; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const TipAdmittance& a = tips[k];
      const TipAdmittance& b = next.tips[k];
      if (a.payload_mass_kg == 0.0 && b.payload_mass_kg == 0.0) {
        continue;
      }
      if (a.payload_mass_kg != b.payload_mass_kg || a.payload_cog_ee_m != b.payload_cog_ee_m ||
          gravity_base_m_s2 != next.gravity_base_m_s2) {
        return i;
      }
    }
    return -1;
  }

  /// True when some axis of some tip is compliant.
  bool enabled() const noexcept {
    for (int i = 0; i < num_tips; ++i) {
      for (bool s : tips[static_cast<std::size_t>(i)].selected) {
        if (s) {
          return true;
        }
      }
    }
    return false;
  }
};

/// Status of a step.
enum class AdmittanceStatus : std::uint8_t {
  kOk,
  kNonFinite,         ///< the integrator produced NaN/Inf (component in `bad_index`); state unchanged
  kKinematicsFailed,  ///< forward kinematics or Jacobian refused the input
};

/// The admittance integrator for all tips of one controller.
class Admittance {
 public:
  /// Natural frequency of the spring that keeps unselected axes on the nominal path [Hz].
  static constexpr double kHoldFrequencyHz = 10.0;
  /// Natural frequency of the joint-space spring that returns the offset's null-space part [Hz].
  static constexpr double kNullSpaceFrequencyHz = 1.0;

  /// `kinematics` must outlive this object; `ee_frames` are Kinematics frame indices, one per tip.
  /// Throws std::invalid_argument on more than kMaxTips tips. Not real-time.
  void configure(const Kinematics* kinematics, const std::array<int, kMaxTips>& ee_frames, int num_tips);

  /// New parameters (a new goal): velocity state zeroed; the offset is kept (cutting it would
  /// make the command jump) and returns to the path through the new springs. Real-time safe.
  void reset(const AdmittanceGoal& goal) noexcept;

  /// Zeroes offset and velocity (activation). Real-time safe.
  void clear() noexcept;

  /// One integration step of dt_s [s] about nominal joint positions q_nominal_rad, with the
  /// external wrench of each tip expressed in its control frame. Real-time safe.
  AdmittanceStatus step(double dt_s, const JointVector& q_nominal_rad,
                        const std::array<Vector6, kMaxTips>& wrench_control,
                        double jacobian_damping) noexcept;

  /// Joint offset to add to the nominal command [rad].
  const JointVector& offset() const noexcept { return offset_rad_; }
  /// Its rate [rad/s].
  const JointVector& offset_velocity() const noexcept { return offset_velocity_rad_s_; }
  /// Displacement e of tip `tip` from its nominal pose, in its control frame [m, rad] (last step).
  const Vector6& displacement(int tip) const noexcept { return displacement_[static_cast<std::size_t>(tip)]; }
  /// The component that was not finite after the last kNonFinite step (joint index).
  int bad_index() const noexcept { return bad_index_; }

 private:
  using StackedJacobian =
      Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, 6 * kMaxTips, kMaxJoints>;
  using StackedVector = Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, 6 * kMaxTips, 1>;
  using StackedSquare =
      Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, 6 * kMaxTips, 6 * kMaxTips>;

  const Kinematics* kinematics_ = nullptr;
  std::array<int, kMaxTips> ee_frames_{};
  int num_tips_ = 0;
  int num_joints_ = 0;
  AdmittanceGoal goal_;
  JointVector offset_rad_ = JointVector::Zero(0);
  JointVector offset_velocity_rad_s_ = JointVector::Zero(0);
  std::array<Vector6, kMaxTips> displacement_{};
  int bad_index_ = -1;
  // Scratch, sized at configure.
  StackedJacobian J_;
  StackedVector e_ddot_;
  StackedSquare JJt_;
  Jacobian J_tip_;
  JointVector q_current_rad_ = JointVector::Zero(0);
};

}  // namespace jtac
