// The controller thread: runs a control law (control_law.hpp; the composed JTAC
// controller through JtacLaw) at update_rate against an AsyncInterface, reading its state buffer and
// writing its command buffer, never waiting on either.
//
// One controller cycle (cycle()):
//   latest_state (never waits) → skip when there is no state yet, or when the state is the one the
//   previous cycle used (counted: a controller that outruns the device) → new stop accelerations
//   to the law → a switch asked for by use_law(), by the hand-over contract (control_law.hpp: the
//   running law brakes to rest, then the next is activated from its last command) →
//   law.activate(state, from) on the first cycle with a state (from = the robot's echoed q_d at rest)
//   → law.update(state, t, dt) with t = the state's robot time, dt = t − t of
//   the previous update (the nominal period on the first) → submit_command(q_cmd, dq_cmd, t) →
//   snapshot, record row, timing.
//
// Two modes:
//   * real time: start() launches the controller thread (SCHED_FIFO at config.fifo_priority, below
//     the device thread's 80; optional CPU pin; a refusal prints one warning and the thread runs
//     anyway). It is phase-locked to the robot: after a cycle that used a state received at host
//     time r (DeviceState::host_receive_ns), it sleeps (absolute, CLOCK_MONOTONIC) until
//     r + one controller period + kPhaseOffsetNs, so it reads each N-th state shortly after it
//     arrives and its samples are evenly spaced in robot time. A free-running timer would drift
//     against the robot's clock, read some states twice (stale) and skip others, and the rate
//     matcher would see uneven intervals. When no new state was there yet it looks again after
//     kPollNs. The thread never waits on a lock or on the hardware thread. stop() joins.
//   * lockstep: step() runs one device packet (AsyncInterface::step_once()) and, on packets
//     1, 1 + N, 1 + 2N, … (N = 1000 / update_rate_hz), one controller cycle on the caller's thread
//     with the state just produced: deterministic and as fast as the CPU allows. Only while neither
//     the interface's nor this loop's thread runs.
//
// Events: ControlLoop never drains the controller's events. The non-real-time side keeps calling
// controller.poll_event() itself (and submit_goal / request_cancel / set_parameters /
// request_zero_fts), exactly as it would without this loop.
//
// Timing (LoopTiming, loop_timing.hpp): the controller's read-to-read interval and read-to-command duration
// are measured here; dEXT (the hardware thread's state-to-command latency), unserved cycles (device ticks
// that started without a new command: ticks_without_new_command of the newest state) and the largest gap
// between two device commands come from the interface and the device.
//
// Threads: start()/stop()/step()/start_recording()/stop_recording() from one owner thread;
// snapshot() from one reader thread; drain() from one consumer thread (may be the reader);
// timing() from any thread. The loop body (cycle()) allocates nothing, takes no lock and never
// waits.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "franka_hw/async_interface.hpp"
#include "franka_hw/device.hpp"
#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "jtac_loop/clock_map.hpp"
#include "jtac_loop/control_law.hpp"
#include "jtac_loop/cycle_record.hpp"
#include "jtac_loop/device_types.hpp"
#include "jtac_loop/loop_timing.hpp"
#include "jtac_rt/mailbox.hpp"

namespace jtac::loop {

/// Configuration of a ControlLoop.
struct ControlLoopConfig {
  /// Controller rate [Hz]: 1000, 500, 250, 200, 125 or 100 (the device runs at 1 kHz; the
  /// controller period is a whole number of device periods).
  int update_rate_hz = 1000;
  /// Try SCHED_FIFO at this priority for the controller thread (0: leave the scheduler alone).
  /// Keep it below the device thread's (AsyncInterfaceConfig::fifo_priority, 80).
  int fifo_priority = 70;
  /// Pin the controller thread to this CPU (-1: no pinning).
  int cpu = -1;
  /// Rows the record ring holds until drain() empties it (allocated at construction; a full ring
  /// drops and counts): the `record_buffer_cycles` parameter. 8192 ≈ 8 s at 1 kHz.
  std::size_t record_capacity = 8192;
};

/// What the last controller cycle saw and did: its CycleRecord (cycle_record.hpp), whether there
/// was one yet, and the loop's counters when it was published.
struct LoopSnapshot : CycleRecord {
  bool valid = false;   ///< false until the first controller update
  LoopTiming timing{};  ///< the loop's counters when this cycle was published
};

/// The controller thread of the asynchronous interface.
class ControlLoop {
 public:
  /// Real time: how long after a state's arrival the controller cycle that uses it runs [ns]
  /// (room for the hardware thread to finish its packet and for wake-up latency).
  static constexpr std::int64_t kPhaseOffsetNs = 150'000;
  /// Real time: how soon the thread looks again when the expected state has not arrived [ns].
  static constexpr std::int64_t kPollNs = 100'000;
  /// A hand-over waits until the robot's echoed q_d is within this of the last command [rad] (the
  /// rate matcher reaches a command at rest within a packet or two; a law may start from either).
  static constexpr double kHandoverEchoRad = 1e-9;
  /// ... or once the law has been at rest this long [s] (a robot may echo q_d rounded).
  static constexpr double kHandoverEchoWaitS = 0.02;

  /// Holds both by reference (they must outlive the loop). Throws std::invalid_argument for an
  /// update rate not in ControlLoopConfig's list, or a device period
  /// (AsyncInterface::limiter().period_s()) other than 1 ms. Not real-time safe.
  ControlLoop(AsyncInterface& interface, ControlLaw& law, const ControlLoopConfig& config = {});
  /// The composed JTAC controller as the law (an owned JtacLaw); `controller` must be configured
  /// with the device's seven joints (else std::invalid_argument).
  ControlLoop(AsyncInterface& interface, JointTrajectoryAdmittanceController& controller,
              const ControlLoopConfig& config = {});
  ~ControlLoop();
  ControlLoop(const ControlLoop&) = delete;
  ControlLoop& operator=(const ControlLoop&) = delete;

  /// Real-time mode: starts the controller thread (false if it already runs). Throws
  /// std::system_error when no thread can be made. Not real-time safe.
  bool start();
  /// Joins the controller thread (after the cycle in progress) and deactivates the law (the JTAC
  /// controller ends a pending goal ABORTED / INVALID_STATE; the next start() re-activates it on its
  /// first cycle with a state). Idempotent; also ends a lockstep session.
  void stop();
  bool running() const noexcept { return running_.load(std::memory_order_acquire); }

  /// Hands the arm to `law` (nullptr: back to the constructor's law) by the hand-over contract of
  /// control_law.hpp: from the next cycle the running law brakes to rest within the stop
  /// accelerations in force (begin_handover(), then at_rest()); at the first cycle that finds it at
  /// rest it is deactivated and `law` activated from its last command, and runs that same cycle. A
  /// request made while a hand-over is under way replaces its target. `law` must outlive its use.
  /// Owner thread; never waits (the controller thread picks it up; active_law() tells when).
  void use_law(ControlLaw* law) noexcept;
  /// The law asked for last (use_law), for the owner thread.
  const ControlLaw* law() const noexcept { return requested_law_.load(std::memory_order_acquire); }
  /// The law the controller thread ran in its last cycle (nullptr before the first). Any thread.
  const ControlLaw* active_law() const noexcept { return published_law_.load(std::memory_order_acquire); }
  /// True while the running law brakes for a hand-over. Any thread.
  bool handing_over() const noexcept { return handing_over_flag_.load(std::memory_order_acquire); }
  /// Hand-overs completed since construction. Any thread.
  std::uint64_t handovers() const noexcept { return handovers_.load(std::memory_order_acquire); }

  /// The deceleration of each joint for every brake of every law [rad/s²] (the `stop_accelerations`
  /// parameter), taken at the next cycle boundary and given to the running law and each law it
  /// activates (ControlLaw::set_stop_accelerations; the JTAC law reads its own parameter). Owner
  /// thread; never waits.
  void set_stop_accelerations(const JointArray& a_rad_s2) noexcept;
  /// The JTAC law of a loop built over a JointTrajectoryAdmittanceController (its wrench sources and
  /// external sensor readings, JtacLaw::feed_wrench); nullptr for a loop built over another law.
  JtacLaw* jtac_law() noexcept { return owned_law_.get(); }
  const JtacLaw* jtac_law() const noexcept { return owned_law_.get(); }
  /// True when the last cycle ran the JTAC law of a loop built over the JTAC controller and no switch
  /// away from it is asked for or under way: goals and tares reach a running controller. Any thread.
  bool jtac_running() const noexcept {
    return owned_law_ != nullptr && active_law() == owned_law_.get() && law() == owned_law_.get() &&
           !handing_over();
  }

  /// Several arms in one process (a group): the most other arms one loop watches.
  static constexpr std::size_t kMaxPeers = 3;
  /// For a Franka arm: a hardware thread that runs but has written nothing for this long waits on a
  /// robot that went silent [ns] (20 lost cycles stop a Franka motion, communication_constraints_
  /// violation; libfranka's read gives up only after its 1 s timeout).
  static constexpr std::int64_t kFrankaSilenceNs = 50'000'000;
  /// Watches another arm's hardware thread: once it stops by itself (its exit_status() is not kOk:
  /// a reflex, a lost link) or, running, has written no packet for `silence_ns` (> 0; 0: not
  /// watched for silence), this loop's next cycle brakes its running law to rest within the stop
  /// accelerations in force (ControlLaw::brake_for_peer), once, and counts it in peer_brakes().
  /// At most kMaxPeers; false when full. Owner thread, while the loop is stopped.
  bool watch_peer(const AsyncInterface& peer, std::int64_t silence_ns = 0) noexcept;
  /// Watches no other arm from now on. Owner thread, while the loop is stopped.
  void clear_peers() noexcept { num_peers_ = 0; }
  /// Brakes the running law as for a peer's fault at the next cycle (a lockstep group's stepper,
  /// which sees a peer's status itself). Any thread; never waits.
  void request_peer_brake() noexcept { peer_brake_requests_.fetch_add(1, std::memory_order_acq_rel); }
  /// Peer-fault brakes this loop has applied. Any thread.
  std::uint64_t peer_brakes() const noexcept { return peer_brakes_.load(std::memory_order_acquire); }
  /// Arms the watch again after a peer's fault was dealt with (the peer runs again): a peer still
  /// stopped brakes this loop again at its next cycle. Owner thread.
  void rearm_peer_watch() noexcept { peer_watch_rearms_.fetch_add(1, std::memory_order_acq_rel); }

  /// The controller time [s] at host steady-clock time `host_ns` [ns] (CLOCK_MONOTONIC, Python's
  /// time.monotonic() · 1e9), through the smooth clock map fitted to every cycle's state arrival
  /// (clock_map.hpp: continuous, no steps, so that stamps of samples taken on the host's clock keep
  /// their spacing): how a group puts its arms, each on its own robot's clock, on one time base. NaN
  /// before the first cycle. Any thread; never waits (readers retry).
  double controller_time_at(std::int64_t host_ns) const noexcept {
    return clock_->smooth_controller_time_s(host_ns);
  }

  /// Lockstep mode: one device packet and, when due, one controller cycle on this thread. Returns
  /// the packet's status (kNotConfigured while a thread runs). Real-time safe.
  DeviceStatus step() noexcept;
  /// Device packets run by step() so far.
  std::uint64_t packets() const noexcept { return packets_; }

  /// The newest snapshot; false (out untouched) before the first controller update. Reader thread.
  bool snapshot(LoopSnapshot& out) noexcept;

  /// Recording: every controller cycle appends a CycleRecord while on. The ring never blocks; when
  /// full a row is dropped and counted.
  void start_recording() noexcept { recording_.store(true, std::memory_order_release); }
  void stop_recording() noexcept { recording_.store(false, std::memory_order_release); }
  bool recording() const noexcept { return recording_.load(std::memory_order_acquire); }
  /// Appends every recorded row not yet drained to `rows`; returns how many. Consumer thread.
  std::size_t drain(std::vector<CycleRecord>& rows);
  /// Rows lost because the ring was full.
  std::uint64_t dropped_records() const noexcept { return ring_->dropped(); }
  /// Rows the record ring holds (ControlLoopConfig::record_capacity).
  std::size_t record_capacity() const noexcept { return ring_->capacity(); }
  /// Rows recorded and not drained yet. Any thread (a snapshot).
  std::size_t pending_records() const noexcept { return ring_->size(); }

  /// Loop timing; any thread.
  LoopTiming timing() const noexcept;

  int update_rate_hz() const noexcept { return config_.update_rate_hz; }
  /// Device packets per controller cycle (1000 / update_rate_hz).
  int packets_per_cycle() const noexcept { return packets_per_cycle_; }

 private:
  void init();
  // A switch asked for by use_law(): starts the hand-over, or completes it once the law is at rest.
  void serve_switch(double time_s) noexcept;
  // The running law's last command as the next law's start (acceleration from the last two cycles).
  void remember_command(double time_s, double period_s) noexcept;
  enum class CycleOutcome : std::uint8_t { kRan, kNoState, kStale };
  void run() noexcept;
  CycleOutcome cycle() noexcept;
  void configure_thread() const;

  AsyncInterface& interface_;
  std::unique_ptr<JtacLaw> owned_law_;      // set by the JTAC constructor
  ControlLaw& law_;                         // the constructor's law (the default)
  std::atomic<ControlLaw*> requested_law_;  // use_law(); the controller thread switches to it
  ControlLaw* active_law_ = nullptr;        // controller thread
  std::atomic<const ControlLaw*> published_law_{nullptr};
  std::atomic<bool> handing_over_flag_{false};
  std::atomic<std::uint64_t> handovers_{0};
  LatestValue<JointArray> stop_accelerations_in_;  // set_stop_accelerations() → controller thread
  ControlLoopConfig config_;
  int packets_per_cycle_ = 1;
  double period_s_ = 0.001;  // controller period
  std::int64_t period_ns_ = 1000000;

  // Control thread (or the lockstep caller).
  DeviceState state_{};
  LawOutput out_{};
  bool activated_ = false;
  bool handing_over_ = false;   // the running law brakes for a switch
  double rest_since_s_ = -1.0;  // controller time the handing-over law was first at rest (-1: not)
  bool have_handover_ = false;  // handover_ holds the last law's command (else: the robot's echo)
  LawHandover handover_{};
  JointArray stop_accelerations_{5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0};  // [rad/s²]
  bool have_update_ = false;
  std::uint64_t last_tick_ = 0;
  double last_time_s_ = 0.0;
  std::int64_t last_read_ns_ = 0;
  bool have_read_ = false;
  std::uint64_t packets_ = 0;

  // Crossings.
  LatestValue<LoopSnapshot> snapshots_;
  const LoopSnapshot* reader_snapshot_ = nullptr;
  std::unique_ptr<SpscRingBuffer<CycleRecord>> ring_;
  std::atomic<bool> recording_{false};

  LoopTimingCounters timing_;  // the LOOP fields of loop_timing.hpp

  // The group: other arms' hardware threads this loop watches, and the brakes for their faults.
  void serve_peers(double time_s) noexcept;
  struct Peer {
    const AsyncInterface* interface = nullptr;
    std::int64_t silence_ns = 0;  // 0: not watched for silence
  };
  static bool peer_stopped(const Peer& peer, std::int64_t now_ns) noexcept;
  std::array<Peer, kMaxPeers> peers_{};
  std::size_t num_peers_ = 0;
  bool peer_braked_ = false;  // controller thread: braked for the fault seen; until a rearm
  std::atomic<std::uint64_t> peer_brake_requests_{0};
  std::uint64_t peer_brake_requests_taken_ = 0;
  std::atomic<std::uint64_t> peer_watch_rearms_{0};
  std::uint64_t peer_watch_rearms_taken_ = 0;
  std::atomic<std::uint64_t> peer_brakes_{0};
  std::unique_ptr<ClockMap> clock_;  // host time → controller time, updated every cycle (made by init())

  std::atomic<bool> running_{false};
  std::atomic<bool> stop_requested_{false};
  std::thread thread_;
};

}  // namespace jtac::loop
