// A control law that follows a streamed joint target: a learned policy's action chunks, or single
// targets from teleoperation or a planner at 10–125 Hz, without the trajectory engine.
//
// The law is a ChunkStream (chunk_stream.hpp) evaluated at the controller time of each cycle: chunks
// are placed at their times and single targets at their send stamps plus the sender's interval, both
// on the controller clock, and the command between them is C² (position, velocity and acceleration
// continuous). Because the command is a function of the controller time, a cycle after a lost or
// late-read state gives the command of its own time: nothing falls behind the robot's clock. When
// inputs stop (run out, timeout) or a chunk arrives stale the command brakes to rest within the stop
// accelerations.
//
// Where the stream joins an input from its own state (a stream opened on a motion already under way,
// a first target ahead of the arm, a chunk far off the last), the join may need more acceleration than
// a stop would use: the command then catches up with the stream within the stop accelerations
// (catch_up.hpp) and follows it exactly once on it; counted in catch_ups().
//
// The controller clock for senders: controller_time_s() maps the host's steady clock (Python's
// time.monotonic()) onto the controller time through the smooth line of a clock map fitted to the
// cycles the law ran (clock_map.hpp: continuous, never stepping) — so a sender stamps its targets
// and names its observations in the loop's own time, which runs at the robot's rate, not the host's,
// and stamps taken 8 ms apart stay 8 ms apart (a stamp that steps with the map is a target off its
// neighbours: thousands of rad/s³ at the robot).
//
// Compliance (optional, the constructor with a JtacLaw): the stream's sample (q, dq, ddq) becomes
// the reference of the JTAC controller's external-reference mode
// (joint_trajectory_admittance_controller.hpp), so the stream runs with the same F/T pipeline,
// thresholds and admittance as a goal, from the same code: the admittance set is validated by the
// same intake (same messages, same stability check), each tip's wrench comes from the JtacLaw's
// sources (feed_wrench keeps working), the command is the sample plus the admittance offset, and the
// offset integrates while the stream follows (frozen while it brakes or holds, as during a goal's
// stop or idle). A stop the admittance side asks for (threshold, non-finite reading or offset) brakes
// the stream to rest and latches: later inputs are dropped (a new stream continues); stop_code() says why.
//
// Threads: set_target()/set_chunk() from one writer thread; activate/update/deactivate on the
// controller thread (noexcept, no allocation, no lock); counters and controller_time_s() from any
// thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>

#include "jtac_loop/catch_up.hpp"
#include "jtac_loop/chunk_stream.hpp"
#include "jtac_loop/clock_map.hpp"
#include "jtac_loop/control_law.hpp"

namespace jtac::loop {

/// Follows a streamed joint target (see the top of this file).
class StreamLaw final : public ControlLaw {
 public:
  /// `controller_period_s`: the loop's period (1 / update_rate) [s]; the rest as ChunkStreamConfig's
  /// defaults.
  explicit StreamLaw(double controller_period_s = 0.001);
  explicit StreamLaw(const ChunkStreamConfig& config);
  /// A compliant stream: `admittance`'s tips, joint damping and thresholds (its trajectory is not
  /// read) validated as goal intake validates a goal's; std::invalid_argument with intake's message
  /// when rejected. `jtac` (the loop's JtacLaw: its controller, wrench sources and output) must
  /// outlive this law and is driven by it while it is the active law. Not real-time.
  StreamLaw(const ChunkStreamConfig& config, JtacLaw& jtac, const JtacGoal& admittance);

  /// Writer side: a single target [rad] (and its velocity [rad/s]) sent at controller time `stamp_s`
  /// [s] (controller_time_s() when it was sent). False (refused, counted) for a non-finite value.
  /// Never waits.
  bool set_target(const JointArray& q_rad, const JointArray& dq_rad_s, double stamp_s) noexcept;
  /// The same without a velocity (the stream derives it from the targets' times).
  bool set_target(const JointArray& q_rad, double stamp_s) noexcept;

  /// Writer side: an action chunk, times on the controller clock [s]; `dq_rad_s` empty = no velocities.
  /// False (refused, counted) where validate_chunk() has a message. Never waits.
  bool set_chunk(std::span<const double> times_s, std::span<const JointArray> q_rad,
                 std::span<const JointArray> dq_rad_s) noexcept;
  /// Why set_chunk() would refuse these ("" when valid). Not real-time.
  std::string validate_chunk(std::span<const double> times_s, std::span<const JointArray> q_rad,
                             std::span<const JointArray> dq_rad_s) const {
    return stream_.validate_chunk(times_s, q_rad, dq_rad_s);
  }

  /// The controller time now [s], from the host's steady clock through the fitted clock map's smooth
  /// line (clock_map.hpp). NaN before the first cycle.
  double controller_time_s() const noexcept;

  void activate(const DeviceState& state, const LawHandover& from) noexcept override;
  void deactivate(double time_s) noexcept override;
  UpdateStatus update(const DeviceState& state, double time_s, double period_s,
                      LawOutput& out) noexcept override;
  /// Closing: inputs in flight and later ones are dropped and the command brakes to rest.
  void begin_handover(double time_s) noexcept override;
  /// Brakes to rest and latches stop_code() INVALID_STATE: later inputs are dropped until the stream
  /// is closed (a stream that outlived its partner arm's fault must be opened anew).
  void brake_for_peer(double time_s) noexcept override;
  /// The stream holds (nothing in force, at rest) and the command is on it.
  bool at_rest() const noexcept override {
    return stream_.state() == StreamState::kHolding && !catch_up_.catching_up();
  }
  void set_stop_accelerations(const JointArray& a_rad_s2) noexcept override {
    stream_.set_stop_accelerations(a_rad_s2);
  }

  /// Writer side: brake to rest now (minimum-time stop within the stop accelerations in force) and
  /// drop the inputs not yet taken; the stream stays open and follows the next input sent after
  /// this call (joined from rest). Never waits; taken at the next cycle.
  void request_brake() noexcept { brake_requests_.fetch_add(1, std::memory_order_acq_rel); }
  /// Brakes taken by the controller thread (request_brake()).
  std::uint64_t brakes_requested() const noexcept { return brakes_taken_.load(std::memory_order_acquire); }
  /// True once the loop began handing over from this stream (it brakes and takes no input).
  bool closing() const noexcept { return closing_.load(std::memory_order_acquire); }

  std::uint64_t targets_taken() const noexcept { return stream_.targets_taken(); }
  /// Single targets that came after, or less than an interval before, their place (ChunkStream).
  std::uint64_t late_targets() const noexcept { return stream_.late_targets(); }
  std::uint64_t chunks_taken() const noexcept { return stream_.chunks_taken(); }
  /// Inputs refused (non-finite, malformed, full queue).
  std::uint64_t targets_refused() const noexcept { return stream_.refused(); }
  std::uint64_t stale_chunks() const noexcept { return stream_.stale_chunks(); }
  std::uint64_t brakes() const noexcept { return stream_.brakes(); }
  /// Times the command caught up with the stream within the stop accelerations (catch_up.hpp): a
  /// join that needed more, e.g. a stream opened on a motion already under way.
  std::uint64_t catch_ups() const noexcept { return catch_up_.catch_ups(); }
  /// True while no input is in force (none since activation, braking or braked to rest).
  bool holding() const noexcept { return stream_.state() != StreamState::kFollowing; }
  StreamState state() const noexcept { return stream_.state(); }
  const ChunkStream& stream() const noexcept { return stream_; }

  /// True when the stream runs with the JTAC controller's admittance side (the compliant constructor).
  bool compliant() const noexcept { return jtac_ != nullptr; }
  /// What intake accepted but warned about in the admittance set ("" when nothing; as
  /// SubmitResult::warning).
  const std::string& admittance_warning() const noexcept { return warning_; }
  /// Why a compliant stream stopped (threshold, non-finite reading or offset); kSuccessful while it
  /// has not. Any thread.
  ResultCode stop_code() const noexcept { return stop_code_.load(std::memory_order_acquire); }

 private:
  // The stream's command at time_s into sample_, caught up with where it needs more than allowed.
  void follow(double time_s) noexcept;
  void fill_plain(const DeviceState& state, LawOutput& out) noexcept;

  ChunkStream stream_;
  JtacLaw* jtac_ = nullptr;    // null: no compliance, no F/T pipeline
  AdmittanceGoal admittance_;  // validated at construction
  std::string warning_;
  std::atomic<ResultCode> stop_code_{ResultCode::kSuccessful};
  CatchUp catch_up_;
  StreamSample sample_{};
  JointArray q_cmd_{};
  bool active_ = false;
  std::atomic<bool> closing_{false};
  std::atomic<std::uint64_t> brake_requests_{0};  // request_brake(), any writer
  std::atomic<std::uint64_t> brakes_taken_{0};    // controller thread
  ClockMap clock_;                                // host time → controller time, for controller_time_s()
};

}  // namespace jtac::loop
