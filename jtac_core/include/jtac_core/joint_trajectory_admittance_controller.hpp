// The Joint Trajectory Admittance Controller (JTAC): the trajectory engine plus, per tip, the
// force/torque pipeline and the Cartesian admittance, in one real-time update.
//
// Per cycle (control thread): every configured sensor's raw wrench goes through its pipeline
// (tare → Butterworth → deadband → threshold on the filtered wrench → payload gravity
// compensation → control frame, signal_processing.hpp). While a goal is active, a threshold
// violation brakes it with FORCE_TORQUE_THRESHOLD_EXCEEDED and a non-finite reading or integrator
// output with ADMITTANCE_ERROR (both through the engine's minimum-time stop); the admittance
// (admittance.hpp) integrates the compensated wrenches about the previous cycle's nominal reference
// into the joint offset that the engine adds to its command. A new goal resets the admittance's
// velocity state and switches every tip to the goal's parameters from the next cycle.
//
// A goal's admittance part stays here: the trajectory engine knows trajectories only. submit_goal()
// stages the validated set in this controller's own mailbox under the goal's id before the engine
// publishes the trajectory (GoalStager); the control thread takes it in the cycle the engine takes
// that goal, and drops it in the cycle the engine refuses it, so a refused goal's admittance never
// applies. A stitch that would change a tip's payload is refused through CycleSeams.
//
// Without a force/torque sensor (ft_sensor_name empty) this is a plain trajectory controller, and
// a goal asking for compliance or a force threshold is rejected with INVALID_GOAL saying so.
//
// External-reference mode (activate_external / update_external): the reference (q, dq, ddq) comes
// from the caller each cycle — a streamed target — instead of from the trajectory engine, which stays
// inactive; the admittance side runs unchanged (the same pipeline, thresholds, integrator and checks,
// with an admittance set validated by prepare_admittance() exactly as goal intake validates a goal's).
// A stop the admittance side asks for (threshold, non-finite reading or offset) cannot brake a
// reference the controller does not own: it freezes the offset, is latched in
// JtacOutput::external_stop until the next activation and reported once as a kGoalAborted event with
// goal_id 0; the caller brakes its reference.
//
// Threads as in trajectory_controller.hpp: configure / set_parameters / submit_goal /
// request_cancel / request_zero_fts / poll_event on the non-real-time side; activate / update /
// deactivate on the control thread (noexcept, no allocation, no lock).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "jtac_core/admittance.hpp"
#include "jtac_core/admittance_stability.hpp"
#include "jtac_core/kinematics.hpp"
#include "jtac_core/signal_processing.hpp"
#include "jtac_core/trajectory_controller.hpp"

namespace jtac {

/// One tip: where its sensor measures and which frame it controls.
struct TipFrames {
  std::string sensor_frame;
  std::string ee_frame;
};

/// Configure-time structure (read-only parameters).
struct JtacConfig {
  ControllerConfig trajectory;
  std::string urdf_xml;
  std::string base_frame;
  std::vector<TipFrames> tips;  ///< one per ee frame (at most kMaxTips)
  /// ft_sensor_name non-empty: the tips' sensors feed admittance and thresholds.
  bool has_force_torque_sensor = false;
  /// The rate update() runs at [Hz]: goal intake checks each compliant axis's stability for the
  /// admittance integrated at 1 / update_rate_hz (admittance_stability.hpp).
  double update_rate_hz = 1000.0;
  /// For tests only: false accepts admittance sets the stability check would reject (to show that
  /// they do diverge). Never turn it off on a robot.
  bool check_admittance_stability = true;
};

/// Run-time parameters, applied at a cycle boundary.
struct JtacParameters {
  ControllerParameters trajectory;
  double ft_cutoff_frequency_ratio = 1.0;  ///< Butterworth cutoff / update rate; 1.0 = no filtering
  double ft_force_deadband_N = 0.0;
  double ft_torque_deadband_Nm = 0.0;
  Vector6 default_absolute_force_torque_threshold = (Vector6() << 45, 45, 45, 10, 10, 10).finished();
  Eigen::Vector3d gravity_base_m_s2{0.0, 0.0, -9.81};
  double jacobian_damping = 0.01;
  int zero_fts_num_samples = 10;
};

/// Admittance and payload of one tip, as a goal gives them (non-real-time input).
struct TipGoal {
  std::string end_effector_frame;   ///< one of the configured ee frames; "" = tip by position
  std::vector<double> mass;         ///< 6 or empty (= no compliance) [kg, kg·m²]
  std::vector<double> stiffness;    ///< 6 or empty [N/m, Nm/rad]
  std::vector<double> damping;      ///< 6 or empty [N·s/m, Nm·s/rad]
  std::vector<bool> selected_axes;  ///< 6 or empty
  Eigen::Isometry3d T_ee_control = Eigen::Isometry3d::Identity();
  double end_effector_mass_kg = 0.0;
  std::vector<double> end_effector_cog_m;               ///< 3 or empty, ee frame
  std::vector<double> absolute_force_torque_threshold;  ///< 6 or empty = the goal's
};

/// A goal: the trajectory plus admittance per tip.
struct JtacGoal {
  TrajectoryGoal trajectory;
  std::vector<TipGoal> tips;  ///< empty = track the trajectory only
  double joint_damping_per_s = 0.0;
  std::vector<double> absolute_force_torque_threshold;  ///< 6 or empty = the parameter default
};

/// Per-cycle sensor input: one raw wrench per tip, in its sensor frame (the wrench the tool side
/// exerts on the sensor) [N, Nm].
using TipWrenches = std::array<Vector6, kMaxTips>;

/// What one cycle produces beyond the engine's output.
struct JtacOutput {
  ControllerOutput trajectory;
  TipWrenches wrench_filtered_sensor{};  ///< tared, filtered, deadbanded, with payload weight
  TipWrenches wrench_control{};          ///< compensated, in the control frame (admittance input)
  JointVector joint_offset_rad = JointVector::Zero(0);
  /// External-reference mode: why the caller must brake its reference (kSuccessful = it need not);
  /// latched until the next activation. Always kSuccessful in goal mode (the engine brakes itself).
  ResultCode external_stop = ResultCode::kSuccessful;
};

/// Trajectory tracking with Cartesian admittance at one or more tips.
class JointTrajectoryAdmittanceController {
 public:
  /// Claims all memory. Throws std::invalid_argument naming the offending frame, joint or value.
  void configure(const JtacConfig& config, const JtacParameters& parameters);

  /// Validates and publishes run-time parameters; "" or a message naming the parameter.
  std::string set_parameters(const JtacParameters& parameters);

  /// Validates (trajectory and admittance, including each compliant axis's discrete-time stability
  /// at update_rate_hz) and queues a goal; an accepted lightly damped set comes with `warning`.
  SubmitResult submit_goal(const JtacGoal& goal, double now_s);

  /// Validates the admittance part of `goal` (tips, joint damping, thresholds; its trajectory is not
  /// read) exactly as submit_goal() does — same checks, same messages, the same stability check at
  /// update_rate_hz — into `out` for activate_external(). "" or the rejection; `warning` as
  /// SubmitResult::warning. Non-real-time side.
  std::string prepare_admittance(const JtacGoal& goal, AdmittanceGoal& out, std::string& warning) const {
    return validate_admittance(goal, out, warning);
  }

  /// Cancels goal `goal_id`.
  void request_cancel(std::uint64_t goal_id) noexcept { trajectory_.request_cancel(goal_id); }

  /// Asks for a tare of the sensor of tip `tip`; "" when queued (the outcome arrives as an event),
  /// else why not (unknown tip, no sensor, a goal is executing).
  std::string request_zero_fts(int tip);

  /// Next event, if any. Non-real-time side.
  bool poll_event(Event& event) noexcept { return trajectory_.poll_event(event); }

  /// Starts control (the command reference is set from the first measurement). Real-time safe.
  void activate() noexcept;
  /// Starts control holding `command_position_rad`, the position the hardware is being commanded
  /// (see TrajectoryController::activate). Real-time safe.
  void activate(const JointVector& command_position_rad) noexcept;

  /// Stops control at once (see TrajectoryController::deactivate). Real-time safe.
  void deactivate(double time_s) noexcept;

  /// The loop is about to hand the arm to another control law: from the next update() on, a goal in
  /// motion (executing, waiting, settling, or taken later) brakes to rest within stop_accelerations
  /// and ends ABORTED / INVALID_STATE with EventDetail::kHandedOver; a stop already under way (a
  /// cancel, a tolerance) keeps its own reason. Cleared by the next activation. Control thread.
  void request_handover_stop() noexcept { handover_stop_ = true; }

  /// Another arm of the same group stopped by itself: at the next update() a goal in motion brakes
  /// to rest within stop_accelerations and ends ABORTED / INVALID_STATE with EventDetail::kPeerFault
  /// (a stop already under way keeps its own reason). Once: goals taken afterwards run. Control thread.
  void request_peer_stop() noexcept { peer_stop_ = true; }

  /// One control cycle. Real-time safe.
  UpdateStatus update(double time_s, double period_s, const JointVector& position_rad,
                      const JointVector& velocity_rad_s, const TipWrenches& wrench_raw_sensor,
                      JtacOutput& out) noexcept;

  /// Starts control in the external-reference mode (see the top of this file), holding
  /// `command_position_rad` (the position the hardware is being commanded) with the admittance set
  /// `admittance` from prepare_admittance(): offset and velocity zeroed, thresholds and payload in
  /// force. The trajectory engine stays inactive (a goal is refused). Real-time safe.
  void activate_external(const JointVector& command_position_rad, const AdmittanceGoal& admittance) noexcept;

  /// One cycle of the external-reference mode: the F/T pipeline and thresholds as during a goal; with
  /// `tracking` (the reference is being followed) and no stop latched, one admittance step about the
  /// previous cycle's reference (else the offset stays frozen, as during a goal's stop); command =
  /// `reference` + offset in position, the reference's velocity and acceleration. kInactive unless
  /// activate_external() ran. Real-time safe.
  UpdateStatus update_external(double time_s, double period_s, const JointVector& position_rad,
                               const JointTrajectoryState& reference, const TipWrenches& wrench_raw_sensor,
                               bool tracking, JtacOutput& out) noexcept;

  /// True while the external-reference mode runs. Any thread.
  bool external_active() const noexcept { return external_active_.load(std::memory_order_acquire); }

  const TrajectoryController& trajectory() const noexcept { return trajectory_; }
  int num_tips() const noexcept { return num_tips_; }
  const std::vector<std::string>& joint_names() const noexcept { return trajectory_.joint_names(); }
  const std::vector<std::string>& ee_frames() const noexcept { return ee_frame_names_; }
  const std::vector<std::string>& sensor_frames() const noexcept { return sensor_frame_names_; }

 private:
  /// A goal's admittance part, staged under the goal's id until the engine takes or refuses it.
  struct StagedAdmittance {
    std::uint64_t goal_id = 0;
    AdmittanceGoal admittance;
  };

  void on_activation() noexcept;  // the admittance side of activate()
  // "" or a message naming the force/torque parameter and its value.
  static std::string validate_force_torque(const JtacParameters& parameters);
  // "" or the rejection; `warning` collects what is accepted but worth saying (low damping ratios).
  std::string validate_admittance(const JtacGoal& goal, AdmittanceGoal& out, std::string& warning) const;
  std::string check_stability(const JtacGoal& goal, const AdmittanceGoal& out, std::string& warning) const;
  void apply_goal(const AdmittanceGoal* goal) noexcept;
  // Before the engine's cycle: a staged goal whose payload differs from the goal in motion is refused
  // as a stitch (CycleSeams::stitch_refused_goal_id). `pending_goal_id`: the engine's pending goal.
  void refuse_payload_stitch(std::uint64_t pending_goal_id) noexcept;
  // After an engine call that may take or refuse its pending goal `pending_before` (held before the
  // call): that goal's staged admittance if the engine took it (valid until the next take), else null;
  // a refused goal's is dropped.
  const AdmittanceGoal* take_staged_admittance() noexcept;
  void apply_force_torque_parameters() noexcept;
  void take_parameters() noexcept;  // new run-time parameters, at a cycle boundary
  // Every tip's F/T pipeline (tares, filter, threshold, compensation) into wrench_control_ and `out`.
  // `in_force`: a goal or an external reference is in force, so a tare is refused and a threshold
  // violation or a non-finite reading asks for a stop in seams_.
  void process_wrenches(double time_s, const JointVector& position_rad, const TipWrenches& wrench_raw_sensor,
                        bool in_force, JtacOutput& out) noexcept;
  // A tare's outcome for tip `tip` as an event (offset_force_N: |offset force| when it succeeded).
  void report_tare(int tip, EventType type, EventDetail detail, double offset_force_N,
                   double time_s) noexcept;
  // One admittance step of period_s about previous_reference_rad_; a non-finite result asks for a stop.
  void step_admittance(double period_s) noexcept;

  TrajectoryController trajectory_;
  bool handover_stop_ = false;  // request_handover_stop(), control thread
  bool peer_stop_ = false;      // request_peer_stop(), control thread; taken by the next update()
  Kinematics kinematics_;
  Admittance admittance_;
  std::array<ForceTorquePipeline, kMaxTips> pipelines_{};
  std::array<int, kMaxTips> sensor_frames_{};
  std::array<int, kMaxTips> ee_frames_{};
  std::array<Eigen::Isometry3d, kMaxTips> T_sensor_ee_{};
  std::vector<std::string> ee_frame_names_;
  std::vector<std::string> sensor_frame_names_;
  int num_tips_ = 0;
  bool has_sensor_ = false;
  double period_s_ = 0.001;  // 1 / update_rate_hz: the step the stability check assumes [s]
  bool check_stability_ = true;

  // Non-real-time side.
  JtacParameters params_nonrt_;

  // Crossings.
  Mailbox<StagedAdmittance> staged_admittance_;  // written under the engine's submit lock (GoalStager)
  LatestValue<JtacParameters> parameters_;
  std::array<std::atomic<bool>, kMaxTips> tare_requested_{};
  std::atomic<bool> goal_active_{false};
  std::atomic<bool> external_active_{false};

  // Control thread.
  JtacParameters params_;
  AdmittanceGoal current_goal_;  // parameters in force (defaults while idle)
  ControllerMode last_mode_ = ControllerMode::kInactive;
  std::uint64_t last_goal_id_ = 0;
  JointVector previous_reference_rad_ = JointVector::Zero(0);
  bool have_reference_ = false;
  TipWrenches wrench_control_{};
  CycleSeams seams_;
  ResultCode external_stop_ = ResultCode::kSuccessful;  // latched stop of the external-reference mode
  JointTrajectoryState last_external_command_;          // last finite command of that mode
};

}  // namespace jtac
