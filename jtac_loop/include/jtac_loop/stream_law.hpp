// A control law that follows a streamed joint target: teleoperation, a learned policy or a planner
// sending positions at 10–125 Hz, without the trajectory engine.
//
// The targets arrive through a LatestValue mailbox (the writer never waits; a newer target replaces
// one the loop has not taken). The law reconstructs a smooth command at the controller rate with the
// same RateMatcher the hardware thread uses between the controller and the robot: the target stream
// delayed by one measured interval, moving at the velocity measured between targets, anchored on the
// law's own last command — so the hardware thread receives a stream at the controller's rate, and a
// 125 Hz source reaches the robot as a ramp, not a staircase. When targets stop for
// hold_after_intervals intervals the command holds where it is (velocity zero) and the hardware
// thread's limiter brings the robot to rest.
//
// Threads: set_target() from one writer thread; activate/update/deactivate on the controller
// thread (noexcept, no allocation, no lock); counters from any thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "franka_hw/rate_matching.hpp"
#include "jtac_loop/control_law.hpp"
#include "jtac_rt/mailbox.hpp"

namespace jtac::hw {

/// Follows a streamed joint target (see the top of this file).
class StreamLaw final : public ControlLaw {
 public:
  /// `controller_period_s`: the loop's period (1 / update_rate) [s]; the reconstruction steps at it.
  explicit StreamLaw(double controller_period_s = 0.001);

  /// Writer side: the newest target [rad, rad/s] sampled at `stamp_s` (the writer's monotonic clock,
  /// e.g. Python's time.monotonic(); used for the interval while it agrees with the loop's count).
  /// False (refused, counted) for a non-finite value. Never waits.
  bool set_target(const JointArray& q_rad, const JointArray& dq_rad_s, double stamp_s) noexcept;

  void activate(const DeviceState& state) noexcept override;
  void deactivate(double time_s) noexcept override;
  UpdateStatus update(const DeviceState& state, double time_s, double period_s,
                      LawOutput& out) noexcept override;

  std::uint64_t targets_taken() const noexcept { return taken_.load(std::memory_order_relaxed); }
  std::uint64_t targets_refused() const noexcept { return refused_.load(std::memory_order_relaxed); }
  /// True while no target is in force (none since activation, or the stream timed out).
  bool holding() const noexcept { return holding_.load(std::memory_order_relaxed); }

 private:
  // The reconstruction on by `periods` controller periods; the command follows unless it holds.
  void advance(std::uint64_t periods) noexcept;

  LatestValue<CommandSample> mailbox_;
  RateMatcher matcher_;
  RateTarget target_{};
  JointArray q_cmd_{};
  std::uint64_t cycle_ = 0;
  bool active_ = false;
  std::atomic<std::uint64_t> taken_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::atomic<bool> holding_{true};
};

}  // namespace jtac::hw
