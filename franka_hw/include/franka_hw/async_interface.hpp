// The asynchronous hardware interface: a real-time thread owns the device's
// packet loop, and the controller only ever touches two lock-free buffers, so a slow or jittery
// controller (or Python) never delays a robot packet.
//
// One packet (step_once(), the thread's loop body):
//   read_once → publish the state (LatestValue: newest wins, never waits) → take the newest
//   controller sample if one arrived (never waits) → RateMatcher (ramp anchored on the echoed q_d,
//   feed-forward timed out) → the limiter (jerk/acceleration/velocity under the FR3 limits ×
//   margin: MotionLimiter, or RuckigLimiter by AsyncInterfaceConfig::limiter) → write_once.
// The reference advances by one device period per packet (after skipped ticks: see below).
//
// Anomalous device periods (the tick counter of the state):
//   - tick delta 0 (a duplicate state): nothing advances; the previous command is written again.
//   - tick delta > 1 (ticks skipped). libfranka's readOnce returns the newest state queued on its
//     socket. Two causes, told apart by the host clock in the real-time thread:
//     * a late read: this state came at least delta − 1 periods after our previous write (the
//       thread was preempted between write and read, e.g. a virtual CPU descheduled). That command
//       was on time and applied; the robot substituted the delta − 1 cycles nobody answered (at
//       constant acceleration, Franka's control and franka-sim alike), so the reference is
//       extrapolated over them and steps one period. Counted in Counters::late_reads.
//     * a late command: the states in between were already queued when our previous command went
//       out (sooner than delta − 1 periods before this state; always so in lockstep): that command
//       answered a state older than one period and reached the robot after its cycle (typically
//       the reader was woken 1–2 ms late from a blocking receive, which hands back the oldest
//       datagram). What the robot then judges our next command against depends on what it does
//       with a late command (AsyncInterfaceConfig::late_commands):
//       kDropped (Franka's control: a command that misses its cycle is lost, and each missed
//         waypoint is substituted by keeping the acceleration constant and integrating; libfranka's
//         own rate limiter likewise continues from the robot's echo, not from its last command): the
//         reference goes back to before the late command and is extrapolated over the delta missed
//         periods, so the next command is one period from what the robot applied;
//       kAppliedOnArrival (franka-sim: a late command is still applied in the cycle it lands in,
//         the substitutes it replaces are thrown away, and the next command is differenced against
//         it over the delta periods between them): the next step is one step of delta periods, so
//         that the differences over that interval stay within the limits.
//     The wrong model costs a jump of a·T² per period: at 8 rad/s² franka-sim read up to 1.5× our
//     acceleration and 0.75·a/T of jerk and aborted (joint_motion_generator_velocity/acceleration_
//     discontinuity). Counted in Counters::anomalous_ticks.
//   - a command written more than one period after its state was read (preempted between read and
//     write; judged by the real-time thread only, never in lockstep) is late too, even when the
//     next state is the next tick: the robot publishes a state every period, so the next one had
//     gone out before the command. kDropped rewinds it the same way (a robot that dropped it
//     extrapolated that cycle); kAppliedOnArrival needs nothing (the late command is applied one
//     cycle before the next one). Counted in Counters::late_commands.
//   - first packet: the reference starts at the echoed q_d, at rest.
//
// A restart (stop(), then start()) begins a new run: its first packet starts the reference at the
// echoed q_d again, the controller is handed only the states of the run in progress (latest_state()
// is false from stop() until the new run's first packet), and a sample that was not taken when the
// thread stopped is dropped. A state or sample of the run before is the arm in motion as it was
// then: a controller (re)started on it would hold a command up to a period of motion away from the
// one the robot holds, and the limiter would chase it.
//
// Threads: submit_command() and latest_state() from one controller thread; start()/stop(),
// step_once() and last_command() from one owner thread, step_once() only while the real-time thread
// is not running; counters() and latency() from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "franka_hw/async_records.hpp"
#include "franka_hw/device.hpp"
#include "franka_hw/joint_limiter.hpp"
#include "franka_hw/rate_matching.hpp"
#include "jtac_rt/mailbox.hpp"

namespace jtac::hw {

/// What the robot does with a command that reaches it after its cycle (see the top of this file).
enum class LateCommands : std::uint8_t {
  kDropped,           ///< lost; the robot extrapolated the missed waypoints (Franka's control)
  kAppliedOnArrival,  ///< applied in the cycle it lands in (franka-sim)
};

/// Configuration of an AsyncInterface.
struct AsyncInterfaceConfig {
  /// What the robot does with a late command: decides how the reference continues after skipped
  /// ticks.
  LateCommands late_commands = LateCommands::kDropped;
  /// Fraction of the published joint limits the limiter allows, in (0, 1].
  double limit_margin = 0.8;
  /// The published limits: one robot's whole row of joint_limits.hpp (kDefaultRobot's by default;
  /// find_joint_limits() gives another robot's).
  JointLimits limits = *find_joint_limits(kDefaultRobot);
  /// Which limiter shapes the commands: MotionLimiter (default) or RuckigLimiter. MotionLimiter keeps
  /// the envelope × margin and the bounds of steps over several periods, which Ruckig does not: use
  /// kRuckig with LateCommands::kDropped only (franka_hw/README.md, "MotionLimiter or Ruckig").
  LimiterKind limiter = LimiterKind::kMotionLimiter;
  /// Rate matching (period_s is replaced by the device's period).
  RateMatcherConfig rate_matching{};
  /// Try SCHED_FIFO at this priority for the real-time thread (0: leave the scheduler alone).
  int fifo_priority = 80;
  /// Pin the real-time thread to this CPU (-1: no pinning).
  int cpu = -1;
};

/// The asynchronous interface over one Device.
class AsyncInterface {
 public:
  /// Packets in the latency window.
  static constexpr std::size_t kLatencyWindow = 1024;
  /// Packets the flight recorder keeps (the newest; about 260 ms at 1 kHz).
  static constexpr std::size_t kTraceCapacity = 256;

  /// Holds `device` by reference; it must outlive the interface. Not real-time safe.
  explicit AsyncInterface(Device& device, const AsyncInterfaceConfig& config = {});
  ~AsyncInterface();
  AsyncInterface(const AsyncInterface&) = delete;
  AsyncInterface& operator=(const AsyncInterface&) = delete;

  /// Starts the real-time thread (false if it already runs): a new run, see the top of this file.
  /// Tries SCHED_FIFO and the CPU pin; a refusal prints one warning to stderr and the thread runs
  /// anyway. Throws std::system_error when no thread can be made. Not real-time safe.
  bool start();
  /// Lockstep: a new run, as start() begins one for the thread: the next step_once() starts at the
  /// robot's echo at rest (after a device error, the arm recovered where it stopped). False while the
  /// thread runs. Not real-time safe.
  bool begin_lockstep_run() noexcept;

  /// What inject_disturbance() adds to one joint's command: a motion starting at the next packet with
  /// velocity v [rad/s], acceleration a [rad/s²] and jerk j [rad/s³], integrated per packet.
  struct Disturbance {
    int joint = 0;
    double v_rad_s = 0.0;
    double a_rad_s2 = 0.0;
    double j_rad_s3 = 0.0;
  };
  /// Tests only: from the next packet to the end of the run, adds `d` to the command after the limiter
  /// (the flight recorder marks those packets kDisturbed). Provokes a robot's reflex on purpose — a
  /// velocity step (v), an acceleration step (a), a jerk (j), a slow drift past a joint limit (small
  /// v) — to prove what explains one. False for a joint out of range, a non-finite value, or while
  /// one is pending or running. Any thread; never waits.
  bool inject_disturbance(const Disturbance& d) noexcept;
  /// Stops and joins the real-time thread (after the packet in progress), ending its run: a sample not
  /// taken is dropped, and the controller gets no state until the next run's first packet.
  /// Idempotent.
  void stop();
  /// True while the real-time thread runs.
  bool running() const noexcept { return running_.load(std::memory_order_acquire); }
  /// The status that ended the thread's loop (kOk while running or after stop()).
  DeviceStatus exit_status() const noexcept { return exit_status_.load(std::memory_order_acquire); }
  /// Host steady clock when this run's last packet was written [ns]; 0 before its first. A running
  /// thread whose last packet is old waits on a robot that went silent (a dead link: libfranka's
  /// read gives up only after its 1 s timeout). Any thread.
  std::int64_t last_packet_ns() const noexcept { return last_packet_ns_.load(std::memory_order_acquire); }

  /// One packet on the caller's thread (lockstep tests, a synchronous loop). Only while the thread
  /// is not running (returns kNotConfigured otherwise). Real-time safe.
  DeviceStatus step_once() noexcept;

  /// Controller side: the newest state of the run in progress; false until its first packet (and
  /// from stop() on). Never waits. One thread.
  bool latest_state(DeviceState& state) noexcept;
  /// Controller side: hands over a sample; false (refused, counted, the previous one stays in
  /// force) for a non-finite value. Never waits; a newer sample replaces one not yet taken.
  bool submit_command(const JointArray& q_rad, const JointArray& dq_rad_s, double controller_time_s) noexcept;
  /// As above, from a controller that read the state of `source_tick` (DeviceState::tick) to compute
  /// the sample and runs every `nominal_interval_s` (0: unknown): the rate matcher then places the
  /// sample on the device's time exactly, however late or early it arrives (see RateMatcher).
  bool submit_command(const JointArray& q_rad, const JointArray& dq_rad_s, double controller_time_s,
                      std::uint64_t source_tick, double nominal_interval_s) noexcept;

  /// The last command written to the device (the owner thread, or after stop()).
  const DeviceCommand& last_command() const noexcept { return command_; }
  /// The limiter and the rate matcher (inspection by the owner thread while stopped).
  const JointLimiter& limiter() const noexcept { return limiter_; }
  const RateMatcher& rate_matcher() const noexcept { return matcher_; }

  /// Counters; any thread.
  AsyncCounters counters() const noexcept;
  /// dEXT statistics over the last kLatencyWindow packets; any thread, no allocation.
  LatencyStats latency() const noexcept;
  /// Restarts the peak figures (largest_command_gap, max_write_interval_ns, max_latency_ns) and
  /// empties the latency window, e.g. between the phases of a benchmark. Any thread; a packet in
  /// flight may still land in the old figures.
  void reset_peaks() noexcept;

  /// The flight recorder: copies the last packets (up to kTraceCapacity, oldest first) into `out`
  /// and returns how many. Only while the real-time thread is not running (after stop(), or after
  /// it ended on a device error: what led to a reflex); returns 0 while it runs. Owner thread.
  std::size_t packet_trace(std::array<PacketRecord, kTraceCapacity>& out) const noexcept;

 private:
  void run() noexcept;
  /// One packet; `real_time`: called by the real-time thread (host-clock timing is meaningful).
  DeviceStatus packet(bool real_time) noexcept;
  // Where the echoed q_d disagrees with the reference after the tick handling, takes whichever of
  // the robot's two possible histories for this tick it names (see the .cpp); true if it did.
  bool settle_by_echo(const JointLimiter& written, std::uint64_t delta, PacketRecord& record) noexcept;
  void configure_thread() const;

  Device& device_;
  AsyncInterfaceConfig config_;
  double period_s_;
  RateMatcher matcher_;
  JointLimiter limiter_;
  JointLimiter limiter_before_;  // the reference before the last command (kDropped rewinds to it)
  std::int64_t period_ns_;
  bool last_write_late_ = false;  // the last command went out more than a period after its read

  // A published state and the run it belongs to.
  struct RunState {
    DeviceState state{};
    std::uint64_t run = 0;
  };
  // The run in progress: changed by start() and by stop() when it ends a run (owner thread, while
  // the real-time thread does not run); the states are stamped with it.
  std::atomic<std::uint64_t> run_{0};
  LatestValue<RunState> state_buffer_;
  LatestValue<CommandSample> command_buffer_;
  RunState controller_state_{};  // the controller's copy of the newest state
  bool controller_has_state_ = false;

  // Real-time side.
  DeviceState state_{};
  DeviceCommand command_{};
  std::atomic<std::int64_t> last_packet_ns_{0};  // last_packet_ns()
  void apply_disturbance(PacketRecord& record) noexcept;
  Disturbance disturbance_{};                   // written before disturbance_armed_ is set
  std::atomic<bool> disturbance_armed_{false};  // inject_disturbance() → the hardware thread
  bool disturbing_ = false;                     // hardware thread: a disturbance runs
  double disturbance_offset_rad_ = 0.0;         // hardware thread: the disturbance's state
  double disturbance_velocity_rad_s_ = 0.0;
  double disturbance_acceleration_rad_s2_ = 0.0;
  RateTarget target_{};
  bool started_ = false;  // a first packet was read
  std::uint64_t last_tick_ = 0;
  std::uint64_t last_sample_packet_ = 0;
  bool had_sample_ = false;

  AsyncCounterAtomics counters_;          // written by the packet, loaded by counters()
  std::atomic<bool> peaks_reset_{false};  // the real-time side restarts its gap measurement
  std::int64_t last_write_ns_ = 0;        // when the last write_once returned, 0 = none yet
  std::array<std::atomic<std::int64_t>, kLatencyWindow> latency_ns_{};
  // Written by whichever thread runs packet(); read only while the real-time thread is not running
  // (its exit or join orders the writes before the read). Heap: ~70 kB.
  std::unique_ptr<std::array<PacketRecord, kTraceCapacity>> trace_;

  std::atomic<bool> running_{false};
  std::atomic<bool> stop_requested_{false};
  std::atomic<DeviceStatus> exit_status_{DeviceStatus::kOk};
  std::thread thread_;
};

}  // namespace jtac::hw
