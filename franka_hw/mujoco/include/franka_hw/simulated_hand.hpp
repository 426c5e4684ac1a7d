// The simulated Franka Hand's own controller: what the hand's firmware does with libfranka's gripper
// commands, run by MujocoDevice once per tick on the width of the two coupled fingers.
//
// The drive. The fingers are one degree of freedom, the width w = q1 + q2 between the pads; the
// output is the force on EACH finger [N], positive opening (the MJCF's actuator `<prefix>_hand`).
//   move(width, speed)  a reference ramps from the width at the command's start to `width` at
//                       `speed` (width rate); a PD on the width tracks it, its force limited to the
//                       hand's continuous force (kHandMoveForceN = 70 N). kSuccess when the ramp has
//                       ended and the fingers have settled within kHandWidthToleranceM (1 mm);
//                       kBlocked when they stall more than kHandStallErrorM (2 mm) short of the
//                       reference, or settle outside 1 mm: the fingers then hold where they stopped.
//   grasp(width, speed, force, ε_in, ε_out)  the reference closes to 0 at `speed` under a force limit
//                       of `force` until the fingers stall (on an object, or closed); then the drive
//                       squeezes with `force` on each finger for as long as the grasp is in force, and
//                       the grasp is judged as libfranka does: width − ε_in < w < width + ε_out →
//                       kSuccess, is_grasped while w stays in that band; otherwise kUnsuccessful.
//   homing()            a move to the full stroke (0.08 m) at the top speed (0.1 m/s); the real hand's
//                       calibration run is not simulated.
//   stop()              hold the width where it is (PD, 70 N), any grasp force released; kSuccess.
// A new command replaces the running one, which is thereby kAborted (the state reports the newest
// command; a command id older than the state's is one that was replaced). Commands act from the tick
// after hand_command() returned (the tick of the next read_once() in lockstep).
//
// Settled / stalled: the width velocity below kHandSettleSpeedMS (5 mm/s) for kHandSettleTicks ticks.
// Temperature: a constant 30 °C. moving: |width velocity| ≥ kHandSettleSpeedMS.
//
// Threads: command() and state() from any thread; update() and reset() on the device's thread. A
// command crosses in a LatestValue (newest wins; writers serialize on a mutex the real-time side never
// touches); the state comes back through a seqlock the real-time side writes without waiting.
// update() is noexcept and allocates nothing.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "jtac_rt/mailbox.hpp"

namespace jtac::hw {

/// Stroke of the Franka Hand: the largest width between the fingers [m].
inline constexpr double kHandMaxWidthM = 0.08;
/// Top width rate of the Franka Hand (0.05 m/s per finger) [m/s].
inline constexpr double kHandMaxSpeedMS = 0.1;
/// Peak grasp force of the Franka Hand [N].
inline constexpr double kHandMaxForceN = 140.0;
/// Continuous grasp force of the Franka Hand; also the force limit of move, homing and stop [N].
inline constexpr double kHandMoveForceN = 70.0;
/// The simulated hand's temperature [°C].
inline constexpr double kHandTemperatureC = 30.0;
/// A move succeeds when the fingers settle this close to its width [m].
inline constexpr double kHandWidthToleranceM = 0.001;
/// A move is blocked when the fingers stall this far behind its reference [m].
inline constexpr double kHandStallErrorM = 0.002;
/// The fingers are settled (or stalled) below this width velocity [m/s] ...
inline constexpr double kHandSettleSpeedMS = 0.005;
/// ... for this many consecutive ticks.
inline constexpr int kHandSettleTicks = 20;

/// What a hand command asks for.
enum class HandCommandKind : std::uint8_t { kHoming, kMove, kGrasp, kStop };

/// One command of libfranka's gripper protocol. Fields a kind does not use are ignored.
struct HandCommand {
  HandCommandKind kind = HandCommandKind::kStop;
  double width_m = 0.0;            ///< move: target width; grasp: the object's expected width [m]
  double speed_m_s = 0.1;          ///< move, grasp: width rate, in (0, kHandMaxSpeedMS] [m/s]
  double force_N = 0.0;            ///< grasp: force on each finger, in (0, kHandMaxForceN] [N]
  double epsilon_inner_m = 0.005;  ///< grasp: tolerated width below width_m [m]
  double epsilon_outer_m = 0.005;  ///< grasp: tolerated width above width_m [m]
};

/// Where the newest command is.
enum class HandStatus : std::uint8_t { kIdle, kRunning, kSuccess, kUnsuccessful, kBlocked, kAborted };

/// The hand at one tick.
struct HandState {
  double width_m = 0.0;                      ///< width between the finger pads [m]
  double width_velocity_m_s = 0.0;           ///< its rate, positive opening [m/s]
  double force_N = 0.0;                      ///< force the drive applies on each finger, positive closing [N]
  double temperature_C = kHandTemperatureC;  ///< [°C]
  bool is_grasped = false;                   ///< a successful grasp holds, its width within the band
  bool moving = false;                       ///< |width_velocity_m_s| ≥ kHandSettleSpeedMS
  std::uint64_t command_id = 0;              ///< the newest command taken (0: none since reset)
  HandCommandKind command_kind = HandCommandKind::kStop;  ///< its kind
  HandStatus status = HandStatus::kIdle;                  ///< where it is
  std::uint64_t tick = 0;                                 ///< the device tick of this state
};

/// Throws std::invalid_argument naming the field and its value when `command` is not one the hand
/// takes: a width outside [0, kHandMaxWidthM], a speed outside (0, kHandMaxSpeedMS], a force outside
/// (0, kHandMaxForceN], a negative epsilon, anything non-finite, an unknown kind.
void validate_hand_command(const HandCommand& command);

/// The hand's controller (see the top of this file).
class SimulatedHand {
 public:
  /// PD of the width servo: force on each finger per metre of width error [N/m] and per m/s [N·s/m].
  /// For a finger of 0.065 kg (0.015 kg and the drive's 0.05 kg armature) it is a critically damped
  /// loop of about 100 rad/s, well inside the 1 kHz step.
  static constexpr double kStiffnessNM = 325.0;
  static constexpr double kDampingNsM = 6.5;

  /// Validates (validate_hand_command), numbers and hands the command to the next update(); returns
  /// its id (> 0). Any thread; never blocks the real-time side.
  std::uint64_t command(const HandCommand& command);

  /// The state of the last update() (or reset()). Any thread, never blocks for long (a seqlock).
  HandState state() const noexcept;

  /// Back to rest: no command in force (a pending one is dropped), holding `width_m`, state idle at
  /// tick 0. Not real-time safe; only while no update() runs.
  void reset(double width_m) noexcept;

  /// One tick: takes a new command if one arrived, runs the active one on the measured width and its
  /// velocity, publishes the state for `tick`, and returns the force on each finger [N, positive
  /// opening] for the coming step. Real-time safe (noexcept, no allocation, no lock).
  double update(double width_m, double width_velocity_m_s, double period_s, std::uint64_t tick) noexcept;

 private:
  struct Pending {
    HandCommand command;
    std::uint64_t id = 0;
  };
  enum class Phase : std::uint8_t { kHold, kRamp, kSqueeze };

  void start(const Pending& pending, double width_m) noexcept;
  void advance_reference(double period_s) noexcept;
  double servo(double width_m, double width_velocity_m_s, double force_limit_N) const noexcept;
  void judge(double width_m, double width_velocity_m_s) noexcept;
  bool in_band(double width_m) const noexcept;
  void publish(const HandState& state) noexcept;

  // Command hand-off: writers serialize on command_mutex_; update() only calls take_new().
  std::mutex command_mutex_;
  jtac::LatestValue<Pending> mailbox_;
  std::uint64_t last_id_ = 0;  // under command_mutex_

  // The active command (device thread only).
  HandCommand active_{};
  std::uint64_t active_id_ = 0;
  HandStatus status_ = HandStatus::kIdle;
  Phase phase_ = Phase::kHold;
  double reference_m_ = 0.0;             // the width reference [m]
  double reference_velocity_m_s_ = 0.0;  // its rate [m/s]
  double target_m_ = 0.0;                // where the ramp ends [m]
  double force_limit_N_ = kHandMoveForceN;
  double force_N_ = 0.0;  // last output, positive opening [N]
  int settled_ticks_ = 0;
  bool grasped_ = false;  // the grasp succeeded and is in force

  // The state's seqlock: an even sequence when stable; words hold the HandState's bytes.
  static constexpr std::size_t kStateWords = (sizeof(HandState) + 7) / 8;
  std::atomic<std::uint64_t> sequence_{0};
  std::array<std::atomic<std::uint64_t>, kStateWords> state_words_{};
};

}  // namespace jtac::hw
