// A control law behind a C function pointer: a law written elsewhere (in Python and compiled by
// Numba, jtac_py/laws.py, or in plain C) plugged into the loop's slot without the loop knowing the
// language it came from.
//
// The C ABI (CallbackLawFunction): every cycle the law is called with the controller time and period,
// the measurement, the robot's echoed command, the external joint torques, the sensor's wrench, the
// TCP pose and Jacobian from jtac_core's Kinematics (at the measured q), its parameters and its own
// memory, and fills the joint command in place; it returns 0, or its own non-zero error code. Arrays
// are float64 and row-major; their sizes are fixed (7 joints) except params and memory, whose sizes
// are passed. Before the call q_cmd/dq_cmd hold the previous cycle's command, so a law that writes
// nothing holds.
//
// Safety: a non-zero code, or a non-finite q_cmd/dq_cmd entry, stops the arm in minimum time
// (jtac_core's StopTrajectory within `stop_accelerations_rad_s2`, from the last good command) and
// latches the reason — law name, code, joint and value — in a fixed buffer that any thread reads
// (error()); the law is not called again until the next activation. What a law commands then goes
// through the hardware interface's checks like any law's (non-finite commands refused, the limiter).
//
// Parameters: set_params() from one writer thread through a preallocated LatestValue (newest wins),
// taken at the next cycle boundary; memory is zeroed at each activation. Nothing on the controller
// thread allocates, locks or calls into Python (the function itself must not either: a Numba law is
// compiled in nopython mode and checked for allocations by jtac_py.laws).
//
// Threads: construction, set_params() and the readers of error()/counters on the non-real-time side;
// activate/update/deactivate on the controller thread (noexcept, no allocation, no lock).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "jtac_core/kinematics.hpp"
#include "jtac_core/stop_trajectory.hpp"
#include "jtac_loop/control_law.hpp"
#include "jtac_rt/mailbox.hpp"

namespace jtac::loop {

/// The C ABI of a callback law (see the top of this file). Sizes: q_rad, dq_rad_s, q_d_rad,
/// tau_ext_Nm, q_cmd_rad, dq_cmd_rad_s (7,); wrench_N_Nm (6,) [Fx Fy Fz Tx Ty Tz] sensor frame (zero
/// without a sensor); T_base_tcp (4, 4) and jacobian (6, 7) [v; ω] in the base frame, row-major;
/// params (num_params,) read-only; memory (num_memory,) the law's own, persistent across cycles.
/// Returns 0, or the law's non-zero error code.
extern "C" {
using CallbackLawFunction = int (*)(double time_s, double period_s, const double* q_rad,
                                    const double* dq_rad_s, const double* q_d_rad, const double* tau_ext_Nm,
                                    const double* wrench_N_Nm, const double* T_base_tcp,
                                    const double* jacobian, const double* params, std::int64_t num_params,
                                    double* memory, std::int64_t num_memory, double* q_cmd_rad,
                                    double* dq_cmd_rad_s);
}

/// Configuration of a CallbackLaw (not real-time; the constructor validates it).
struct CallbackLawConfig {
  std::string name;                        ///< the law's name in errors (a Python law: its function's)
  CallbackLawFunction function = nullptr;  ///< the law
  int num_params = 0;                      ///< entries of params (≥ 0)
  int num_memory = 0;                      ///< entries of memory (≥ 0), zeroed at each activation
  std::vector<double> params;              ///< initial parameters: num_params finite values (empty: zeros)
  /// Deceleration of each joint when the law fails [rad/s²] (the controller's stop_accelerations).
  JointArray stop_accelerations_rad_s2 = {5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0};
  /// Kinematics of T_base_tcp and jacobian: URDF text, base frame, the seven joints and the TCP frame.
  /// Empty urdf_xml: no kinematics (T_base_tcp identity, jacobian zero).
  std::string urdf_xml;
  std::string base_frame;
  std::vector<std::string> joint_names;  ///< also names the joint in errors (empty: "joint <index>")
  std::string tcp_frame;
};

/// Why a callback law stopped (CallbackLaw::error()).
struct CallbackLawError {
  bool failed = false;              ///< false while the law runs without error
  int code = 0;                     ///< the law's return code (0 when it was a non-finite output)
  int joint = -1;                   ///< joint of the non-finite output (-1: none)
  double value = 0.0;               ///< that output's value (NaN, ±inf)
  double time_s = 0.0;              ///< controller time of the failing cycle [s]
  std::array<char, 256> message{};  ///< "law 'name' …": name, code or joint and value
};

/// A control law behind a C function pointer (see the top of this file).
class CallbackLaw final : public ControlLaw {
 public:
  /// Validates and claims everything: std::invalid_argument naming the field (a null function,
  /// negative sizes, params of the wrong size or non-finite naming the index and value, stop
  /// accelerations not > 0 naming the joint, kinematics naming the frame or joint). Not real-time.
  explicit CallbackLaw(const CallbackLawConfig& config);

  /// Writer side: new parameters, taken at the next cycle boundary. "" when published, else why not
  /// (wrong size, a non-finite entry naming its index and value; nothing changes). Never waits; a
  /// valid set allocates nothing.
  std::string set_params(std::span<const double> params);

  void activate(const DeviceState& state, const LawHandover& from) noexcept override;
  void deactivate(double time_s) noexcept override;
  UpdateStatus update(const DeviceState& state, double time_s, double period_s,
                      LawOutput& out) noexcept override;
  /// The law is not called again: the arm brakes to rest from its last good command, as after a
  /// failure but without an error.
  void begin_handover(double time_s) noexcept override;
  /// Braked to rest (after a hand-over or a failure).
  bool at_rest() const noexcept override;
  /// Entries not finite and > 0 keep their value.
  void set_stop_accelerations(const JointArray& a_rad_s2) noexcept override;

  /// The latched failure of this activation (failed = false while none). Any thread.
  CallbackLawError error() const noexcept;
  /// True once the law failed in this activation (the arm stops, then holds). Any thread.
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }

  const std::string& name() const noexcept { return name_; }
  int num_params() const noexcept { return num_params_; }
  int num_memory() const noexcept { return num_memory_; }
  /// Calls of the function so far, and the time they took [ns] (steady clock around each call).
  std::uint64_t calls() const noexcept { return calls_.load(std::memory_order_relaxed); }
  std::uint64_t call_ns_total() const noexcept { return call_ns_total_.load(std::memory_order_relaxed); }
  std::uint64_t call_ns_max() const noexcept { return call_ns_max_.load(std::memory_order_relaxed); }
  /// Parameter sets taken by the controller thread (set_params() published and taken).
  std::uint64_t params_taken() const noexcept { return params_taken_.load(std::memory_order_relaxed); }

 private:
  // T_base_tcp_ and jacobian_ at the measured q; false when the kinematics refused it.
  bool update_kinematics(const DeviceState& state) noexcept;
  // Starts the minimum-time stop from the last good command, at its time.
  void start_brake() noexcept;
  // Latches the failure and starts the minimum-time stop from the last good command.
  // `measurement`: the law was not called because the measured q is not finite.
  void fail(double time_s, int code, int joint, double value, bool measurement) noexcept;
  void fill_output(const DeviceState& state, LawOutput& out) const noexcept;

  std::string name_;
  CallbackLawFunction function_ = nullptr;
  int num_params_ = 0;
  int num_memory_ = 0;
  std::vector<std::string> joint_names_;
  JointVector stop_limits_ = JointVector::Zero(kNumJoints);

  Kinematics kinematics_;
  bool has_kinematics_ = false;
  int tcp_frame_ = -1;

  LatestValue<std::vector<double>> params_in_;   // set_params() → controller thread
  const std::vector<double>* params_ = nullptr;  // the set in force (controller thread)
  std::vector<double> memory_;

  // Controller thread.
  bool active_ = false;
  JointVector q_ = JointVector::Zero(kNumJoints);
  Eigen::Isometry3d T_base_tcp_ = Eigen::Isometry3d::Identity();
  Jacobian J_base_tcp_ = Jacobian::Zero(6, kNumJoints);
  std::array<double, 16> pose_row_major_{};
  std::array<double, 6 * kNumJoints> jacobian_row_major_{};
  WrenchArray wrench_{};
  JointArray q_cmd_{};   // last good command [rad]
  JointArray dq_cmd_{};  // [rad/s]
  JointArray q_try_{};   // the function's output, checked before it becomes the command
  JointArray dq_try_{};
  double last_good_time_s_ = 0.0;  // controller time of q_cmd_/dq_cmd_ [s]
  StopTrajectory stop_;
  double stop_start_s_ = 0.0;  // [s]
  bool braking_ = false;       // the stop above is in force (failure or hand-over)
  double last_time_s_ = 0.0;   // controller time of the last update [s]
  JointVector stop_q_ = JointVector::Zero(kNumJoints);
  JointVector stop_v_ = JointVector::Zero(kNumJoints);
  JointVector stop_a_ = JointVector::Zero(kNumJoints);

  // Crossings: the failure is written once per activation, then published by failed_.
  CallbackLawError error_{};
  std::atomic<bool> failed_{false};
  std::atomic<std::uint64_t> calls_{0};
  std::atomic<std::uint64_t> call_ns_total_{0};
  std::atomic<std::uint64_t> call_ns_max_{0};
  std::atomic<std::uint64_t> params_taken_{0};
};

/// Reference laws in C, on the same ABI (tests, benchmarks, and the C++ twin of example 05):
///   * jtac_sine_law: q_cmd = q0 + A·sin(ω·(t − t0)) on joint `j`; params [A rad, ω rad/s, j];
///     memory [initialised, t0, q0 (7)] (9 entries).
///   * jtac_joint_impedance_law: each joint a virtual mass-spring-damper about where it started,
///     driven by the external torque: m·ẍ + d·ẋ + k·x = τ_ext, q_cmd = q0 + x, dq_cmd = ẋ
///     (semi-implicit Euler at dt); params [k (7) N·m/rad, d (7) N·m·s/rad, m (7) kg·m²];
///     memory [initialised, q0 (7), x (7), ẋ (7)] (22 entries).
extern "C" int jtac_sine_law(double time_s, double period_s, const double* q_rad, const double* dq_rad_s,
                             const double* q_d_rad, const double* tau_ext_Nm, const double* wrench_N_Nm,
                             const double* T_base_tcp, const double* jacobian, const double* params,
                             std::int64_t num_params, double* memory, std::int64_t num_memory,
                             double* q_cmd_rad, double* dq_cmd_rad_s);
extern "C" int jtac_joint_impedance_law(double time_s, double period_s, const double* q_rad,
                                        const double* dq_rad_s, const double* q_d_rad,
                                        const double* tau_ext_Nm, const double* wrench_N_Nm,
                                        const double* T_base_tcp, const double* jacobian,
                                        const double* params, std::int64_t num_params, double* memory,
                                        std::int64_t num_memory, double* q_cmd_rad, double* dq_cmd_rad_s);

}  // namespace jtac::loop
