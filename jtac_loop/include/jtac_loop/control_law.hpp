// The controller slot of ControlLoop: a control law is a function of the state the loop read, its
// own parameters and its own memory that fills one joint command per controller cycle.
//
// ControlLoop owns the timing (which state, which period), the crossings to the hardware thread,
// the snapshot and the record ring; a law owns everything else. A law keeps its parameters and
// memory in itself and takes new parameters from its own mailbox at a cycle boundary (as
// JointTrajectoryAdmittanceController does with set_parameters), so the loop never needs to know
// what they are. JtacLaw plugs the composed JTAC controller in; another law (a joint impedance
// hold, a teleoperation follower, …) implements the same calls, the hand-over's included (below).
//
// Contract of every method: called on the controller thread only (or the lockstep caller),
// noexcept, no allocation, no lock, no wait. A law that cannot produce a command returns a status
// other than kOk and leaves the previous command in `out` (the loop still submits it, so the hardware
// thread keeps a finite target); a non-finite command is refused by the hardware interface and
// counted, never written.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "franka_hw/device.hpp"
#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "jtac_loop/cycle_record.hpp"
#include "jtac_loop/device_types.hpp"
#include "jtac_rt/mailbox.hpp"

namespace jtac::loop {

/// Where JtacLaw takes a tip's raw wrench from, each cycle.
enum class WrenchSource : std::uint8_t {
  kNone = 0,  ///< no sensor: zero
  kDevice,    ///< the device's F/T reading (DeviceState::wrench_sensor_N_Nm; zero without one)
  kExternal,  ///< a sensor outside the device: the newest reading given to JtacLaw::feed_wrench()
};

/// The command one law hands to the next at a switch, or the robot's echo at a start: position
/// [rad], velocity [rad/s] and acceleration [rad/s²] of each joint, and the controller time it was
/// commanded for [s]. ControlLoop hands over only at rest (velocity and acceleration zero): see
/// ControlLaw::begin_handover().
struct LawHandover {
  JointArray q_rad{};
  JointArray dq_rad_s{};
  JointArray ddq_rad_s2{};
  double time_s = 0.0;
};

/// A control law for ControlLoop (see the top of this file).
///
/// The hand-over contract: a switch from this law to another never cuts the command. The loop calls
/// begin_handover() and keeps running this law until at_rest(): the law brakes to rest from its own
/// command within the stop accelerations in force (what it was doing ends: a goal's result, a
/// stream's inputs, a custom law's calls). Then the loop deactivates it and activates the next law
/// with this law's last command, which the next law starts from.
class ControlLaw {
 public:
  virtual ~ControlLaw() = default;

  /// Called on the first cycle this law runs, before its first update(): start from `from` (hold it,
  /// zero the memory). `from` is the outgoing law's last command, or at a start of the loop the
  /// robot's echoed command (DeviceState::q_d_rad; the measurement when that is not finite) at rest.
  virtual void activate(const DeviceState& state, const LawHandover& from) noexcept = 0;

  /// The loop stops, or the hand-over ends: end whatever is running at controller time `time_s` [s].
  virtual void deactivate(double time_s) noexcept = 0;

  /// One cycle: `state` is what the hardware reported (tick, q, dq, wrench, …), `time_s` the
  /// controller time (the state's robot time) and `period_s` the time since the previous update.
  virtual UpdateStatus update(const DeviceState& state, double time_s, double period_s,
                              LawOutput& out) noexcept = 0;

  /// The loop will switch away from this law: from this cycle (controller time `time_s` [s]) on,
  /// brake to rest within the stop accelerations in force and take no new input. Idempotent.
  virtual void begin_handover(double time_s) noexcept = 0;

  /// True when the last command is at rest and nothing in force would move it: the loop may switch.
  virtual bool at_rest() const noexcept = 0;

  /// Another arm of the loop's group stopped by itself (ControlLoop::watch_peer): from this cycle
  /// (controller time `time_s` [s]) brake to rest within the stop accelerations in force; what was
  /// running ends (a goal, a stream's inputs, a custom law's calls) and the law stays, at rest.
  /// Default: as begin_handover().
  virtual void brake_for_peer(double time_s) noexcept { begin_handover(time_s); }

  /// The deceleration of each joint for this law's brakes from now on [rad/s²] (the controller's
  /// `stop_accelerations`, read live): given by the loop at activation and whenever it changes.
  virtual void set_stop_accelerations(const JointArray& a_rad_s2) noexcept = 0;

 protected:
  ControlLaw() = default;
  ControlLaw(const ControlLaw&) = default;
  ControlLaw& operator=(const ControlLaw&) = default;
};

/// `from`'s position where every entry is finite, else the measured position. Real-time safe.
JointArray handover_position(const DeviceState& state, const LawHandover& from) noexcept;

/// The output of a law without an F/T pipeline: the command (q_cmd_rad, dq_cmd_rad_s) is also the
/// reference, the error is command − measured, no joint offset, and the device's wrench reading,
/// unprocessed, is tip 0's raw and filtered wrench. Real-time safe.
void fill_plain_output(const DeviceState& state, const JointArray& q_cmd_rad, const JointArray& dq_cmd_rad_s,
                       LawOutput& out) noexcept;

/// The composed JTAC controller (trajectory engine + F/T pipeline + admittance) as a control law.
/// Each tip's raw wrench comes from its WrenchSource: by default the device's F/T reading feeds
/// tip 0 and the other tips read external sensors (feed_wrench(); zero until the first reading).
/// Goals, cancels, parameters, tares and events keep going through the controller itself, on the
/// non-real-time side.
class JtacLaw final : public ControlLaw {
 public:
  /// Holds `controller` by reference; it must be configured with seven joints and outlive the law.
  explicit JtacLaw(JointTrajectoryAdmittanceController& controller);

  void activate(const DeviceState& state, const LawHandover& from) noexcept override;
  void deactivate(double time_s) noexcept override;
  UpdateStatus update(const DeviceState& state, double time_s, double period_s,
                      LawOutput& out) noexcept override;
  /// A goal in motion brakes to rest and ends INVALID_STATE (EventDetail::kHandedOver); a stop
  /// already under way keeps its reason (a cancel still ends CANCELED).
  void begin_handover(double time_s) noexcept override;
  /// A goal in motion brakes to rest and ends INVALID_STATE (EventDetail::kPeerFault); later goals run.
  void brake_for_peer(double time_s) noexcept override;
  /// The engine is idle (or inactive) after the last update.
  bool at_rest() const noexcept override;
  /// No-op: the JTAC controller's stops read its own `stop_accelerations` parameter.
  void set_stop_accelerations(const JointArray& /*a_rad_s2*/) noexcept override {}

  JointTrajectoryAdmittanceController& controller() noexcept { return controller_; }

  /// Starts the controller's external-reference mode (a law that owns the reference, StreamLaw,
  /// borrows this law's wrench sources and output mapping) holding `q_rad` (the handed-over command;
  /// the measurement where it is not finite), with the admittance set from
  /// JointTrajectoryAdmittanceController::prepare_admittance(). Controller thread, in place of
  /// activate(); deactivate() ends it.
  void activate_external(const DeviceState& state, const JointArray& q_rad,
                         const AdmittanceGoal& admittance) noexcept;
  /// One cycle of the external-reference mode: the reference q [rad], dq [rad/s], ddq [rad/s²] from
  /// the caller, `tracking` while it is being followed (the admittance integrates). Fills `out` as
  /// update() does. Controller thread.
  UpdateStatus update_external(const DeviceState& state, double time_s, double period_s,
                               const JointArray& q_ref_rad, const JointArray& dq_ref_rad_s,
                               const JointArray& ddq_ref_rad_s2, bool tracking, LawOutput& out) noexcept;
  /// Why the last update_external() asks the caller to brake its reference (kSuccessful = no).
  ResultCode external_stop() const noexcept { return out_.external_stop; }

  /// Where each tip's raw wrench comes from, from the next cycle on. Any thread; never waits.
  void set_wrench_sources(const std::array<WrenchSource, kMaxTips>& sources) noexcept;
  /// The source of tip `tip` (kNone out of range). Any thread.
  WrenchSource wrench_source(int tip) const noexcept;

  /// Hands over the newest reading of tip `tip`'s external sensor [N, N·m] (sensor axes, the wrench
  /// the tool side exerts on the sensor): the next cycle takes it and holds it until the next
  /// reading. A non-finite value reaches the controller as it is (a sensor fault: the controller
  /// stops a running goal with ADMITTANCE_ERROR). False (nothing changes) for a tip the controller
  /// does not have or whose source is not kExternal. Non-real-time side, any thread: writers are serialised
  /// by a lock that the controller thread never takes.
  bool feed_wrench(int tip, const WrenchArray& wrench_N_Nm);

 private:
  // The raw wrench of every tip from its source into wrenches_ and out, the measurement into q_, dq_.
  void read_inputs(const DeviceState& state, LawOutput& out) noexcept;
  // The controller's output (out_) as the loop's.
  void write_output(LawOutput& out) const noexcept;

  JointTrajectoryAdmittanceController& controller_;
  JointTrajectoryState reference_;  // update_external()'s reference in the controller's types
  JointVector q_ = JointVector::Zero(kNumJoints);
  JointVector dq_ = JointVector::Zero(kNumJoints);
  TipWrenches wrenches_{};
  JtacOutput out_{};
  bool at_rest_ = true;  // the engine was idle or inactive after the last update()

  std::array<std::atomic<WrenchSource>, kMaxTips> sources_{};
  std::mutex feed_mutex_;                                   // feed_wrench() callers only
  std::array<LatestValue<WrenchArray>, kMaxTips> feeds_{};  // external readings → controller thread
  TipWrenchArray external_N_Nm_{};                          // controller thread: newest taken
};

}  // namespace jtac::loop
