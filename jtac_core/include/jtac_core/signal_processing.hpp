// Force/torque signal processing: tare, Butterworth low-pass, threshold check, payload gravity
// compensation, deadband and the change to the control frame. Real-time safe: everything here is
// noexcept, fixed-size and allocation-free, including configure().
//
// Conventions (the ones an F/T sensor datasheet uses):
// - A wrench is a jtac::Vector6 [Fx Fy Fz Tx Ty Tz] in [N N N N·m N·m N·m]. Its name says the frame
//   whose axes it is expressed in and whose origin the torque is taken about: `wrench_sensor` is in
//   sensor axes, torque about the sensor origin.
// - The sensor reports the wrench that the tool side exerts on the sensor. A payload resting on it
//   therefore reads +m·g (g rotated into the sensor frame) and the torque p_cog × m·g, with p_cog the
//   centre of gravity relative to the sensor origin; an external force F pushing on the tool reads
//   +F. After tare and gravity compensation, what is left is the external wrench acting on the tool.
// - T_a_b is the pose of frame b in frame a (p_a = T_a_b · p_b); R_a_b its rotation.
//
// Pipeline order (ForceTorquePipeline::process):
//   raw − tare offset → Butterworth → threshold check → − payload weight → deadband → control frame.
// The threshold sees the filtered wrench before gravity compensation and before the deadband, as
// the spec and the parameter schema say ("filtered measured wrench", "before gravity
// compensation"). The deadband runs after gravity compensation: it removes noise around zero, and
// only the compensated wrench is near zero at rest. Before compensation a continuous deadband would
// shift the payload's weight by the band and leave a constant bias of one band on every loaded axis
// (a 1.3 kg tool and a 1 N band: −1 N of phantom force forever).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <limits>

#include "jtac_core/types.hpp"

namespace jtac {

/// Second-order Butterworth low-pass filter on the six channels of a wrench.
///
/// Discretised with the bilinear transform and frequency pre-warping, so the digital filter's
/// −3 dB point is exactly the requested cutoff; DC gain is exactly one (b0 + b1 + b2 = 1 + a1 + a2
/// holds for the stored coefficients). Transposed direct form II, one state pair per channel.
/// A sample with any non-finite component leaves the state untouched (all channels, so they stay
/// in step): its output carries the non-finite components as they came in and the previous output
/// on the others, and the next finite sample continues as if the bad one had never arrived.
/// Default-constructed, the filter is a bypass with zero state.
class ButterworthLowPass2 {
 public:
  /// Ratios at or above this (the Nyquist limit, and the schema's 1.0 = "no filtering") bypass.
  static constexpr double kBypassRatio = 0.5;

  /// Sets the cutoff as cutoff frequency / sample rate [-]. Returns false (and keeps the previous
  /// configuration) unless the ratio is finite and > 0. A ratio ≥ 0.5 bypasses the filter. The
  /// state is re-primed at the last output, so a change of cutoff mid-stream causes no jump.
  bool configure(double cutoff_ratio) noexcept;

  /// Puts the filter in steady state at `initial` (no start transient). Returns false and resets
  /// to zero if `initial` is not finite.
  bool reset(const Vector6& initial) noexcept;

  /// Moves the state as if every past input had been `delta` larger (e.g. a new tare offset), so
  /// a constant input shift does not cause a transient. `delta` must be finite.
  void shift(const Vector6& delta) noexcept;

  /// Filters one sample. In bypass the output is the input, bit for bit.
  Vector6 filter(const Vector6& in) noexcept;

  /// Cutoff frequency / sample rate [-] as configured.
  double cutoff_ratio() const noexcept { return cutoff_ratio_; }
  /// True when configure() chose the pass-through.
  bool bypassed() const noexcept { return bypass_; }
  /// The last finite output (the value reset() or configure() primed at, before any sample).
  const Vector6& last_output() const noexcept { return last_output_; }

 private:
  double cutoff_ratio_ = 1.0;
  bool bypass_ = true;
  double b0_ = 1.0, b1_ = 0.0, b2_ = 0.0, a1_ = 0.0, a2_ = 0.0;
  Vector6 z1_ = Vector6::Zero();
  Vector6 z2_ = Vector6::Zero();
  Vector6 last_output_ = Vector6::Zero();
};

/// Continuous deadband on one value: |x| ≤ band → 0, otherwise x moved toward zero by band, so the
/// output has no jump at the edge. NaN stays NaN; a negative or NaN band acts as 0.
double deadband(double x, double band) noexcept;

/// Per-axis continuous deadband on a wrench: force_deadband_N on Fx Fy Fz, torque_deadband_Nm on
/// Tx Ty Tz. Per axis rather than on the force/torque norms because the schema defines the bands
/// per component and because sensor noise is independent per sensor channel; the wrench should be
/// in the sensor frame, where those channels are.
void apply_deadband(Vector6& wrench, double force_deadband_N, double torque_deadband_Nm) noexcept;

/// First axis i with |wrench_i| > threshold_i (strict: equal passes), or −1. A non-finite wrench
/// component always counts as a violation; so does a NaN threshold (fail safe: validate upstream).
/// A +inf threshold never trips on a finite value.
int first_threshold_violation(const Vector6& wrench, const Vector6& threshold) noexcept;

/// The wrench the payload's weight exerts on the sensor, in sensor axes, torque about the sensor
/// origin: [R_sensor_base·m·g; p_cog_sensor × R_sensor_base·m·g] with p_cog_sensor = T_sensor_ee ·
/// cog_ee_m. Zero when mass_kg ≤ 0 (or NaN) or gravity is exactly zero; the other inputs are then
/// not read, so a zero-mass tip may leave them unset.
Vector6 payload_gravity_wrench(double mass_kg, const Eigen::Vector3d& cog_ee_m,
                               const Eigen::Vector3d& gravity_base_m_s2, const Eigen::Matrix3d& R_base_sensor,
                               const Eigen::Isometry3d& T_sensor_ee) noexcept;

/// Subtracts payload_gravity_wrench(...) from `wrench_sensor`.
void compensate_payload(Vector6& wrench_sensor, double mass_kg, const Eigen::Vector3d& cog_ee_m,
                        const Eigen::Vector3d& gravity_base_m_s2, const Eigen::Matrix3d& R_base_sensor,
                        const Eigen::Isometry3d& T_sensor_ee) noexcept;

/// The same physical wrench seen from frame b: wrench_a (a's axes, torque about a's origin) →
/// wrench_b (b's axes, torque about b's origin), T_a_b the pose of b in a:
/// F_b = R_a_bᵀ·F_a, τ_b = R_a_bᵀ·(τ_a − p_a_b × F_a).
Vector6 transform_wrench(const Vector6& wrench_a, const Eigen::Isometry3d& T_a_b) noexcept;

/// Progress of a tare.
enum class TareStatus {
  kIdle,             ///< no tare in progress; the sample was ignored
  kCollecting,       ///< sample taken, more to come
  kDone,             ///< last sample taken, the new offset applies
  kFailedNonFinite,  ///< a non-finite sample ended the tare; the previous offset stays
};

/// Sensor tare (~/zero_fts): averages `num_samples` consecutive raw readings, one per cycle, into
/// the offset subtracted from every later reading. While collecting, the previous offset applies.
class Tare {
 public:
  /// Begins (or restarts) collecting. False for num_samples < 1, which changes nothing.
  bool start(int num_samples) noexcept;

  /// Takes one raw reading [N, N·m].
  TareStatus add_sample(const Vector6& wrench_raw_sensor) noexcept;

  /// True between start() and the sample that completes or fails the tare.
  bool collecting() const noexcept { return collecting_; }

  /// The applied offset [N, N·m]; zero until a tare completes.
  const Vector6& offset() const noexcept { return offset_; }

  /// wrench_sensor −= offset().
  void subtract(Vector6& wrench_sensor) const noexcept { wrench_sensor -= offset_; }

  /// Zero offset, nothing collecting.
  void clear() noexcept;

  /// Ends a tare being collected without applying it: the previous offset stays.
  void cancel() noexcept {
    sum_.setZero();
    count_ = 0;
    collecting_ = false;
  }

 private:
  Vector6 offset_ = Vector6::Zero();
  Vector6 sum_ = Vector6::Zero();
  int num_samples_ = 0;
  int count_ = 0;
  bool collecting_ = false;
};

/// Per-sensor settings of the force/torque pipeline.
struct ForceTorqueParameters {
  double cutoff_ratio = 1.0;        ///< Butterworth cutoff / sample rate, (0, ∞); ≥ 0.5 = off [-]
  double force_deadband_N = 0.0;    ///< per force axis, ≥ 0 [N]
  double torque_deadband_Nm = 0.0;  ///< per torque axis, ≥ 0 [N·m]
  /// Per-axis limit on the filtered wrench before gravity compensation, > 0; +inf = none [N, N·m].
  Vector6 threshold = Vector6::Constant(std::numeric_limits<double>::infinity());
  double payload_mass_kg = 0.0;                                        ///< ≥ 0; 0 skips compensation [kg]
  Eigen::Vector3d payload_cog_ee_m = Eigen::Vector3d::Zero();          ///< centre of gravity, ee frame [m]
  Eigen::Vector3d gravity_base_m_s2{0.0, 0.0, -9.81};                  ///< gravity, base frame [m/s²]
  Eigen::Isometry3d T_sensor_ee = Eigen::Isometry3d::Identity();       ///< ee pose in sensor frame
  Eigen::Isometry3d T_sensor_control = Eigen::Isometry3d::Identity();  ///< control frame pose
};

/// Why process() may want the caller to act.
enum class ForceTorqueStatus {
  kOk,
  kThresholdExceeded,  ///< violated_axis is the first filtered axis over its threshold
  kNonFinite,  ///< a NaN/Inf reading (violated_axis = its first bad axis) or pose (violated_axis = −1)
};

/// One cycle's output of ForceTorquePipeline::process().
struct ForceTorqueResult {
  ForceTorqueStatus status = ForceTorqueStatus::kOk;
  int violated_axis = -1;                            ///< see ForceTorqueStatus; −1 when none
  TareStatus tare = TareStatus::kIdle;               ///< what this cycle's reading did to a tare
  Vector6 wrench_filtered_sensor = Vector6::Zero();  ///< tared and filtered, with payload weight
  /// External wrench on the tool: compensated and deadbanded, in control-frame axes, torque about
  /// the control-frame origin. Zero when status is kNonFinite.
  Vector6 wrench_control = Vector6::Zero();
};

/// One sensor's chain from raw reading to the wrench the admittance uses. Not thread-safe: call
/// everything from the control thread (hand parameters over with a mailbox).
class ForceTorquePipeline {
 public:
  /// nullptr when `p` is usable, otherwise a static message naming the offending field.
  static const char* validate(const ForceTorqueParameters& p) noexcept;

  /// Takes new parameters if validate() accepts them (else returns false and keeps the old ones).
  /// The filter state and the tare are kept; a new cutoff re-primes the filter at its last output.
  bool configure(const ForceTorqueParameters& p) noexcept;

  /// Primes the filter in steady state at this raw reading minus the tare offset, so the first
  /// cycles have no start transient. Returns false (and primes at zero) for a non-finite reading.
  bool reset(const Vector6& wrench_raw_sensor) noexcept;

  /// Starts a tare over the next num_samples process() calls; false for num_samples < 1.
  bool start_tare(int num_samples) noexcept { return tare_.start(num_samples); }

  /// One cycle: R_base_sensor is the sensor's orientation in the base frame (from forward kinematics).
  ForceTorqueResult process(const Vector6& wrench_raw_sensor, const Eigen::Matrix3d& R_base_sensor) noexcept;

  /// The tare (offset, whether collecting).
  const Tare& tare() const noexcept { return tare_; }
  /// Ends a tare being collected; the previous offset stays (Tare::cancel).
  void cancel_tare() noexcept { tare_.cancel(); }
  /// The parameters in use.
  const ForceTorqueParameters& parameters() const noexcept { return params_; }

 private:
  ForceTorqueParameters params_;
  ButterworthLowPass2 filter_;
  Tare tare_;
};

}  // namespace jtac
