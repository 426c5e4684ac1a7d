// The JTAC trajectory engine: goal intake, the real-time state machine, stops and stitching.
//
// Threads. configure(), set_parameters(), submit_goal(), request_cancel() and poll_event() run on
// the non-real-time side (one thread at a time: they serialise on a mutex that the real-time side
// never touches). activate(), update() and deactivate() run on the control thread; they are
// noexcept, allocation-free and lock-free. Goals cross in a preallocated Mailbox, parameters in a
// LatestValue, events come back through an SpscRing; all taken at the start of a cycle.
//
// States: inactive → idle (holding the command) → [waiting for a future start] → executing →
// [settling] → idle; any of them → stopping (minimum-time brake, stop_trajectory.hpp) → idle.
// A goal's result event is emitted only once the commanded velocity is zero.
//
// Choices where the spec is silent (ros2_controllers' JTC users' expectations):
//   * Path tolerance compares the nominal reference (trajectory sampled now, without the admittance
//     offset) with the measured position. A non-finite measurement during motion fails that check:
//     PATH_TOLERANCE_VIOLATED with the joint, interface and value in the message.
//   * At the trajectory end, a final point with non-zero velocity is braked from (the result, decided
//     at the end time, comes after the stop); settling (goal_time_tolerance > 0) holds the final
//     position at rest.
//   * A new goal while braking is held in the goal mailbox until the brake ends (at most the stop's
//     predicted duration) and then taken from rest like a goal arriving while idle: it starts if it
//     is continuous with the rest position (start_position/velocity_tolerance), else it is refused
//     with the jump (INVALID_GOAL). MoveIt's stop-and-replan cancels and sends the replanned goal
//     without waiting for the cancel result, i.e. while the arm still brakes. While a goal is held,
//     submit_goal() answers `busy` (the mailbox holds one pending goal).
//   * A goal stamped in the future holds the current position until then: while idle it waits; while
//     executing it is stitched at once and must therefore continue the active path at rest
//     (velocity check), i.e. it is accepted only if the arm is (nearly) still.
//   * Tolerances: +inf means "no limit" (the ROS adapter maps control_msgs' −1 onto it).
//   * During a stop the per-cycle joint offset (admittance) is frozen at its last value: the stop
//     brakes the last command, offset included.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "jtac_core/events.hpp"
#include "jtac_core/result_code.hpp"
#include "jtac_core/stop_trajectory.hpp"
#include "jtac_core/time_scaling.hpp"
#include "jtac_core/trajectory.hpp"
#include "jtac_core/trajectory_clock.hpp"
#include "jtac_core/types.hpp"
#include "jtac_rt/mailbox.hpp"

namespace jtac {

// ------------------------------------------------------------------------------------ inputs

/// One waypoint as it arrives (goal joint order). Empty velocities/accelerations = not provided.
struct GoalPoint {
  double time_from_start_s = 0.0;
  std::vector<double> positions_rad;
  std::vector<double> velocities_rad_s;
  std::vector<double> accelerations_rad_s2;
  /// jtac commands positions: a point that gives efforts is refused (INVALID_GOAL), not ignored.
  std::vector<double> effort;
};

/// A trajectory goal as it arrives from an adapter (ROS action, Python API). Non-real-time type.
struct TrajectoryGoal {
  std::vector<std::string> joint_names;
  std::vector<GoalPoint> points;
  /// Controller-clock time at which time_from_start = 0 [s]; 0 = when the controller takes it.
  double start_time_s = 0.0;
  /// Per joint in joint_names order [rad]; empty = the parameter defaults; +inf = no limit.
  std::vector<double> path_tolerance_rad;
  std::vector<double> goal_tolerance_rad;
  /// Settling time after the end [s]; 0 = default_goal_time_tolerance.
  double goal_time_tolerance_s = 0.0;
};

/// Configure-time structure (read-only parameters).
struct ControllerConfig {
  std::vector<std::string> joint_names;
  /// Joints without a travel limit whose feedback may wrap (must be a subset of joint_names).
  std::vector<std::string> continuous_joints;
  int max_trajectory_points = 10000;
  /// The robot's joint velocity limits [rad/s] and acceleration limits [rad/s²], controller order
  /// (the robot tables). They bound the motion jtac inserts itself: the connecting segment from the
  /// current command to a goal's first point. Empty = not checked.
  std::vector<double> max_velocity_rad_s;
  std::vector<double> max_acceleration_rad_s2;
};

/// Run-time parameters, applied atomically at a cycle boundary. Per-joint vectors in controller
/// joint order.
struct ControllerParameters {
  JointVector stop_accelerations_rad_s2 = JointVector::Zero(0);
  JointVector default_path_tolerance_rad = JointVector::Zero(0);
  JointVector default_goal_tolerance_rad = JointVector::Zero(0);
  double default_goal_time_tolerance_s = 0.0;
  double time_scale_percentage = 100.0;
  double time_scale_filter_constant_s = 0.1;
  double start_position_tolerance_rad = 0.05;
  double start_velocity_tolerance_rad_s = 0.05;
  double stitch_position_tolerance_rad = 0.01;
  double stitch_velocity_tolerance_rad_s = 0.05;
};

/// Per-cycle inputs from other components (the admittance issue's seams).
struct CycleSeams {
  /// Added to the position command of every joint [rad]; null = none.
  const JointVector* joint_offset_rad = nullptr;
  /// Brake the active goal with this result code (e.g. FORCE_TORQUE_THRESHOLD_EXCEEDED).
  bool stop_requested = false;
  ResultCode stop_code = ResultCode::kSuccessful;
  EventDetail stop_detail = EventDetail::kExternalStop;
  int stop_index = -1;  ///< axis or joint the reason is about, −1 = none
  double stop_value = 0.0;
  double stop_limit = 0.0;
  /// A non-finite input of this cycle that the engine does not read itself (a force/torque
  /// reading): a goal arriving now is refused with INVALID_GOAL naming it; kNone = none.
  EventDetail input_fault = EventDetail::kNone;
  int input_fault_index = -1;  ///< axis (6·tip + axis) the fault is about
  double input_fault_value = 0.0;
  /// A pending goal that another component refuses to stitch onto the goal in motion (its own
  /// per-goal data may not change mid-motion, e.g. a payload): refused with INVALID_GOAL and this
  /// detail and index where it would replace a goal in motion; 0 = none.
  std::uint64_t stitch_refused_goal_id = 0;
  EventDetail stitch_refusal_detail = EventDetail::kNone;
  int stitch_refusal_index = -1;
};

// ------------------------------------------------------------------------------------ outputs

/// What the engine is doing.
enum class ControllerMode : std::uint8_t { kInactive, kIdle, kWaiting, kExecuting, kSettling, kStopping };

/// Status of one update().
enum class UpdateStatus : std::uint8_t {
  kOk,
  kInactive,        ///< not activated: the output holds the last command
  kBadInput,        ///< measurement of the wrong size: the output holds the last command
  kHoldingCommand,  ///< a non-finite command was caught: the last finite one is held
};

/// Everything one cycle produces. Sized at configure; update() fills it without allocating.
struct ControllerOutput {
  JointTrajectoryState command;                  ///< to the hardware: reference + offset
  JointTrajectoryState reference;                ///< nominal trajectory sample (no offset)
  JointVector error_rad = JointVector::Zero(0);  ///< reference − measured (shortest for continuous joints)
  ControllerMode mode = ControllerMode::kInactive;
  double time_scale = 1.0;         ///< s ∈ [0, 1]
  double trajectory_time_s = 0.0;  ///< τ of the active trajectory
  std::uint64_t goal_id = 0;       ///< active goal, 0 = none
};

/// Result of submit_goal().
struct SubmitResult {
  ResultCode code = ResultCode::kSuccessful;
  std::string message;        ///< names field, joint, index and value on rejection
  std::uint64_t goal_id = 0;  ///< assigned on acceptance
  bool busy = false;          ///< the previous goal is still in the mailbox: retry in a cycle
  std::string warning;        ///< accepted, but worth saying (an admittance axis with little damping)
};

/// A goal converted into controller order and preallocated storage (a mailbox buffer).
struct PreparedGoal {
  std::uint64_t goal_id = 0;
  Trajectory trajectory;
  JointVector path_tolerance_rad = JointVector::Zero(0);
  JointVector goal_tolerance_rad = JointVector::Zero(0);
  double goal_time_tolerance_s = 0.0;
  double start_time_s = 0.0;  ///< 0 = when taken
};

/// Called by submit_goal() under its lock once a goal is valid and the mailbox free, with the id the
/// goal is about to get and before the control thread can see it: a component that keeps data of its
/// own per goal stages it there. false = that component is busy: the submission answers `busy`.
using GoalStager = std::function<bool(std::uint64_t goal_id)>;

/// The trajectory engine.
class TrajectoryController {
 public:
  /// Event ring capacity; events are rare (a few per goal) and drained by the non-RT side.
  static constexpr std::size_t kEventCapacity = 256;
  /// Largest |position| [rad], |velocity| [rad/s] or |acceleration| [rad/s²] a point may give: far
  /// beyond any joint (a continuous joint would need 160 000 turns), yet small enough that
  /// interpolation neither overflows nor leaves a stop that never ends.
  static constexpr double kMaxPointMagnitude = 1e6;
  /// Shortest segment between two points [s]: a thousand times below the fastest control cycle;
  /// closer points are one point twice (with rounding noise), and interpolation divides by the gap.
  static constexpr double kMinSegmentS = 1e-6;

  /// Claims all memory. Throws std::invalid_argument naming the offending joint or value.
  void configure(const ControllerConfig& config, const ControllerParameters& parameters);

  /// Checks run-time parameters; returns "" or a message naming the parameter, joint and value.
  std::string validate_parameters(const ControllerParameters& parameters) const;

  /// Publishes new run-time parameters (validated first); applied at the next cycle boundary.
  /// Returns "" or the validation message (nothing is applied then).
  std::string set_parameters(const ControllerParameters& parameters);

  /// Validates and queues a goal. `now_s` (the controller clock at submission) is not needed: a
  /// past stamp is judged when the control thread takes the goal, through the speed scale's history.
  /// `stage` (optional) stages a caller's own per-goal data under the goal's id (GoalStager).
  SubmitResult submit_goal(const TrajectoryGoal& goal, double now_s, const GoalStager& stage = {});

  /// The id of the goal waiting in the mailbox, 0 = none. Control thread only.
  std::uint64_t pending_goal_id() noexcept {
    const PreparedGoal* goal = goals_.peek();
    return goal != nullptr ? goal->goal_id : 0;
  }

  /// The id of the last goal the control thread took from the mailbox or refused there, 0 = none:
  /// ids rise with each submission, so a goal with an id up to this one has been decided. Control
  /// thread only.
  std::uint64_t last_consumed_goal_id() const noexcept { return last_consumed_goal_id_; }

  /// The goal being executed (or waited for, settled, braked for), or null. Control thread only.
  const PreparedGoal* active_goal() const noexcept { return active_goal_; }

  /// Queues an event from another real-time component (admittance, F/T). Control thread only.
  void report(const Event& event) noexcept { events_.push(event); }

  /// Requests the cancellation of goal `goal_id` (active or queued). Any thread.
  void request_cancel(std::uint64_t goal_id) noexcept {
    cancel_goal_id_.store(goal_id, std::memory_order_release);
  }

  /// Next event, if any. Non-real-time side.
  bool poll_event(Event& event) noexcept { return events_.pop(event); }

  /// Events lost because nobody drained the ring.
  std::uint64_t dropped_events() const noexcept { return events_.dropped(); }

  /// Starts control; the command reference is set from the measured position at the first
  /// update(). Real-time safe.
  void activate() noexcept;

  /// Starts control holding `command_position_rad`: the position the hardware is being commanded
  /// (ros2_controllers' JTC starts from its command interface's value), so that activation moves
  /// nothing where the measured position lags the command (a robot's servo error, a push, an arm
  /// still settling). Non-finite or of the wrong size: the first measurement, as activate().
  /// Real-time safe.
  void activate(const JointVector& command_position_rad) noexcept;

  /// Stops control at once (no stop trajectory): a pending goal ends ABORTED / INVALID_STATE (or
  /// with the reason it was already braking for); the last command stays. Real-time safe.
  void deactivate(double time_s) noexcept;

  /// One control cycle. Real-time safe: noexcept, no allocation, no lock, no exception.
  UpdateStatus update(double time_s, double period_s, const JointVector& position_rad,
                      const JointVector& velocity_rad_s, const CycleSeams& seams,
                      ControllerOutput& out) noexcept;

  const std::vector<std::string>& joint_names() const noexcept { return config_.joint_names; }
  int num_joints() const noexcept { return num_joints_; }
  bool is_active() const noexcept { return active_.load(std::memory_order_acquire); }

 private:
  /// Why the active goal ends or brakes: the event it ends with, its code and detail, and the joint
  /// (or axis), value and limit the reason is about (−1 and 0 where there is none).
  struct StopRequest {
    EventType outcome = EventType::kGoalAborted;
    ResultCode code = ResultCode::kSuccessful;
    EventDetail detail = EventDetail::kNone;
    int joint = -1;
    double value = 0.0;
    double limit = 0.0;
  };

  // One cycle, in the order update() calls them; all real-time safe. The `inline` ones are defined and
  // called only in trajectory_controller_update.cpp, so that the compiler folds them into update()
  // (the cycle's instruction count stays that of one function, malloc_tests/callgrind_update.sh).
  void apply_parameters(const ControllerParameters& p) noexcept;
  // The first non-finite measured position or velocity (detail, joint, value); detail kNone = none.
  inline Event first_non_finite_measurement(const JointVector& position_rad,
                                            const JointVector& velocity_rad_s) const noexcept;
  // The first cycle after activation: the command starts at activate()'s position, else the measured one.
  inline void initialize_command(double time_s, double period_s, const JointVector& position_rad) noexcept;
  // Requests that change the mode: a cancel, a new goal, a stop of the seams, a bad measurement.
  // Returns whether a goal was taken this cycle.
  inline bool serve_requests(double time_s, double period_s, double scale_mid, const Event& measured_fault,
                             const CycleSeams& seams) noexcept;
  // Waiting → executing at the start time, then one cycle of execution or of settling.
  // `check_path`: the measurement is finite, so the path tolerance can be judged.
  inline void advance_goal(double time_s, double period_s, double scale_mid, const TimeScale& ts,
                           bool taken_this_cycle, const JointVector& position_rad, bool check_path) noexcept;
  inline void execute(double time_s, const TimeScale& ts, const JointVector& position_rad,
                      bool check_path) noexcept;
  // The trajectory's end: success, the goal tolerance's verdict, settling, or a brake from a moving point.
  inline void reach_end(double time_s, const JointVector& position_rad) noexcept;
  inline void settle(double time_s, double elapsed_s, const JointVector& position_rad,
                     bool check_path) noexcept;
  // The reference of this cycle for the mode; true when the command carries this cycle's offset.
  inline bool step_reference(double time_s) noexcept;
  // The brake reached rest: the braked goal's result, idle from this cycle on.
  inline void end_stop(double time_s) noexcept;
  // out.command = reference + joint offset; a non-finite offset brakes with ADMITTANCE_ERROR.
  inline void apply_offset(double time_s, const CycleSeams& seams, bool command_has_offset,
                           ControllerOutput& out) noexcept;
  // The final guard: nothing non-finite leaves; holds the last finite command and brakes.
  inline UpdateStatus guard_command(double time_s, ControllerOutput& out) noexcept;
  inline void write_output(double time_s, const JointVector& position_rad, const TimeScale& ts,
                           ControllerOutput& out) noexcept;

  // Goal intake (trajectory_controller_intake.cpp).
  // `fault`: the first non-finite input of this cycle (detail kNone = none), which refuses a goal.
  // `seams`: a stitch another component refuses (CycleSeams::stitch_refused_goal_id).
  void handle_new_goal(double time_s, double period_s, double scale_mid, const Event& fault,
                       const CycleSeams& seams) noexcept;
  // The active path at this cycle's time (path_now_traj_, path_now_): what the reference would be
  // without a new goal.
  void sample_active_path(double period_s, double scale_mid) noexcept;
  // Emits the goal's refusal and drops it from the mailbox.
  void decline_goal(EventDetail detail, ResultCode code, std::uint64_t goal_id, int joint, double value,
                    double limit, double time_s) noexcept;
  // Takes the checked goal out of the mailbox: executing from τ = tau_s, or waiting when τ < 0.
  void take_goal(double time_s, std::uint64_t goal_id, double tau_s, double start_s) noexcept;
  bool check_candidate(PreparedGoal& goal, double time_s, double tau_s, bool from_motion) noexcept;
  // What jtac interpolates itself — the segment before a goal's first point, a positions-only
  // spline — between trajectory times from and to stays within the robot's limits.
  // The connecting segment is refused only where it needs more than both the robot's limit and the
  // motion it joins (nominal_peaks()).
  bool check_interpolation_limits(const PreparedGoal& goal, double time_s, double from_tau_s,
                                  double to_tau_s) noexcept;
  // What the goal's own path needs on `joint` where a connecting segment (from from_tau_s to the
  // first point at t_first_s) joins it: the first point, and the path over as long a stretch after
  // it as the connection lasts (at least the first segment).
  SegmentPeaks nominal_peaks(const Trajectory& traj, int joint, double from_tau_s, double t_first_s) noexcept;

  // Stops, results and events (trajectory_controller_update.cpp).
  void begin_stop(double time_s, const StopRequest& request) noexcept;
  void finish_goal(double time_s, const StopRequest& request) noexcept;
  void emit(EventType type, EventDetail detail, ResultCode code, std::uint64_t goal_id, int joint,
            double value, double limit, double time_s, double stop_duration_s = 0.0) noexcept;
  // The goal's result event for `request`.
  void emit_result(const StopRequest& request, std::uint64_t goal_id, double time_s) noexcept;
  bool first_out_of_tolerance(const JointVector& reference, const JointVector& measured,
                              const JointVector& tolerance, int& joint, double& deviation) const noexcept;
  void hold(JointTrajectoryState& state) const noexcept;
  // Brakes with PATH_TOLERANCE_VIOLATED when the measurement left the reference; true if it did.
  bool stop_if_off_path(double time_s, const JointVector& position_rad) noexcept;
  // Trajectory-time derivatives → real time: v·s, a·s² + v·ṡ.
  static void scale_to_real_time(JointTrajectoryState& state, const TimeScale& ts) noexcept;

  ControllerConfig config_;
  int num_joints_ = 0;
  std::vector<bool> continuous_;

  // Non-RT side.
  std::mutex submit_mutex_;
  std::uint64_t next_goal_id_ = 1;
  ControllerParameters params_nonrt_;

  // Crossings.
  Mailbox<PreparedGoal> goals_;
  std::uint64_t last_consumed_goal_id_ = 0;
  // The mailbox's pending goal refused / taken, its id remembered (last_consumed_goal_id()).
  void decline_pending() noexcept {
    if (const PreparedGoal* goal = goals_.peek(); goal != nullptr) {
      last_consumed_goal_id_ = goal->goal_id;
    }
    goals_.decline();
  }
  PreparedGoal& take_pending() noexcept {
    PreparedGoal& goal = goals_.take();
    last_consumed_goal_id_ = goal.goal_id;
    return goal;
  }
  LatestValue<ControllerParameters> parameters_;
  SpscRing<Event, kEventCapacity> events_;
  std::atomic<std::uint64_t> cancel_goal_id_{0};
  std::atomic<bool> active_{false};

  // RT state (control thread only).
  ControllerParameters params_;
  TimeScaler time_scaler_;
  double scale_prev_ = 1.0;  // s of the previous cycle
  TrajectoryClock clock_;    // σ(t): maps header stamps to elapsed trajectory time
  JointVector max_velocity_rad_s_ = JointVector::Zero(0);       // empty = unchecked
  JointVector max_acceleration_rad_s2_ = JointVector::Zero(0);  // empty = unchecked
  ControllerMode mode_ = ControllerMode::kInactive;
  bool command_initialized_ = false;
  bool has_initial_command_ = false;  // activate(command): the reference starts there
  JointVector initial_command_rad_ = JointVector::Zero(0);
  PreparedGoal* active_goal_ = nullptr;  // points into goals_ (the reader buffer)
  std::uint64_t active_goal_id_ = 0;
  double tau_s_ = 0.0;
  double settle_elapsed_s_ = 0.0;
  double settle_window_s_ = 0.0;
  StopTrajectory stop_;
  double stop_start_s_ = 0.0;
  JointVector stop_decel_rad_s2_ = JointVector::Zero(0);
  StopRequest stop_reason_;  // the result the brake ends with
  bool stop_has_goal_ = false;
  JointTrajectoryState last_command_;  // last emitted (finite) command
  double last_command_time_s_ = 0.0;   // controller clock of last_command_
  JointTrajectoryState reference_;     // nominal reference of this cycle
  JointTrajectoryState hold_;          // position held while idle/waiting
  JointTrajectoryState scratch_;
  JointTrajectoryState path_now_;       // the active path at this cycle's time, real-time derivatives
  JointTrajectoryState path_now_traj_;  // the same in trajectory-time derivatives (d/dτ)
  JointVector last_offset_rad_ = JointVector::Zero(0);
};

}  // namespace jtac
