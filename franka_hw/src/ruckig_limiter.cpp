#include "franka_hw/ruckig_limiter.hpp"
#include "jtac_rt/numeric.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

// Ruckig's community build (jtac::ruckig, cmake/JtacRuckig.cmake): state-to-state trajectories in
// fixed arrays; WITH_CLOUD_CLIENT is not defined.
#include <ruckig/ruckig.hpp>

#if defined(JTAC_RUCKIG_IOS_INIT_SHIM)
// libruckig.a (GCC >= 13) refers to this libstdc++ >= 13 symbol from <iostream>; this libstdc++ has
// none and initialises the streams by itself (cmake/JtacRuckig.cmake). An empty definition resolves it.
namespace std {
void ios_base_library_init() {}
}  // namespace std
#endif

namespace jtac::hw {

namespace {

using jtac::all_finite;

// A joint that cannot join its target within this much of the horizon counts as limited [s] (above
// Ruckig's own time precision, 1e-12 s).
constexpr double kReachedToleranceS = 1e-9;

}  // namespace

// One joint's problem at a time: each joint is limited on its own (MotionLimiter's semantics), and
// with one degree of freedom Ruckig honours minimum_duration per joint (with several, only a
// synchronised trajectory would).
struct RuckigLimiter::Solver {
  ruckig::Ruckig<1> ruckig;  // non-throwing: errors come back as ruckig::Result
  ruckig::InputParameter<1> input;
  ruckig::Trajectory<1> trajectory;
};

RuckigLimiter::RuckigLimiter(double period_s, double margin, const JointLimits& limits)
    : solver_(std::make_shared<Solver>()),
      period_s_(period_s > 0.0 && std::isfinite(period_s) ? period_s : 0.001),
      margin_(margin > 0.0 && margin <= 1.0 ? margin : 0.8) {
  for (int i = 0; i < kNumJoints; ++i) {
    limits_.dq_max_rad_s[i] = margin_ * limits.dq_max_rad_s[i];
    limits_.ddq_max_rad_s2[i] = margin_ * limits.ddq_max_rad_s2[i];
    limits_.dddq_max_rad_s3[i] = margin_ * limits.dddq_max_rad_s3[i];
  }
  limits_.position_based_velocity_limits = limits.position_based_velocity_limits;
  limits_.q_min_rad = limits.q_min_rad;
  limits_.q_max_rad = limits.q_max_rad;
  limits_.velocity_offset_rad_s = limits.velocity_offset_rad_s;
  limits_.deceleration_limit_rad_s2 = limits.deceleration_limit_rad_s2;
  for (int i = 0; i < kNumJoints; ++i) {
    const double d = limits.deceleration_limit_rad_s2[i];
    envelope_[i] = limits.position_based_velocity_limits && d > 0.0 && std::isfinite(d) &&
                   limits.q_min_rad[i] < limits.q_max_rad[i] &&
                   std::isfinite(limits.velocity_offset_rad_s[i]);
    // As MotionLimiter: following the envelope's braking curve needs at most the acceleration bound.
    envelope_decel_rad_s2_[i] =
        envelope_[i] ? std::min(d, limits_.ddq_max_rad_s2[i] / (margin_ * margin_)) : 0.0;
  }
  ruckig::InputParameter<1>& in = solver_->input;
  in.synchronization = ruckig::Synchronization::Time;
  in.duration_discretization = ruckig::DurationDiscretization::Continuous;
  in.min_velocity.emplace();
}

void RuckigLimiter::reset(const JointArray& q_rad) noexcept {
  q_ = q_rad;
  v_.fill(0.0);
  a_.fill(0.0);
  v_plan_rad_s_.fill(0.0);
  a_plan_rad_s2_.fill(0.0);
}

void RuckigLimiter::extrapolate(std::uint64_t periods) noexcept {
  if (periods == 0) {
    return;
  }
  for (std::uint64_t k = 0; k < periods; ++k) {
    for (int i = 0; i < kNumJoints; ++i) {
      v_[i] += a_[i] * period_s_;
      q_[i] += v_[i] * period_s_;
    }
  }
  // On a path of constant acceleration a whose backward difference over the last period is v, the
  // velocity at its end is v + a·T/2: the state the next plan starts from.
  for (int i = 0; i < kNumJoints; ++i) {
    v_plan_rad_s_[i] = v_[i] + 0.5 * a_[i] * period_s_;
    a_plan_rad_s2_[i] = a_[i];
  }
}

double RuckigLimiter::step_s(std::uint64_t periods) const noexcept {
  return static_cast<double>(std::max<std::uint64_t>(periods, 1)) * period_s_;
}

double RuckigLimiter::envelope_speed(int i, double s_rad) const noexcept {
  // MotionLimiter's S(s) = m·max(0, min(dq_max, √(2·d_e·s) − c) − tol) (rate_matching.hpp).
  const double root = std::sqrt(2.0 * envelope_decel_rad_s2_[i] * std::max(s_rad, 0.0));
  const double dq_max = limits_.dq_max_rad_s[i] / margin_;
  return margin_ * std::max(0.0, std::min(dq_max, root - limits_.velocity_offset_rad_s[i]) -
                                     kJointVelocityLimitsToleranceRadS);
}

void RuckigLimiter::advance(int i, double dt_s) noexcept {
  const double v_diff = (next_q_[i] - q_[i]) / dt_s;
  a_[i] = (v_diff - v_[i]) / dt_s;
  v_[i] = v_diff;
  q_[i] = next_q_[i];
  v_plan_rad_s_[i] = next_v_[i];
  a_plan_rad_s2_[i] = next_a_[i];
}

bool RuckigLimiter::step(const JointArray& q_target_rad, const JointArray& dq_target_rad_s,
                         std::uint64_t periods) noexcept {
  if (!all_finite(q_target_rad) || !all_finite(dq_target_rad_s)) {
    return brake(periods);
  }
  const double dt = step_s(periods);
  const double horizon_s = std::max(static_cast<double>(kHorizonPeriods) * period_s_, dt);
  const double lead_s = horizon_s - dt;  // the target is where the reference should be after dt
  bool limited = false;
  for (int i = 0; i < kNumJoints; ++i) {
    double v_hi = limits_.dq_max_rad_s[i];
    double v_lo = -v_hi;
    double q_hi = std::numeric_limits<double>::infinity();
    double q_lo = -q_hi;
    if (envelope_[i]) {
      // The envelope as this step's velocity bound, at the reference's position; a target no
      // further out than where the bound reaches zero (or than the reference, started beyond it).
      v_hi = std::min(v_hi, envelope_speed(i, limits_.q_max_rad[i] - q_[i]));
      v_lo = std::max(v_lo, -envelope_speed(i, q_[i] - limits_.q_min_rad[i]));
      const double c = limits_.velocity_offset_rad_s[i] + kJointVelocityLimitsToleranceRadS;
      const double rest_rad = c * c / (2.0 * envelope_decel_rad_s2_[i]);
      q_hi = std::max(limits_.q_max_rad[i] - rest_rad, q_[i]);
      q_lo = std::min(limits_.q_min_rad[i] + rest_rad, q_[i]);
    }
    // The target's state a horizon ahead (its velocity held, Ruckig's target velocity within the
    // bounds), to be reached no sooner than that: Ruckig then joins the target's motion instead of
    // reaching it dead-beat within the step, which resampled every step rings at the limits.
    double v_f = std::clamp(dq_target_rad_s[i], v_lo, v_hi);
    double q_f = q_target_rad[i] + v_f * lead_s;
    if (q_f > q_hi || q_f < q_lo) {
      q_f = std::clamp(q_f, q_lo, q_hi);  // come to rest there
      v_f = 0.0;
    }
    limited = step_joint(i, q_f, v_f, v_lo, v_hi, horizon_s, dt) || limited;
  }
  for (int i = 0; i < kNumJoints; ++i) {
    advance(i, dt);
  }
  return limited;
}

bool RuckigLimiter::step_joint(int i, double q_f_rad, double dq_f_rad_s, double v_lo, double v_hi,
                               double horizon_s, double dt_s) noexcept {
  Solver& s = *solver_;
  ruckig::InputParameter<1>& in = s.input;
  in.control_interface = ruckig::ControlInterface::Position;
  in.current_position[0] = q_[i];
  in.current_velocity[0] = v_plan_rad_s_[i];
  in.current_acceleration[0] = a_plan_rad_s2_[i];
  in.target_position[0] = q_f_rad;
  in.target_velocity[0] = dq_f_rad_s;
  in.target_acceleration[0] = 0.0;
  in.max_velocity[0] = v_hi;
  (*in.min_velocity)[0] = v_lo;
  in.max_acceleration[0] = limits_.ddq_max_rad_s2[i];
  in.max_jerk[0] = limits_.dddq_max_rad_s3[i];
  // Arrive no sooner than the horizon, later only where the limits say so.
  in.minimum_duration = horizon_s;
  ruckig::Result result = s.ruckig.calculate(in, s.trajectory);
  if (result != ruckig::Result::Working) {
    in.minimum_duration.reset();  // the time-optimal trajectory
    result = s.ruckig.calculate(in, s.trajectory);
  }
  if (result != ruckig::Result::Working) {
    // Ruckig 0.19's first step misses some profiles whose target velocity lies exactly on the
    // velocity bound (about 1 step in 20,000 of the random-steps test, ErrorExecutionTimeCalculation):
    // a target velocity a millionth inside finds them.
    in.target_velocity[0] = dq_f_rad_s * (1.0 - 1e-6);
    result = s.ruckig.calculate(in, s.trajectory);
  }
  if (result != ruckig::Result::Working) {
    ++solver_errors_;
    brake_joint(i, dt_s);
    return true;
  }
  s.trajectory.at_time(dt_s, next_q_[i], next_v_[i], next_a_[i]);
  return s.trajectory.get_independent_min_durations()[0] > horizon_s + kReachedToleranceS;
}

bool RuckigLimiter::brake(std::uint64_t periods) noexcept {
  const double dt = step_s(periods);
  bool limited = false;
  for (int i = 0; i < kNumJoints; ++i) {
    limited = brake_joint(i, dt) || limited;
  }
  for (int i = 0; i < kNumJoints; ++i) {
    advance(i, dt);
  }
  return limited;
}

bool RuckigLimiter::brake_joint(int i, double dt_s) noexcept {
  Solver& s = *solver_;
  ruckig::InputParameter<1>& in = s.input;
  in.control_interface = ruckig::ControlInterface::Velocity;
  in.current_position[0] = q_[i];
  in.current_velocity[0] = v_plan_rad_s_[i];
  in.current_acceleration[0] = a_plan_rad_s2_[i];
  in.target_velocity[0] = 0.0;
  in.target_acceleration[0] = 0.0;
  in.max_acceleration[0] = limits_.ddq_max_rad_s2[i];
  in.max_jerk[0] = limits_.dddq_max_rad_s3[i];
  in.minimum_duration.reset();
  if (s.ruckig.calculate(in, s.trajectory) != ruckig::Result::Working) {
    // Never seen; keep the acceleration (the robot's own substitute for a lost waypoint).
    ++solver_errors_;
    const double a = a_plan_rad_s2_[i];
    next_a_[i] = a;
    next_v_[i] = v_plan_rad_s_[i] + a * dt_s;
    next_q_[i] = q_[i] + (v_plan_rad_s_[i] + 0.5 * a * dt_s) * dt_s;
    return true;
  }
  s.trajectory.at_time(dt_s, next_q_[i], next_v_[i], next_a_[i]);
  return s.trajectory.get_duration() > dt_s + kReachedToleranceS;
}

}  // namespace jtac::hw
