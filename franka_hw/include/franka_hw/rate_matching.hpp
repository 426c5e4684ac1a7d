// Rate matching between a controller that runs at its own rate (1 kHz down to 125 Hz, jittered) and
// a device that takes one command per 1 ms packet; and the final jerk/acceleration/velocity limiter.
// Both are pure: no threads, no clocks, no allocation, nothing throws. The recipe: ramp with the
// measured velocity, anchor on the robot's echoed q_d, time the feed-forward out, finish with a
// limiter with margin (franka_hw/README.md).
//
// Time. The position-domain reference advances by exactly one device period per packet: every
// RateMatcher::next() and MotionLimiter::step() is one period, whatever the host clock or the
// controller's timestamps say. The only use of time between controller samples is the velocity
// estimate (v = Δq / measured interval), see RateMatcher.
#pragma once

#include <array>
#include <cstdint>

#include "franka_hw/device.hpp"
#include "franka_hw/joint_limits.hpp"

namespace jtac::hw {

/// Per-joint velocity/acceleration/jerk limiter on a position reference, one device period a step.
///
/// State per joint: position q, velocity v, acceleration a of the reference. Each step chooses the
/// new acceleration a' (then v' = v + a'·T, q' = q + v'·T) as close as possible to the wish of a
/// tracking law, inside the intersection of
///   jerk:          |a' − a| ≤ j·T,
///   acceleration:  |a'| ≤ a_max,
///   velocity:      |v'| ≤ v_max, and v' ± a'·|a'|/(2j) within ±v_max (the acceleration can still be
///                  brought to zero at full jerk before the velocity bound is crossed),
/// with every limit = published limit × margin. If the previous step satisfied these, the next one
/// always has a solution (braking at full jerk is one), so the three bounds hold at every step.
///
/// Position-based envelope (JointLimits::position_based_velocity_limits; the FR3): the velocity
/// toward a range end must also stay under S(s) = m·max(0, min(dq_max, √(2·d_e·s) − c) − tol), s the
/// distance to that end, m the margin, d_e = min(d, b/m²), b = the acceleration bound (a_max ×
/// margin): S ≤ m × the robot's envelope (d_e ≤ d; equal where d_e = d, all FR3 joints but 5 and 7),
/// and S is a braking curve no steeper than b: following it never asks for more deceleration than b
/// (d(S²)/ds ≤ 2·m²·d_e ≤ 2b). Since the jerk bound turns the acceleration only gradually, a state
/// is admitted only when the braking manoeuvre "turn the acceleration to −b at full jerk, then hold
/// −b" stays under S throughout: with v_pk = v + max(a, 0)²/(2j) (the velocity's peak while the
/// acceleration turns) and τ = max(0, (a + b)/j) (the turn's duration),
///   v_pk ≤ S(s − τ·max(v_pk, 0)),
/// checked on the state after the step (v' = v + a'T, q' = q + v'T) and turned into the largest (for
/// the upper end; smallest for the lower) admissible a' by bisection (it is monotone in a'). One
/// step of that manoeuvre keeps the condition true (the turn's peak and its remaining reach only
/// shrink; while holding −b, v² falls by 2b per rad and S² by at most as much), and it satisfies the
/// constant bounds too, so a solution still always exists, and v' ≤ S(s') ≤ m·v_upper(q') at every
/// step. S is 0 within (c + tol)²/(2·d_e) of the range end: the reference never gets closer, and a
/// target beyond it is approached asymptotically (from a start there, only moving away is allowed).
/// The tracking law: the velocity wish is the target's velocity plus a correction of the position
/// error (e/(2T) when small — dead-beat e/T with the jerk bound in the loop falls into a limit cycle
/// of a few 10 µrad around a held target — and a braking curve at half the acceleration limit when
/// large); the
/// acceleration wish reaches that velocity, capped on the jerk-limited braking curve so that the
/// velocity does not overshoot. A smooth target within the limits passes through unchanged.
class MotionLimiter {
 public:
  /// `period_s` > 0: the device period; `margin` in (0, 1]: fraction of `limits` used.
  explicit MotionLimiter(double period_s = 0.001, double margin = 0.8,
                         const JointLimits& limits = kFr3Limits) noexcept;

  /// The reference at q_rad, at rest. Real-time safe.
  void reset(const JointArray& q_rad) noexcept;

  /// Moves the reference on over `periods` device periods at constant acceleration (v += a·T,
  /// q += v·T each): what Franka's control substitutes for waypoints it did not receive.
  /// Real-time safe.
  void extrapolate(std::uint64_t periods) noexcept;

  /// One step toward `q_target_rad` (where the reference should be after this step) moving at
  /// `dq_target_rad_s`. Returns true when a limit changed the result (a limiter activation).
  /// Non-finite targets are treated as braking. Real-time safe.
  /// `periods` > 1 takes one step of that many device periods (T' = periods·T: a' within j·T' of
  /// a, v' = v + a'·T', q' = q + v'·T'): what a robot that differences this command against our
  /// previous one over T' sees as a bounded velocity, acceleration and jerk (see AsyncInterface).
  bool step(const JointArray& q_target_rad, const JointArray& dq_target_rad_s,
            std::uint64_t periods = 1) noexcept;

  /// One step decelerating toward rest wherever the reference is (no position target); `periods`
  /// as in step(). Returns true when a limit shaped the result. Real-time safe.
  bool brake(std::uint64_t periods = 1) noexcept;

  /// The reference after the last step [rad], its velocity [rad/s] and acceleration [rad/s²].
  const JointArray& q_rad() const noexcept { return q_; }
  const JointArray& dq_rad_s() const noexcept { return v_; }
  const JointArray& ddq_rad_s2() const noexcept { return a_; }

  /// The limits in force: velocity, acceleration and jerk published × margin; the envelope's fields
  /// as given (the margin applies to the velocity they yield).
  const JointLimits& limits() const noexcept { return limits_; }
  double period_s() const noexcept { return period_s_; }
  double margin() const noexcept { return margin_; }

 private:
  bool step_joint(int i, double a_wish, double dt_s) noexcept;
  double acceleration_wish(int i, double v_wish, double dt_s) const noexcept;
  double step_s(std::uint64_t periods) const noexcept;
  double envelope_speed(int i, double s_rad) const noexcept;
  double end_excess(int i, double a_new, double dt_s, double toward) const noexcept;

  double period_s_;
  double margin_;
  JointLimits limits_{};
  // Per joint: whether the envelope applies, and its braking curve's d_e [rad/s²] (see above).
  std::array<bool, kNumJoints> envelope_{};
  JointArray envelope_decel_rad_s2_{};
  JointArray q_{};
  JointArray v_{};
  JointArray a_{};
};

/// A controller sample: where the controller wants the arm, and the controller's own time stamp.
struct CommandSample {
  JointArray q_rad{};
  JointArray dq_rad_s{};
  double controller_time_s = 0.0;
  /// The device tick of the state the sample was computed from (a controller that reads the
  /// device's states knows it), or kUnknownTick: then the sample is taken as computed from the
  /// state one tick before its arrival.
  std::uint64_t source_tick = kUnknownTick;
  /// The controller's nominal period [s] (a fixed-rate loop knows it), or 0: then the rate matcher
  /// estimates it from the arrivals.
  double nominal_interval_s = 0.0;

  static constexpr std::uint64_t kUnknownTick = ~std::uint64_t{0};
};

/// True when every value of the sample is finite.
bool is_finite(const CommandSample& sample) noexcept;

/// Configuration of a RateMatcher.
struct RateMatcherConfig {
  /// The device period T [s].
  double period_s = 0.001;
  /// Hold (brake to rest) when no sample came for this many measured controller intervals, and for
  /// at least hold_after_min_s.
  double hold_after_intervals = 2.0;
  /// The shortest time without a sample before a hold [s]: a 1 kHz controller thread that a loaded
  /// host holds up 2–3 ms goes on along the reconstruction instead of making the reference brake at
  /// the limiter's bounds and catch up again when its samples resume (on franka-sim under 1 % loss:
  /// the limiter at its jerk bound for ~30 packets, then a reflex). 10 ms of constant acceleration
  /// past the last sample is what a 125 Hz controller's 2 D = 16 ms already allows.
  double hold_after_min_s = 0.01;
  /// Interval assumed for the first sample (nothing measured yet) [s].
  double initial_interval_s = 0.008;
  /// Weight of each new interval in the smoothed controller interval D (1: the last one only).
  double interval_smoothing = 0.05;
  /// Longest D [device periods].
  double max_ramp_periods = 64.0;
  /// The controller's time stamps give the interval only while they agree with the device's own
  /// count of ticks between the arrivals within this factor (stamp/ticks in [1/f, f]).
  double stamp_agreement_factor = 2.0;
};

/// What the rate matcher wants the reference to do at the next packet.
struct RateTarget {
  JointArray q_rad{};
  JointArray dq_rad_s{};
  /// True when no sample is in force (none yet, or timed out): brake to rest, ignore q/dq.
  bool hold = true;
};

/// Turns controller samples at any rate into one target per device packet.
///
/// On a sample (on_sample()): the interval since the previous sample is measured in device time:
/// between the ticks the samples were computed from when the controller says (source_tick), else
/// between the arrivals (ticks × T), or by the controller's stamps when they agree with that (they
/// carry the sampling instant, free of the delivery jitter); v = Δq / interval. D, the delay of the
/// reconstruction in packets, is the controller's nominal interval when it gives one, else the
/// smoothed measured interval (intervals that timed out excluded). At the packet of tick τ the
/// target is
///   sample + v·(τ − τ_s − D)·T + e·(1 − S(min(k/D, 1))),   e = q_d_echo − (sample + v·(τ_a − 1 − τ_s −
///   D)·T),
/// τ_s the sample's source tick (its arrival tick τ_a − 1 when unknown), k = τ − τ_a + 1 packets
/// since the arrival: the trajectory delayed by one controller interval, continued at the measured
/// velocity, and starting from the robot's echoed desired position (the anchor, the command of tick
/// τ_a − 1), whose offset e is ramped out over D packets (a quintic smoothstep). When the last two
/// intervals were both measured between source ticks or agreeing stamps, the straight line is the parabola
/// through the last two samples with the acceleration of the last three (see reconstruction()). Placing the
/// sample at its source tick rather than at its arrival keeps the reconstruction on the trajectory's time
/// when a state was lost or read late and the sample arrives a tick late or early (a 1 kHz law: the target is
/// exactly the sample of the tick before, whatever the arrivals did). With a steady controller e = 0 and the
/// anchor is the previous sample: a 125 Hz staircase becomes one riser spread over 8 packets at the measured
/// velocity. With a jittered one an early or late sample only changes e, not the slope by the ratio of the
/// intervals. After hold_after_intervals · D packets (and hold_after_min_s) without a sample the feed-forward
/// times out: hold, the limiter brakes to rest. A non-finite sample is refused (the previous one stays in
/// force).
class RateMatcher {
 public:
  explicit RateMatcher(const RateMatcherConfig& config = {}) noexcept;

  /// Forgets every sample (the next target holds). Real-time safe.
  void reset() noexcept;

  /// Takes the newest controller sample, arrived when the device was at `tick`, with the robot's
  /// echo `q_d_echo_rad` as the ramp's anchor. False (and nothing changes) for a non-finite sample
  /// or anchor. Real-time safe.
  bool on_sample(const CommandSample& sample, const JointArray& q_d_echo_rad, std::uint64_t tick) noexcept;

  /// The target of the next packet; advances the reference time by `periods` device periods: one
  /// per packet, more when the robot's time skipped (a lost or late-read state: the robot
  /// substituted those cycles, and the reconstruction must not fall behind its clock).
  /// Real-time safe.
  void next(RateTarget& target, std::uint64_t periods = 1) noexcept;

  /// Device periods the reference advanced since reset; the reference time is packets() · T.
  std::uint64_t packets() const noexcept { return packets_; }
  /// Reference time [s] = packets() · period_s, never host time.
  double reference_time_s() const noexcept { return static_cast<double>(packets_) * config_.period_s; }
  /// The interval measured at the last sample [s], and whether the stamps gave it.
  double last_interval_s() const noexcept { return interval_s_; }
  bool last_interval_from_stamps() const noexcept { return interval_from_stamps_; }
  /// Packets since the last sample (0 right after on_sample()).
  std::uint64_t packets_since_sample() const noexcept { return since_sample_; }
  /// True while the feed-forward is timed out (or no sample came yet).
  bool holding() const noexcept { return holding_; }

  const RateMatcherConfig& config() const noexcept { return config_; }

 private:
  double reconstruction(int i, double after_sample_s) const noexcept;

  RateMatcherConfig config_;
  bool has_sample_ = false;
  bool holding_ = true;
  CommandSample sample_{};
  std::uint64_t sample_tick_ = 0;    // arrival tick τ_a
  std::uint64_t source_tick_ = 0;    // τ_s
  bool had_source_tick_ = false;     // whether the previous sample carried its source tick
  double source_lag_packets_ = 0.0;  // τ_a − 1 − τ_s
  bool interval_exact_ = false;      // the last interval was measured between source ticks or agreeing stamps
  bool accel_valid_ = false;         // and so was the one before: a_meas_ holds
  JointArray a_meas_{};              // [rad/s²], from the last two intervals' velocities
  JointArray anchor_offset_{};
  JointArray v_meas_{};
  double delay_packets_ = 1.0;
  double interval_s_ = 0.0;
  bool interval_from_stamps_ = false;
  std::uint64_t since_sample_ = 0;
  std::uint64_t packets_ = 0;
};

}  // namespace jtac::hw
