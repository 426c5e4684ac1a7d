// The hardware thread's limiter on Ruckig (time-optimal jerk-limited online trajectories, MIT): a
// second implementation of MotionLimiter's interface (rate_matching.hpp), selectable per
// AsyncInterface (AsyncInterfaceConfig::limiter) and measured against MotionLimiter on the same
// inputs by bench/bench_limiters.cpp (results and the choice of default in franka_hw/README.md).
//
// Every step plans each joint on its own (MotionLimiter's semantics; with one degree of freedom
// Ruckig honours a minimum duration per joint): Ruckig's trajectory from the reference's state to
// the target's state kHorizonPeriods ahead (its position moved on at its velocity, zero
// acceleration), arriving no sooner than that horizon, under the FR3 limits × margin; the
// trajectory is sampled one step ahead and replanned at the next. The FR3's position-based velocity
// envelope enters as a per-step velocity bound: the envelope × margin at the reference's position
// (with MotionLimiter's braking curve d_e, see rate_matching.hpp), and a target never beyond where
// that bound reaches zero. Ruckig's compiled solver in its community build (cmake/JtacRuckig.cmake)
// holds fixed arrays only: nothing is allocated after the constructor, and nothing throws (Ruckig's
// non-throwing variant; an error result retries time-optimally, then brakes that joint).
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "franka_hw/device.hpp"
#include "franka_hw/rate_matching.hpp"

namespace jtac::hw {

/// Per-joint velocity/acceleration/jerk limiter on a position reference by Ruckig, one device period
/// a step (or `periods` of them); the operations and their semantics are MotionLimiter's.
///
/// State: the commanded position q, and, as in MotionLimiter, its backward differences over the last
/// step (v = Δq/T', a = Δv/T': what a robot that differences the command sees, and what Franka's
/// control extrapolates a lost waypoint by). Ruckig plans from the continuous state of its last
/// trajectory at q (velocity and acceleration at the sample instant), kept alongside; after
/// extrapolate() (constant acceleration a) that is v + a·T/2 and a.
///
/// Copies share the solver's scratch (Ruckig's one-joint calculator, input and trajectory, a few
/// kB, made by the constructor): a copy costs the state and a reference count, never an allocation,
/// and copies may not step concurrently on different threads. AsyncInterface keeps copies for the
/// robot's possible histories and steps one of them at a time, on its thread.
class RuckigLimiter {
 public:
  /// The horizon the target's state is joined at [device periods]: dead-beat (1) rings at the limits
  /// behind the rate matcher (a 125 Hz stream: lag 26-30 ms, ±8 rad/s² limit cycles); 8 leaves a
  /// µrad creep at rest; 12 and 16 behave alike (bench/bench_limiters.cpp, franka_hw/README.md).
  static constexpr int kHorizonPeriods = 12;

  /// `period_s` > 0: the device period; `margin` in (0, 1]: fraction of `limits` used. Allocates the
  /// solver's scratch: not real-time safe.
  explicit RuckigLimiter(double period_s = 0.001, double margin = 0.8,
                         const JointLimits& limits = kFr3Limits);

  /// The reference at q_rad, at rest. Real-time safe.
  void reset(const JointArray& q_rad) noexcept;

  /// Moves the reference on over `periods` device periods at constant acceleration (v += a·T,
  /// q += v·T each): what Franka's control substitutes for waypoints it did not receive.
  /// Real-time safe.
  void extrapolate(std::uint64_t periods) noexcept;

  /// One step toward `q_target_rad` (where the reference should be after this step) moving at
  /// `dq_target_rad_s`: per joint, Ruckig's trajectory to that motion joined kHorizonPeriods ahead,
  /// sampled `periods` device periods ahead. Returns true when a limit changed the result (some joint
  /// cannot join the target by the horizon). Non-finite targets are treated as braking. Real-time safe.
  bool step(const JointArray& q_target_rad, const JointArray& dq_target_rad_s,
            std::uint64_t periods = 1) noexcept;

  /// One step decelerating toward rest wherever the reference is (Ruckig's velocity interface to
  /// zero velocity and acceleration); `periods` as in step(). Returns true when a limit shaped the
  /// result (not at rest within the step). Real-time safe.
  bool brake(std::uint64_t periods = 1) noexcept;

  /// The reference after the last step [rad], its velocity [rad/s] and acceleration [rad/s²]
  /// (backward differences, as MotionLimiter's).
  const JointArray& q_rad() const noexcept { return q_; }
  const JointArray& dq_rad_s() const noexcept { return v_; }
  const JointArray& ddq_rad_s2() const noexcept { return a_; }

  /// Steps in which Ruckig returned an error (the reference braked instead); 0 in every test.
  std::uint64_t solver_errors() const noexcept { return solver_errors_; }

  /// The limits in force: velocity, acceleration and jerk published × margin; the envelope's fields
  /// as given (the margin applies to the velocity they yield).
  const JointLimits& limits() const noexcept { return limits_; }
  double period_s() const noexcept { return period_s_; }
  double margin() const noexcept { return margin_; }

 private:
  struct Solver;  // Ruckig's calculator, input and trajectory (ruckig_limiter.cpp)

  double step_s(std::uint64_t periods) const noexcept;
  double envelope_speed(int i, double s_rad) const noexcept;
  // Plans joint i to (q_f_rad, dq_f_rad_s, zero acceleration) within [v_lo, v_hi], arriving no
  // sooner than horizon_s, and samples it dt_s ahead into next_*; true when it cannot arrive by then.
  bool step_joint(int i, double q_f_rad, double dq_f_rad_s, double v_lo, double v_hi, double horizon_s,
                  double dt_s) noexcept;
  bool brake_joint(int i, double dt_s) noexcept;
  // Takes joint i's sample next_* after a step of dt_s as the new reference.
  void advance(int i, double dt_s) noexcept;

  std::shared_ptr<Solver> solver_;
  double period_s_;
  double margin_;
  JointLimits limits_{};
  std::array<bool, kNumJoints> envelope_{};
  JointArray envelope_decel_rad_s2_{};
  JointArray q_{};
  JointArray v_{};
  JointArray a_{};
  JointArray v_plan_rad_s_{};                  // Ruckig's continuous state at q_
  JointArray a_plan_rad_s2_{};                 //
  JointArray next_q_{}, next_v_{}, next_a_{};  // the sample one step ahead
  std::uint64_t solver_errors_ = 0;
};

}  // namespace jtac::hw
