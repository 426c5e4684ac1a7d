// A streamed joint target placed at its time on the controller clock: action chunks of a learned
// policy (H future points with times) and single targets (teleoperation, a planner), turned into a
// C² command (position, velocity and acceleration continuous) sampled at any controller time.
//
// The executing future is a list of knots (time, q, dq, ddq) with a quintic Hermite segment between
// two knots: every knot carries the full state, so the command is C² across knots by construction.
// Nothing is ever re-anchored on the measured state or on the cycle an input arrives in; a change of
// the future starts from the command's own state at the current controller time.
//
// Chunk (submit_chunk): times on the controller clock [s], positions, optional velocities. Through
// the chunk's points runs a C² cubic spline (its slopes at the first and last points from the
// parabola through the three nearest points; with velocities given, the accelerations are the
// derivative of the parabola through three neighbouring velocities). Points already in the past when
// the loop takes the chunk are skipped (they only shape the spline). The rest replaces the future:
//   * the blend window runs from the current time t0 to the first chunk point at least
//     `blend_window_s` later (or the chunk's last point, if sooner). Within it the command is
//     (1 − s)·old + s·chunk, s = 10u³ − 15u⁴ + 6u⁵, u = (t − t0)/window: s, s′ and s″ vanish at both
//     ends, so the command leaves the old future and lands on the chunk with continuous velocity and
//     acceleration; an offset Δ between the two costs at most 5.77·Δ/window² of acceleration. The blend
//     is stored as knots at the chunk's points and at quarters of the window.
//   * a chunk that starts after t0 is joined by one quintic from the current state to its first point.
//   * a chunk whose last point is not after the next controller period is stale: the command brakes.
// Temporal ensembling (ensemble_weight < 1): each new chunk's points that the old future still
// covers become ensemble_weight·new + (1 − ensemble_weight)·old, so a chunk k steps old weighs
// ensemble_weight·(1 − ensemble_weight)^k — exponential weights, newest first. Off by default (1).
//
// Single target (submit_target): stamped with the controller time at which it was sent, placed at
// stamp + delay, delay = the sender's interval (smoothed over the stamps) + 3 × the smoothed absolute
// deviation of the intervals (the sender's jitter) + one controller period (a target can reach the
// loop a cycle after it was sent): the next target then normally arrives before the command reaches
// the previous one. The delay is measured over a stream's first four intervals. Afterwards every
// target keeps its own time, stamp + delay, and the delay changes only as a smooth time warp: when a
// target comes with less lead than an interval and a period (the sender's clock and the robot's
// drift apart: franka-sim's stalls and catch-ups, a host-paced sender), the delay grows back to the
// settled lead at a rate that ramps by 0.5 % per target, at most 10 % (the command plays the motion
// up to 10 % slower meanwhile; the rate changes only while the command is on its knots). A target
// that arrives after its place, or less than an interval before it, is not moved: the command, which
// went on along the curve, joins this target's own continuation an interval later. Each target's knot takes
// its velocity and acceleration from the cubic through it and the three targets before it (or its own
// velocity when given), fixed once appended, so a jittered 125 Hz sender yields a smooth command: a target's
// time is its stamp, not its arrival. Of two targets sent within a quarter interval the newer replaces the
// older. A target inside the future of a chunk replaces the future from the current state.
//
// End of the future. After the last knot the command continues at constant acceleration for at most
// `run_out_s`, waiting for the next input; then, or `timeout_s` after the last input arrived, or at a
// stale chunk, it brakes to rest: jtac_core's synchronised minimum-time stop within
// `stop_accelerations_rad_s2` (counted in brakes()). The command is a pure function of the
// controller time and the inputs taken: a lost or late-read state changes nothing.
//
// Threads: submit_chunk()/submit_target() from one writer thread (preallocated mailboxes of jtac_rt:
// a LatestValue for chunks, a ring for targets); reset()/update() on the controller thread; both
// noexcept, no allocation, no lock. Counters from any thread. Construction allocates.
#pragma once

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "franka_hw/device.hpp"
#include "jtac_core/stop_trajectory.hpp"
#include "jtac_loop/device_types.hpp"
#include "jtac_rt/mailbox.hpp"

namespace jtac::loop {

/// A point of the command: position [rad], velocity [rad/s] and acceleration [rad/s²] of each joint.
struct StreamSample {
  JointArray q_rad{};
  JointArray dq_rad_s{};
  JointArray ddq_rad_s2{};
};

/// A knot of the executing future: the command's state at `time_s` on the controller clock [s].
struct StreamKnot {
  double time_s = 0.0;
  StreamSample state{};
};

/// The quintic Hermite segment from knot `a` to knot `b` (a.time_s < b.time_s) at `time_s`,
/// clamped to the segment. Real-time safe.
void sample_quintic(const StreamKnot& a, const StreamKnot& b, double time_s, StreamSample& out) noexcept;

/// The curve through `knots` (sorted by time, n ≥ 1) at `time_s`: the segment's quintic inside,
/// constant acceleration from the nearest end outside. Real-time safe.
void sample_knots(std::span<const StreamKnot> knots, double time_s, StreamSample& out) noexcept;

/// Configuration of a ChunkStream (see the top of this file).
struct ChunkStreamConfig {
  /// The controller period [s].
  double controller_period_s = 0.001;
  /// Most points one chunk may have (storage claimed at construction).
  std::size_t chunk_capacity = 64;
  /// Shortest blend from the executing future into a new chunk [s].
  double blend_window_s = 0.1;
  /// Brake when no input arrived for this long [s].
  double timeout_s = 0.5;
  /// How long the command continues past its last knot, at constant acceleration, before braking [s].
  double run_out_s = 0.02;
  /// Deceleration of each joint when braking [rad/s²] (the controller's stop_accelerations).
  JointArray stop_accelerations_rad_s2 = {5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0};
  /// Weight of the newest chunk where it overlaps the executing future; 1 = no ensembling.
  double ensemble_weight = 1.0;
  /// Sender interval assumed before two single targets were measured [s].
  double initial_interval_s = 0.008;
};

/// What the stream does at the last update.
enum class StreamState : std::uint8_t {
  kHolding,    ///< at rest, nothing in force (none yet, or braked to rest)
  kFollowing,  ///< following chunks or targets
  kBraking,    ///< braking to rest (timeout, run out or stale chunk)
};

/// Follows timed chunks and stamped single targets (see the top of this file).
class ChunkStream {
 public:
  /// Allocates every buffer; std::invalid_argument for a configuration out of range.
  explicit ChunkStream(const ChunkStreamConfig& config = {});

  /// Why a chunk would be refused ("" when it is valid): sizes, times not finite or not strictly
  /// increasing, a non-finite position or velocity (with its point and joint index). Not real-time.
  std::string validate_chunk(std::span<const double> times_s, std::span<const JointArray> q_rad,
                             std::span<const JointArray> dq_rad_s) const;

  /// Writer side: a chunk, times on the controller clock [s]; `dq_rad_s` empty = no velocities.
  /// False (refused, counted, nothing changes) where validate_chunk() has a message. Never waits.
  bool submit_chunk(std::span<const double> times_s, std::span<const JointArray> q_rad,
                    std::span<const JointArray> dq_rad_s) noexcept;

  /// Writer side: a single target [rad] (and its velocity [rad/s] when `dq_rad_s` is not null) sent
  /// at controller time `stamp_s` [s]. False (refused, counted) for a non-finite value or a full
  /// queue. Never waits.
  bool submit_target(const JointArray& q_rad, const JointArray* dq_rad_s, double stamp_s) noexcept;

  /// Controller thread: hold `q_rad` at rest from `time_s` on (inputs not yet taken stay: the next
  /// update() takes them).
  void reset(const JointArray& q_rad, double time_s) noexcept;

  /// Controller thread: brakes to rest from `from` (a command's state) at `time_s` [s] instead of the
  /// future (a command that is not on the stream: catch_up.hpp); it replaces the brake under way,
  /// counted as that one is.
  void brake_from(const StreamSample& from, double time_s) noexcept;

  /// Controller thread: drops the inputs not yet taken.
  void drop_inputs() noexcept;

  /// Controller thread: brakes to rest from the command at `time_s` [s] (counted in brakes(); a
  /// no-op when a brake starts earlier already), e.g. for a stop the caller's safety checks ask for.
  void brake(double time_s) noexcept { brake_at(time_s); }

  /// Controller thread: the deceleration of each joint for the brakes that start from now on
  /// [rad/s²]; an entry that is not finite and > 0 keeps its value.
  void set_stop_accelerations(const JointArray& a_rad_s2) noexcept {
    for (int i = 0; i < kNumJoints; ++i) {
      const double a = a_rad_s2[static_cast<std::size_t>(i)];
      if (std::isfinite(a) && a > 0.0) {
        stop_limits_[i] = a;
      }
    }
  }

  /// Stop accelerations in force [rad/s²].
  JointArray stop_accelerations() const noexcept {
    JointArray a{};
    for (int i = 0; i < kNumJoints; ++i) {
      a[static_cast<std::size_t>(i)] = stop_limits_[i];
    }
    return a;
  }

  /// Whether the command at `time_s` [s] is in a join (a blend into a chunk, the quintic to a chunk's
  /// or a first target's point, the first targets of a stream, whose derivatives lean on the join
  /// point, a late target's join) rather than on the input's own curve.
  bool joining(double time_s) const noexcept { return time_s < join_end_s_; }

  /// Controller thread: takes the inputs that arrived and gives the command at `time_s` [s]
  /// (non-decreasing from call to call).
  void update(double time_s, StreamSample& out) noexcept;

  /// The command the future gives at `time_s` without taking inputs (for tests and tools).
  void sample(double time_s, StreamSample& out) const noexcept;

  StreamState state() const noexcept { return state_.load(std::memory_order_relaxed); }
  std::uint64_t chunks_taken() const noexcept { return chunks_taken_.load(std::memory_order_relaxed); }
  std::uint64_t targets_taken() const noexcept { return targets_taken_.load(std::memory_order_relaxed); }
  /// Inputs refused at submission (non-finite, malformed, full queue).
  std::uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }
  /// Chunks that arrived entirely in the past (each started a brake).
  std::uint64_t stale_chunks() const noexcept { return stale_chunks_.load(std::memory_order_relaxed); }
  /// Times the command began braking while it followed an input (timeout, run out, stale chunk).
  std::uint64_t brakes() const noexcept { return brakes_.load(std::memory_order_relaxed); }
  /// Single targets that reached the loop after, or less than an interval before, their place: the
  /// command went on along the curve and joins theirs an interval later.
  std::uint64_t late_targets() const noexcept { return late_targets_.load(std::memory_order_relaxed); }
  /// The delay at which single targets are placed [s] (stamp + delay).
  double target_delay_s() const noexcept { return target_delay_s_.load(std::memory_order_relaxed); }

  const ChunkStreamConfig& config() const noexcept { return config_; }

 private:
  struct Chunk {
    std::vector<double> times_s;
    std::vector<JointArray> q_rad;
    std::vector<JointArray> dq_rad_s;
    std::size_t size = 0;
    bool has_velocities = false;
    std::uint64_t sequence = 0;
  };
  struct Target {
    JointArray q_rad{};
    JointArray dq_rad_s{};
    bool has_velocity = false;
    double stamp_s = 0.0;
    std::uint64_t sequence = 0;
  };
  // A target placed on the controller clock, for the next targets' derivatives.
  struct Placed {
    double time_s = 0.0;
    JointArray q_rad{};
    JointArray dq_rad_s{};
  };

  void apply_chunk(const Chunk& chunk, double now_s) noexcept;
  void apply_target(const Target& target, double now_s) noexcept;
  // The chunk's spline into chunk_knots_ (positions ensembled with the old future when enabled).
  void build_chunk_curve(const Chunk& chunk, double now_s) noexcept;
  void blend_state(double time_s, double start_s, double window_s, StreamSample& out) const noexcept;
  // Makes scratch_ the executing future and plans the brake at its end.
  void commit(std::size_t count, double now_s) noexcept;
  // Starts braking at `time_s` from the future's state there (no-op when it brakes earlier already).
  void brake_at(double time_s) noexcept;
  void update_interval(double stamp_s) noexcept;
  // The delay a stream settles on: the sender's interval, 3 × its jitter and a controller period [s].
  double settled_delay_s() const noexcept;
  // Moves the delay towards a lead of settled_delay_s() when the target with `stamp_s` [s] came with
  // less than an interval and a period of lead at `now_s` [s], at a rate that changes smoothly.
  void adapt_delay(double stamp_s, double since_last_stamp_s, double now_s) noexcept;
  void knot_derivatives(const Target& target, StreamKnot& knot) const noexcept;
  void remember(const StreamKnot& knot) noexcept;

  ChunkStreamConfig config_;
  LatestValue<Chunk> chunks_;
  SpscRing<Target, 64> targets_;
  std::uint64_t sequence_ = 0;  // writer side

  std::vector<StreamKnot> knots_;  // the executing future
  std::size_t num_knots_ = 0;
  std::vector<StreamKnot> scratch_;      // the next future, while it is built
  std::vector<StreamKnot> chunk_knots_;  // the taken chunk's curve
  std::size_t num_chunk_knots_ = 0;
  std::vector<JointArray> chunk_q_;  // ensembled positions, spline scratch
  std::vector<double> spline_c_;
  std::vector<double> spline_d_;
  double brake_start_s_ = 0.0;  // braking from here on (the stop below)
  StopTrajectory stop_;
  JointVector stop_q_ = JointVector::Zero(kNumJoints);
  JointVector stop_v_ = JointVector::Zero(kNumJoints);
  JointVector stop_a_ = JointVector::Zero(kNumJoints);
  JointVector stop_limits_ = JointVector::Zero(kNumJoints);
  bool brake_counted_ = true;  // the brake that starts at brake_start_s_ is counted (or was a rest)
  double last_input_s_ = 0.0;
  double join_end_s_ = 0.0;  // the command is in a join before this time

  // Single targets: the last three placed, the sender's interval and jitter.
  static constexpr int kHistory = 3;
  Placed placed_[kHistory];
  int num_placed_ = 0;
  bool has_stamp_ = false;
  double last_stamp_s_ = 0.0;
  double interval_s_ = 0.0;
  double jitter_s_ = 0.0;
  std::uint64_t intervals_ = 0;
  // The delay follows the sender's interval and jitter for the first intervals of a stream, then
  // changes only slowly: a target's time is its stamp shifted by the delay, and a shift that jumped
  // from one target to the next would move targets against their positions (by the jump × speed; a
  // C² curve through them turns 1 µrad of that into ~100 rad/s³ at 8 ms spacing). It grows when
  // targets come with too little lead, at a rate that ramps up and down (a smooth time warp).
  static constexpr int kSettlingIntervals = 4;
  static constexpr double kWarpRateChange = 0.005;  // change of the warp rate per target [-]
  static constexpr double kMaxWarp = 0.1;           // largest warp rate [s of delay per s of stamps]
  int intervals_since_restart_ = 0;
  double delay_s_ = 0.0;
  double delay_goal_s_ = 0.0;
  double warp_rate_ = 0.0;

  std::atomic<StreamState> state_{StreamState::kHolding};
  std::atomic<std::uint64_t> chunks_taken_{0};
  std::atomic<std::uint64_t> targets_taken_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::atomic<std::uint64_t> stale_chunks_{0};
  std::atomic<std::uint64_t> brakes_{0};
  std::atomic<double> target_delay_s_{0.0};
  std::atomic<std::uint64_t> late_targets_{0};
};

}  // namespace jtac::loop
