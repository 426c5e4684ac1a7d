// Force/torque signal processing; see signal_processing.hpp for conventions and order.
#include "jtac_core/signal_processing.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace jtac {

namespace {

/// Index of the first non-finite component, or −1.
int first_non_finite(const Vector6& v) noexcept {
  for (int i = 0; i < 6; ++i) {
    if (!std::isfinite(v[i])) {
      return i;
    }
  }
  return -1;
}

/// A finite rigid transform: finite entries and a rotation that is orthonormal to 1e-6.
bool is_rigid(const Eigen::Isometry3d& T) noexcept {
  if (!T.matrix().allFinite()) {
    return false;
  }
  const Eigen::Matrix3d R = T.linear();
  return (R.transpose() * R - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() < 1e-6 &&
         R.determinant() > 0.0;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// ButterworthLowPass2

bool ButterworthLowPass2::configure(double cutoff_ratio) noexcept {
  if (!std::isfinite(cutoff_ratio) || !(cutoff_ratio > 0.0)) {
    return false;
  }
  cutoff_ratio_ = cutoff_ratio;
  bypass_ = cutoff_ratio >= kBypassRatio;
  if (bypass_) {
    b0_ = 1.0;
    b1_ = b2_ = a1_ = a2_ = 0.0;
  } else {
    // Analog prototype 1 / (s² + √2·s + 1) at the pre-warped cutoff K = tan(π·fc/fs), mapped with
    // the bilinear transform; normalised so that a0 = 1.
    const double k = std::tan(std::numbers::pi * cutoff_ratio);
    const double k2 = k * k;
    const double sqrt2_k = std::numbers::sqrt2 * k;
    const double norm = 1.0 / (1.0 + sqrt2_k + k2);
    a1_ = 2.0 * (k2 - 1.0) * norm;
    a2_ = (1.0 - sqrt2_k + k2) * norm;
    // Analytically b0 = K²·norm = (1 + a1 + a2) / 4; taking it from the stored a1, a2 makes the DC
    // gain (b0 + b1 + b2) / (1 + a1 + a2) one to rounding of that sum, not of K²·norm.
    b0_ = ((1.0 + a1_) + a2_) / 4.0;
    b1_ = 2.0 * b0_;
    b2_ = b0_;
  }
  reset(last_output_);
  return true;
}

bool ButterworthLowPass2::reset(const Vector6& initial) noexcept {
  const bool finite = initial.allFinite();
  const Vector6 value = finite ? initial : Vector6::Zero();
  // Steady state of the transposed direct form II at a constant input and output `value`.
  z1_ = (1.0 - b0_) * value;
  z2_ = (b2_ - a2_) * value;
  last_output_ = value;
  return finite;
}

void ButterworthLowPass2::shift(const Vector6& delta) noexcept {
  // The filter is linear with unity DC gain: adding a constant to the whole input history adds
  // the steady state of that constant to the state.
  z1_ += (1.0 - b0_) * delta;
  z2_ += (b2_ - a2_) * delta;
  last_output_ += delta;
}

Vector6 ButterworthLowPass2::filter(const Vector6& in) noexcept {
  const bool finite = in.allFinite();
  if (bypass_) {
    if (finite) {
      last_output_ = in;
    }
    return in;
  }
  if (!finite) {
    Vector6 out = last_output_;
    for (int i = 0; i < 6; ++i) {
      if (!std::isfinite(in[i])) {
        out[i] = in[i];
      }
    }
    return out;
  }
  const Vector6 out = b0_ * in + z1_;
  z1_ = b1_ * in - a1_ * out + z2_;
  z2_ = b2_ * in - a2_ * out;
  last_output_ = out;
  return out;
}

// ------------------------------------------------------------------------------------------------
// Deadband, thresholds

double deadband(double x, double band) noexcept {
  const double b = std::max(0.0, band);  // NaN band → 0 (std::max keeps its first argument)
  if (x > b) {
    return x - b;
  }
  if (x < -b) {
    return x + b;
  }
  return std::isnan(x) ? x : 0.0;
}

void apply_deadband(Vector6& wrench, double force_deadband_N, double torque_deadband_Nm) noexcept {
  for (int i = 0; i < 3; ++i) {
    wrench[i] = deadband(wrench[i], force_deadband_N);
    wrench[i + 3] = deadband(wrench[i + 3], torque_deadband_Nm);
  }
}

int first_threshold_violation(const Vector6& wrench, const Vector6& threshold) noexcept {
  for (int i = 0; i < 6; ++i) {
    if (!std::isfinite(wrench[i]) || !(std::abs(wrench[i]) <= threshold[i])) {
      return i;
    }
  }
  return -1;
}

// ------------------------------------------------------------------------------------------------
// Gravity compensation, frames

Vector6 payload_gravity_wrench(double mass_kg, const Eigen::Vector3d& cog_ee_m,
                               const Eigen::Vector3d& gravity_base_m_s2, const Eigen::Matrix3d& R_base_sensor,
                               const Eigen::Isometry3d& T_sensor_ee) noexcept {
  Vector6 wrench_sensor = Vector6::Zero();
  if (!(mass_kg > 0.0) || (gravity_base_m_s2.array() == 0.0).all()) {
    return wrench_sensor;
  }
  const Eigen::Vector3d weight_sensor_N = R_base_sensor.transpose() * (mass_kg * gravity_base_m_s2);
  const Eigen::Vector3d cog_sensor_m = T_sensor_ee * cog_ee_m;
  wrench_sensor.head<3>() = weight_sensor_N;
  wrench_sensor.tail<3>() = cog_sensor_m.cross(weight_sensor_N);
  return wrench_sensor;
}

void compensate_payload(Vector6& wrench_sensor, double mass_kg, const Eigen::Vector3d& cog_ee_m,
                        const Eigen::Vector3d& gravity_base_m_s2, const Eigen::Matrix3d& R_base_sensor,
                        const Eigen::Isometry3d& T_sensor_ee) noexcept {
  wrench_sensor -= payload_gravity_wrench(mass_kg, cog_ee_m, gravity_base_m_s2, R_base_sensor, T_sensor_ee);
}

Vector6 transform_wrench(const Vector6& wrench_a, const Eigen::Isometry3d& T_a_b) noexcept {
  const Eigen::Matrix3d R_b_a = T_a_b.linear().transpose();
  const Eigen::Vector3d force_a = wrench_a.head<3>();
  // Moving the reference point from a's origin to b's origin: τ_b = τ_a + (o_a − o_b) × F.
  const Eigen::Vector3d torque_about_b_in_a = wrench_a.tail<3>() - T_a_b.translation().cross(force_a);
  Vector6 wrench_b;
  wrench_b.head<3>() = R_b_a * force_a;
  wrench_b.tail<3>() = R_b_a * torque_about_b_in_a;
  return wrench_b;
}

// ------------------------------------------------------------------------------------------------
// Tare

bool Tare::start(int num_samples) noexcept {
  if (num_samples < 1) {
    return false;
  }
  num_samples_ = num_samples;
  count_ = 0;
  sum_.setZero();
  collecting_ = true;
  return true;
}

TareStatus Tare::add_sample(const Vector6& wrench_raw_sensor) noexcept {
  if (!collecting_) {
    return TareStatus::kIdle;
  }
  if (!wrench_raw_sensor.allFinite()) {
    collecting_ = false;
    return TareStatus::kFailedNonFinite;
  }
  sum_ += wrench_raw_sensor;
  ++count_;
  if (count_ < num_samples_) {
    return TareStatus::kCollecting;
  }
  offset_ = sum_ / static_cast<double>(num_samples_);
  collecting_ = false;
  return TareStatus::kDone;
}

void Tare::clear() noexcept {
  offset_.setZero();
  sum_.setZero();
  count_ = 0;
  collecting_ = false;
}

// ------------------------------------------------------------------------------------------------
// ForceTorquePipeline

const char* ForceTorquePipeline::validate(const ForceTorqueParameters& p) noexcept {
  if (!std::isfinite(p.cutoff_ratio) || !(p.cutoff_ratio > 0.0)) {
    return "cutoff_ratio must be finite and > 0";
  }
  if (!std::isfinite(p.force_deadband_N) || p.force_deadband_N < 0.0) {
    return "force_deadband_N must be finite and >= 0";
  }
  if (!std::isfinite(p.torque_deadband_Nm) || p.torque_deadband_Nm < 0.0) {
    return "torque_deadband_Nm must be finite and >= 0";
  }
  if (!(p.threshold.array() > 0.0).all()) {
    return "threshold must be > 0 on every axis (+inf = no limit)";
  }
  if (!std::isfinite(p.payload_mass_kg) || p.payload_mass_kg < 0.0) {
    return "payload_mass_kg must be finite and >= 0";
  }
  if (p.payload_mass_kg > 0.0) {
    if (!p.payload_cog_ee_m.allFinite()) {
      return "payload_cog_ee_m must be finite when payload_mass_kg > 0";
    }
    if (!p.gravity_base_m_s2.allFinite()) {
      return "gravity_base_m_s2 must be finite when payload_mass_kg > 0";
    }
    if (!is_rigid(p.T_sensor_ee)) {
      return "T_sensor_ee must be a finite rigid transform when payload_mass_kg > 0";
    }
  }
  if (!is_rigid(p.T_sensor_control)) {
    return "T_sensor_control must be a finite rigid transform";
  }
  return nullptr;
}

bool ForceTorquePipeline::configure(const ForceTorqueParameters& p) noexcept {
  if (validate(p) != nullptr) {
    return false;
  }
  if (p.cutoff_ratio != filter_.cutoff_ratio()) {
    filter_.configure(p.cutoff_ratio);
  }
  params_ = p;
  return true;
}

bool ForceTorquePipeline::reset(const Vector6& wrench_raw_sensor) noexcept {
  Vector6 wrench_sensor = wrench_raw_sensor;
  tare_.subtract(wrench_sensor);
  return filter_.reset(wrench_sensor);
}

ForceTorqueResult ForceTorquePipeline::process(const Vector6& wrench_raw_sensor,
                                               const Eigen::Matrix3d& R_base_sensor) noexcept {
  ForceTorqueResult result;

  // 1. Tare: the raw reading feeds a tare in progress; a completed tare also shifts the filter's
  //    history by the change of offset, so the new offset applies without a transient.
  const Vector6 previous_offset = tare_.offset();
  result.tare = tare_.add_sample(wrench_raw_sensor);
  if (result.tare == TareStatus::kDone) {
    filter_.shift(previous_offset - tare_.offset());
  }
  Vector6 wrench_sensor = wrench_raw_sensor;
  tare_.subtract(wrench_sensor);

  // 2. Butterworth (a non-finite reading leaves the filter state untouched).
  result.wrench_filtered_sensor = filter_.filter(wrench_sensor);
  const int bad_axis = first_non_finite(wrench_raw_sensor);
  if (bad_axis >= 0) {
    result.status = ForceTorqueStatus::kNonFinite;
    result.violated_axis = bad_axis;
    return result;
  }

  // 3. Threshold on the filtered wrench, payload weight included.
  const int violated_axis = first_threshold_violation(result.wrench_filtered_sensor, params_.threshold);

  // 4. Payload weight, 5. deadband (sensor axes), 6. control frame.
  wrench_sensor = result.wrench_filtered_sensor;
  compensate_payload(wrench_sensor, params_.payload_mass_kg, params_.payload_cog_ee_m,
                     params_.gravity_base_m_s2, R_base_sensor, params_.T_sensor_ee);
  apply_deadband(wrench_sensor, params_.force_deadband_N, params_.torque_deadband_Nm);
  result.wrench_control = transform_wrench(wrench_sensor, params_.T_sensor_control);

  if (!result.wrench_control.allFinite()) {  // e.g. a non-finite R_base_sensor with a payload
    result.status = ForceTorqueStatus::kNonFinite;
    result.violated_axis = -1;
    result.wrench_control.setZero();
    return result;
  }
  if (violated_axis >= 0) {
    result.status = ForceTorqueStatus::kThresholdExceeded;
    result.violated_axis = violated_axis;
  }
  return result;
}

}  // namespace jtac
