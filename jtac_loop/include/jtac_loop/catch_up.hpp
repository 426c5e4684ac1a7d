// A command that catches up with a reference it cannot follow at once, within the stop accelerations.
//
// A stream's command (chunk_stream.hpp) is C² within itself, but where it joins a new input from its
// own state — a stream opened while the policy's motion is already under way, a first target ahead
// of the arm, a chunk far off the one before — the join may ask for far more acceleration than a stop
// would use (from rest onto 0.5 rad/s over a 0.1 s blend: 2·1.875·0.5/0.1 ≈ 19 rad/s²), and the limiter
// works at its own bounds, where one lost packet is a reflex. CatchUp sits after the stream: while the
// reference r stays within bounds it passes r through unchanged (bit for bit); when r would need more
// it follows r with a tracking law instead, and passes r through again once it is on r.
//
// Bounds, per joint, a = the stop acceleration in force (CatchUpBound): in a join of the stream, a
// (or the acceleration the command already had, when more), changing by at most the jerk below per
// cycle; in its brake or at rest, the brake's own deceleration (a brake keeps the stop accelerations
// it began with); on the input's own curve (whose accelerations are the sender's business), a quarter
// of a more than the curve's own acceleration. The tracking law, with e = c − r and ė = ċ − ṙ:
//   ė* = −sign(e)·min(λ|e|, √(a|e|), v_max)   the approach: linear near r, decelerating at a/2 far off
//   c̈  = clamp(r̈ + 4λ·(ė* − ė), ±bound), changing by at most jerk·dt per cycle
// Near r this is critically damped (e decays as (1 + 2λt)·e^(−2λt)); far off, c̈ stays within the
// bound, so the command never runs away, whatever r does. The error is integrated on r's own sampled
// motion (c = r + e), so a smooth r is followed exactly and e decays to zero; a step or a kink of r
// (more than kRebaseRad off the trapezoid of its velocities over a cycle) becomes error instead of
// motion. A cycle that comes several periods late (states lost) is caught up in steps of one period
// along the cubic Hermite through the reference's two samples: the command is the one the cycles in
// between would have given (what the hardware thread extrapolated meanwhile). Catching up ends when
// every joint is within kOnReferenceRad and kOnReferenceRadS of r: the step to r is then below any
// bound (1 nrad in 1 ms is 1 µrad/s). A stream opened on a 0.28–0.35 rad/s motion at a = 2 rad/s² is
// on it within 2 s (test_catch_up.cpp). ease() brings the acceleration to zero at the jerk (before
// a brake from the command's own state: StreamLaw).
//
// Real-time: reset() and update() on the controller thread, noexcept, no allocation; catch_ups() from
// any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "jtac_loop/chunk_stream.hpp"

namespace jtac::loop {

/// Which bound the reference's motion is held to (see the top of this file).
enum class CatchUpBound : std::uint8_t {
  kInput,  ///< r is the input's own curve: a quarter of a more than r̈
  kStop,   ///< r joins an input: a, and the catch-up's jerk
  kBrake,  ///< r brakes or holds: its own deceleration, or a when more
};

/// Tuning of CatchUp (see the top of this file).
struct CatchUpConfig {
  /// λ: the approach rate near the reference [1/s] (the error's time constant is 1/(2λ)).
  double rate_per_s = 10.0;
  /// Most relative speed of the approach [rad/s].
  double max_speed_rad_s = 1.0;
  /// Most change of the commanded acceleration while catching up [rad/s³] (the FR3 allows 5000).
  double jerk_rad_s3 = 1000.0;
  /// The controller period [s]: a later cycle is caught up in steps of it.
  double period_s = 0.001;
};

/// Passes a reference through, or catches up with it within bounds (see the top of this file).
class CatchUp {
 public:
  /// Within these of the reference on every joint, catching up ends [rad], [rad/s].
  static constexpr double kOnReferenceRad = 1e-9;
  static constexpr double kOnReferenceRadS = 1e-7;
  /// A reference that moves more than this off the trapezoid of its velocities in a cycle stepped
  /// (or kinked) [rad]: a smooth curve stays below it up to a jerk of ~10^3 rad/s³ at 1 kHz.
  static constexpr double kRebaseRad = 1e-7;

  explicit CatchUp(const CatchUpConfig& config = {}) noexcept : config_(config) {}

  /// Starts at `q_rad` at rest at `time_s`, passing through.
  void reset(const JointArray& q_rad, double time_s) noexcept;

  /// The command at `time_s` (non-decreasing) for the reference `ref` (in: r, out: the command);
  /// `stop_accelerations_rad_s2`: a per joint [rad/s²].
  void update(double time_s, CatchUpBound kind, const JointArray& stop_accelerations_rad_s2,
              StreamSample& ref) noexcept;

  /// While catching up: the command at `time_s` with its acceleration eased towards zero at the
  /// jerk, into `out`; true once it is zero on every joint (then, e.g., brake from `out`).
  bool ease(double time_s, StreamSample& out) noexcept;

  /// The reference is now the last command (the caller moved it there): passing through again.
  void rejoin() noexcept {
    reference_ = command_;
    catching_up_ = false;
  }

  /// True while the command is not on the reference.
  bool catching_up() const noexcept { return catching_up_; }
  /// Times catching up began since construction. Any thread.
  std::uint64_t catch_ups() const noexcept { return catch_ups_.load(std::memory_order_relaxed); }
  /// The last command.
  const StreamSample& command() const noexcept { return command_; }

 private:
  // Whether the reference's motion over the last cycle fits its bound on every joint.
  bool fits(const StreamSample& ref, double dt_s, CatchUpBound kind, const JointArray& a) const noexcept;
  // One cycle of the tracking law on joint j.
  void track(const StreamSample& ref, double dt_s, CatchUpBound kind, double a, std::size_t j) noexcept;
  bool on(const StreamSample& ref) const noexcept;
  // The cubic Hermite through samples a and b, span_s apart, at fraction s ∈ [0, 1].
  static void hermite(const StreamSample& a, const StreamSample& b, double s, double span_s,
                      StreamSample& out) noexcept;

  CatchUpConfig config_;
  StreamSample command_{};
  StreamSample reference_{};   // the last reference
  JointArray accel_rad_s2_{};  // the command's mean acceleration over the last cycle
  double time_s_ = 0.0;
  bool catching_up_ = false;
  std::atomic<std::uint64_t> catch_ups_{0};
};

}  // namespace jtac::loop
