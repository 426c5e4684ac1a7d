// Minimum-time stop from a moving command, within per-joint deceleration limits.
//
// Every joint decelerates at a constant rate chosen so that all joints reach zero velocity at the
// same instant T = max_i |v_i| / a_max_i: the slowest-to-stop joint uses its full
// `stop_accelerations` limit and the others proportionally less. The velocity vector therefore only
// shrinks, v(t) = v0·(1 − t/T), and the arm keeps moving along its current direction of motion while
// it brakes (no curved stopping path, no joint overshooting the others). T is the minimum time any
// synchronised constant-deceleration stop can take under the limits. The acceleration of the last
// command is not carried over (a step in acceleration): position-controlled drives and franka_hw's
// jerk limiter absorb it. Real-time safe.
#pragma once

#include <cmath>

#include "jtac_core/types.hpp"

namespace jtac {

/// A synchronised constant-deceleration stop.
class StopTrajectory {
 public:
  /// Plans the stop from position q0 [rad] and velocity v0 [rad/s] with per-joint deceleration
  /// limits a_max [rad/s², > 0]. Non-finite or non-positive limits are treated as "stop at once".
  void start(const JointVector& q0_rad, const JointVector& v0_rad_s,
             const JointVector& a_max_rad_s2) noexcept {
    q0_rad_ = q0_rad;
    v0_rad_s_ = v0_rad_s;
    duration_s_ = 0.0;
    for (Eigen::Index i = 0; i < v0_rad_s.size(); ++i) {
      const double a = a_max_rad_s2[i];
      const double t_i = (std::isfinite(a) && a > 0.0) ? std::abs(v0_rad_s[i]) / a : 0.0;
      duration_s_ = t_i > duration_s_ ? t_i : duration_s_;
    }
    if (!(duration_s_ > 0.0)) {
      v0_rad_s_.setZero();
    }
  }

  /// Position, velocity and acceleration t_s [s] after the start; at rest from duration() on.
  void sample(double t_s, JointVector& q_rad, JointVector& v_rad_s, JointVector& a_rad_s2) const noexcept {
    if (!(duration_s_ > 0.0)) {
      q_rad = q0_rad_;
      v_rad_s.setZero(q0_rad_.size());
      a_rad_s2.setZero(q0_rad_.size());
      return;
    }
    const double t = t_s < 0.0 ? 0.0 : (t_s > duration_s_ ? duration_s_ : t_s);
    const double k = t - 0.5 * t * t / duration_s_;  // ∫0^t (1 − τ/T) dτ
    q_rad = q0_rad_ + v0_rad_s_ * k;
    v_rad_s = v0_rad_s_ * (1.0 - t / duration_s_);
    if (t_s < duration_s_) {
      a_rad_s2 = -v0_rad_s_ / duration_s_;
    } else {
      a_rad_s2.setZero(q0_rad_.size());
    }
  }

  /// Time to standstill [s].
  double duration() const noexcept { return duration_s_; }

  /// Where the arm comes to rest [rad].
  JointVector final_position() const noexcept { return q0_rad_ + v0_rad_s_ * (0.5 * duration_s_); }

 private:
  JointVector q0_rad_ = JointVector::Zero(0);
  JointVector v0_rad_s_ = JointVector::Zero(0);
  double duration_s_ = 0.0;
};

}  // namespace jtac
