// A simulated Franka arm: the MJCF of jtac_py/robots (or any model with the same names) in MuJoCo,
// stepped once per device tick, behind the Device contract of device.hpp.
//
// The robot's joint impedance. Each tick applies, per joint, the torque
//   τ = K·(q_d − q) + D·(dq_d − dq) + bias(q, dq),   clipped to the motor's limits (ctrlrange, forcerange),
// with bias = MuJoCo's qfrc_bias (gravity + Coriolis + centrifugal) at the tick's start and (q_d, dq_d)
// the command in force: what Franka's internal joint impedance does with position/velocity commands.
// Default gains are Table 2 of the fer-ros2 paper (the asynchronous Franka ROS 2 stack; joints
// 1–4 K 600 N·m/rad D 30 N·m·s/rad, 5: 250/10, 6: 150/10, 7: 50/5); they track a 0.47 rad/s sinusoid on joint
// 4 within 1.7 mrad, so nothing stiffer is needed. Joint damping and armature stay as the MJCF has them
// (uncompensated). The bias is the model's own, so a held pose has no steady-state error (the real robot's
// model is not that exact).
//
// One tick, in this order: take the newest command due at this tick (else re-apply the previous
// one), take newly pushed wrenches, compute τ and the push forces from the state at the tick's start,
// mj_step2 (acceleration, F/T sensor, integration), then mj_step1 at the new state (kinematics and
// bias for the next tick). The state of tick n therefore holds q, dq at time n·period, the command
// and torques applied over the step into it, and the F/T reading of that step (the sensor sees the
// contact forces of the interval, as a real sensor's sample would).
//
// Clocks. kLockstep: read_once() never sleeps; each read_once() advances exactly one physics step
// on a virtual clock, and a command written before it applies to that step: deterministic,
// bit-identical between runs, as fast as the CPU allows. kRealTime: the device keeps its own steady
// clock, started by the first read_once(), which steps tick 1 at once; tick n falls due (n − 1)
// periods later. read_once() sleeps until the next tick is due and steps; a reader that comes late
// steps through every tick that fell due (holding the command in force for each, as the robot
// would) and gets the newest state, with the ticks it never saw counted in
// DeviceState::ticks_missed_by_reader. A command written after its
// tick was due applies from the next due tick (the missed tick is counted as one without a new
// command), like a lost packet.
//
// Threads: read_once(), write_once() on one thread (the hardware real-time thread); push() and
// pushes_active() from any thread. Everything else (configure, reset, model/data access) only while
// no other thread is in read_once()/write_once().
//
// The Franka Hand. A model with the finger joints `<prefix>_finger_joint1/2` and the actuator
// `<prefix>_hand` (jtac_py.robots' hand=True) has the hand: its controller (simulated_hand.hpp) runs in
// each tick, after the arm's torques and before mj_step2, on the width q1 + q2 at the tick's start.
// reset() opens it (0.08 m) and puts every other free body (the grasp object) back where the model
// has it. The arm's joint impedance never sees the fingers: only the seven arm joints are commanded.
//
// Allocation: all memory is claimed in configure(). MuJoCo's mj_step1/mj_step2/mj_applyFT use the
// mjData arena made by mj_makeData and call no malloc (checked by test_mujoco_device_noalloc).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "franka_hw/device.hpp"
#include "franka_hw/simulated_hand.hpp"

struct mjModel_;
struct mjData_;

namespace jtac::hw {

/// How the simulated device keeps time.
enum class ClockMode : std::uint8_t {
  /// Each read_once() advances one step on a virtual clock, without sleeping.
  kLockstep,
  /// read_once() waits for the next tick of the device's own steady clock.
  kRealTime,
};

/// Configuration of a MujocoDevice.
struct MujocoDeviceConfig {
  /// The MJCF text (not a path). jtac_py.robots.mjcf_xml() makes one with a tool; the committed
  /// jtac_py/robots/fr3.xml has none.
  std::string mjcf_xml;
  /// Names in the model: joints and their motor actuators `<prefix>_joint1..7`, force and torque
  /// sensors `<prefix>_ft_force` / `<prefix>_ft_torque` (optional: without them, no wrench).
  std::string name_prefix = "fr3";
  /// Joint positions at configure() and reset() [rad]; the first command in force holds them.
  JointArray q_init_rad = kFr3HomeRad;
  /// Joint stiffness K of the robot's joint impedance [N·m/rad].
  JointArray stiffness_Nm_rad = {600.0, 600.0, 600.0, 600.0, 250.0, 150.0, 50.0};
  /// Joint damping D of the robot's joint impedance [N·m·s/rad].
  JointArray damping_Nm_s_rad = {30.0, 30.0, 30.0, 30.0, 10.0, 10.0, 5.0};
  /// Lockstep (virtual clock) or real time (the device's own steady clock).
  ClockMode clock = ClockMode::kLockstep;
};

/// The simulated arm. The device period is the model's timestep (0.001 s in jtac's MJCF).
class MujocoDevice final : public Device {
 public:
  /// Most external wrenches applied at once; more are dropped and counted.
  static constexpr int kMaxPushes = 8;

  /// An unconfigured device: read_once()/write_once() return kNotConfigured.
  MujocoDevice() = default;
  /// Constructs and configures (see configure()).
  explicit MujocoDevice(const MujocoDeviceConfig& config);
  ~MujocoDevice() override;
  MujocoDevice(const MujocoDevice&) = delete;
  MujocoDevice& operator=(const MujocoDevice&) = delete;

  /// Compiles the model, makes its data, finds joints, actuators and sensors, and resets to
  /// config.q_init_rad. Throws std::runtime_error with MuJoCo's message when the MJCF does not
  /// compile, or naming what is missing or invalid; the device is then unconfigured.
  void configure(const MujocoDeviceConfig& config);

  /// Back to tick 0 at q_rad with zero velocity, the command holding q_rad, no pushes, the
  /// real-time clock stopped (the next read_once() starts it), counters at zero. Not real-time
  /// safe. Throws std::logic_error when unconfigured, std::invalid_argument for a non-finite q_rad.
  void reset(const JointArray& q_rad);

  DeviceStatus read_once(DeviceState& state) noexcept override;
  DeviceStatus write_once(const DeviceCommand& command) noexcept override;
  double period_s() const noexcept override { return period_s_; }

  /// Applies `wrench_world_N_Nm` [Fx Fy Fz Tx Ty Tz], in world axes, for `duration_s` [s] (rounded
  /// to whole ticks, at least one) from the next tick on. The force acts at the origin of `frame`
  /// (a site's position, or a body's frame origin; a site is looked up first); the torque is a pure
  /// moment. MuJoCo applies it as xfrc_applied on the frame's body about the body's centre of mass,
  /// converted each tick as τ_com = τ + (p_frame − p_com) × F, so it follows the frame as the arm
  /// moves. Pushes add up. Callable from any thread (a short lock, never held by the real-time
  /// side, which only try-locks). Throws std::invalid_argument for an unknown frame, a non-finite
  /// wrench or a duration that is not finite and > 0, std::logic_error when unconfigured, and
  /// std::length_error when kMaxPushes pushes are already waiting for the next tick.
  void push(const std::string& frame, const WrenchArray& wrench_world_N_Nm, double duration_s);

  /// Sensor fault: from the next tick on, for `duration_s` [s] (whole ticks, at least one), every
  /// component of the F/T reading is `value` (NaN for a dropout, ±inf or a large number for a broken
  /// sensor), as a failing sensor or its bus would deliver. The physics is untouched. Any thread;
  /// a new fault replaces one in progress. Throws std::invalid_argument for a duration that is not
  /// finite and > 0, std::logic_error when the model has no F/T sensor.
  void inject_sensor_fault(double value, double duration_s);

  /// Robot fault, as a reflex stops a real arm: from the next read_once() on, every read returns
  /// kDeviceError until clear_fault(), and the arm is held at rest where it is (hold_for_fault()). For the
  /// tests of what the other parts do when an arm stops by itself (a group's other arm, results, recovery).
  /// Any thread.
  void inject_fault() noexcept { faulted_.store(true, std::memory_order_release); }
  /// Ends an injected fault: reads succeed again. Any thread.
  void clear_fault() noexcept { faulted_.store(false, std::memory_order_release); }
  bool fault_injected() const noexcept { return faulted_.load(std::memory_order_acquire); }

  /// Whether the model has the Franka Hand (finger joints and the hand actuator, see the top).
  bool has_hand() const noexcept { return hand_actuator_ >= 0; }

  /// Hands `command` to the hand's controller, which starts it at the next tick and thereby aborts
  /// the running one; returns its id (> 0, increasing). Any thread; never blocks the device's thread.
  /// Throws std::invalid_argument naming the field and value of an invalid command
  /// (validate_hand_command), std::logic_error when unconfigured or the model has no hand.
  std::uint64_t hand_command(const HandCommand& command);

  /// The hand at the last tick (a consistent snapshot; its `tick` is the device tick whose state
  /// width_m measures). Without a hand: width_m NaN, status kIdle. Any thread.
  HandState hand_state() const noexcept;

  /// Pushes in force (being applied, or waiting for the next tick). Any thread.
  int pushes_active() const noexcept;
  /// Pushes that found kMaxPushes already in force and were dropped, since configure/reset.
  std::uint64_t pushes_dropped() const noexcept;

  /// Position [m, world] and rotation (row-major 3x3, columns = the frame's axes in world) of a
  /// site or body at the current state. Throws std::invalid_argument for an unknown name.
  void frame_pose(const std::string& frame, double p_world_m[3], double R_world_frame[9]) const;

  /// The clock this device runs on.
  ClockMode clock() const noexcept { return clock_; }
  /// The compiled model and its data, for inspection (tests, viewers); null when unconfigured.
  const mjModel_* model() const noexcept { return model_; }
  const mjData_* data() const noexcept { return data_; }

 private:
  struct Push {
    int body = -1;                // body the force acts on
    int site = -1;                // site whose origin is the point of application, or -1
    WrenchArray wrench_world{};   // [N, N·m] world axes
    std::int64_t ticks_left = 0;  // ticks still to apply
  };

  void release() noexcept;
  void reset_counters() noexcept;
  void step_one_tick() noexcept;
  void take_pending_pushes() noexcept;
  void apply_pushes() noexcept;
  void fill_state(DeviceState& state) const noexcept;
  /// While a fault is injected: the arm held where it is, as a reflex's brakes hold a real one (no
  /// velocity, the echo at rest on the position: what automatic error recovery starts from), and
  /// the real-time clock paused (it starts again from the next read, not with the missed ticks).
  void hold_for_fault() noexcept;
  std::int64_t now_ns() const noexcept;
  int find_frame(const std::string& frame, int& site) const;
  void find_hand(const std::string& prefix);
  void step_hand() noexcept;

  mjModel_* model_ = nullptr;
  mjData_* data_ = nullptr;
  ClockMode clock_ = ClockMode::kLockstep;
  double period_s_ = 0.0;
  std::int64_t period_ns_ = 0;

  // Model addresses of the arm's kNumJoints joints.
  std::array<int, kNumJoints> qpos_adr_{};
  std::array<int, kNumJoints> dof_adr_{};
  std::array<int, kNumJoints> actuator_{};
  JointArray torque_per_ctrl_{};  // joint torque per unit of ctrl (gear · gain) [N·m]
  JointArray tau_min_Nm_{};
  JointArray tau_max_Nm_{};
  JointArray stiffness_Nm_rad_{};
  JointArray damping_Nm_s_rad_{};
  int force_sensor_adr_ = -1;         // sensordata address of the force sensor, -1 without
  int torque_sensor_adr_ = -1;        // sensordata address of the torque sensor, -1 without
  std::atomic<bool> faulted_{false};  // inject_fault() / clear_fault()
  int bad_qacc_warnings_ = 0;         // MuJoCo's mjWARN_BADQACC count when last checked

  // The Franka Hand, when the model has one (hand_actuator_ >= 0).
  std::array<int, 2> finger_qpos_adr_{};
  std::array<int, 2> finger_dof_adr_{};
  int hand_actuator_ = -1;
  double hand_force_per_ctrl_N_ = 1.0;  // force on each finger per unit of the actuator's ctrl [N]
  SimulatedHand hand_;

  // Command state (real-time thread only).
  DeviceCommand command_in_force_{};  // applied at the last tick
  JointArray ddq_d_rad_s2_{};         // the change of its dq_d over that tick [rad/s²]
  DeviceCommand command_pending_{};   // newest accepted command not applied yet
  bool pending_ = false;
  std::uint64_t pending_from_tick_ = 0;  // first tick the pending command may apply to
  bool motion_finished_written_ = false;
  JointArray tau_applied_Nm_{};
  JointArray tau_ext_Nm_{};
  std::vector<double> qfrc_ext_;  // nv: generalized force of the pushes, for tau_ext

  // Time (real-time thread only).
  std::uint64_t tick_ = 0;
  std::uint64_t ticks_missed_by_reader_ = 0;
  std::uint64_t ticks_without_new_command_ = 0;
  bool clock_started_ = false;
  std::int64_t clock_zero_ns_ = 0;  // tick n is due at clock_zero_ns_ + n·period_ns_

  // Pushes: the real-time thread owns active_; push() fills pending_pushes_ under the mutex.
  std::array<Push, kMaxPushes> active_{};
  int num_active_ = 0;
  mutable std::mutex push_mutex_;
  std::array<Push, kMaxPushes> pending_pushes_{};
  int num_pending_pushes_ = 0;
  std::atomic<bool> pushes_waiting_{false};
  std::atomic<int> pushes_in_force_{0};
  std::atomic<std::uint64_t> pushes_dropped_{0};

  // Sensor fault: inject_sensor_fault() publishes ticks and value; the real-time thread takes them.
  std::atomic<std::int64_t> fault_ticks_requested_{0};
  std::atomic<double> fault_value_requested_{0.0};
  std::int64_t fault_ticks_left_ = 0;
  double fault_value_ = 0.0;
};

}  // namespace jtac::hw
