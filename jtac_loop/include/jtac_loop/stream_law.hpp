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
// The controller clock for senders: controller_time_s() maps the host's steady clock (Python's
// time.monotonic()) onto the controller time, from the cycles the law ran — so a sender stamps its
// targets and names its observations in the loop's own time.
//
// Threads: set_target()/set_chunk() from one writer thread; activate/update/deactivate on the
// controller thread (noexcept, no allocation, no lock); counters and controller_time_s() from any
// thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>

#include "jtac_loop/chunk_stream.hpp"
#include "jtac_loop/control_law.hpp"

namespace jtac::hw {

/// Follows a streamed joint target (see the top of this file).
class StreamLaw final : public ControlLaw {
 public:
  /// `controller_period_s`: the loop's period (1 / update_rate) [s]; the rest as ChunkStreamConfig's
  /// defaults.
  explicit StreamLaw(double controller_period_s = 0.001);
  explicit StreamLaw(const ChunkStreamConfig& config);

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

  /// The controller time now [s]: the last cycle's time plus the host's steady time since, with the
  /// offset between the two clocks smoothed over the cycles. NaN before the first cycle.
  double controller_time_s() const noexcept;

  void activate(const DeviceState& state) noexcept override;
  void deactivate(double time_s) noexcept override;
  UpdateStatus update(const DeviceState& state, double time_s, double period_s,
                      LawOutput& out) noexcept override;

  std::uint64_t targets_taken() const noexcept { return stream_.targets_taken(); }
  std::uint64_t chunks_taken() const noexcept { return stream_.chunks_taken(); }
  /// Inputs refused (non-finite, malformed, full queue).
  std::uint64_t targets_refused() const noexcept { return stream_.refused(); }
  std::uint64_t stale_chunks() const noexcept { return stream_.stale_chunks(); }
  std::uint64_t brakes() const noexcept { return stream_.brakes(); }
  /// True while no input is in force (none since activation, braking or braked to rest).
  bool holding() const noexcept { return stream_.state() != StreamState::kFollowing; }
  StreamState state() const noexcept { return stream_.state(); }
  const ChunkStream& stream() const noexcept { return stream_; }

 private:
  ChunkStream stream_;
  StreamSample sample_{};
  JointArray q_cmd_{};
  bool active_ = false;
  // Host steady time − controller time [ns], smoothed; INT64_MIN until the first cycle.
  std::atomic<std::int64_t> clock_offset_ns_{INT64_MIN};
};

}  // namespace jtac::hw
