#include "franka_hw/rate_matching.hpp"
#include "jtac_rt/numeric.hpp"

#include <algorithm>
#include <cmath>

namespace jtac::hw {

namespace {

using jtac::all_finite;

double sign(double x) noexcept { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0); }

// The admissible end of the segment from `ok` to `bad` for an excess monotone along it (≤ 0:
// admissible): 48 halvings (of a segment at most 2·a_max wide: well below 1e-9 rad/s²), ending on
// the admissible side; `ok` itself when even it breaks the condition (only from a state that broke
// the invariant, e.g. after extrapolate()).
template <typename Excess>
double last_admissible(const Excess& excess, double ok, double bad) noexcept {
  if (excess(ok) > 0.0) {
    return ok;
  }
  for (int k = 0; k < 48; ++k) {
    const double mid = 0.5 * (ok + bad);
    if (excess(mid) <= 0.0) {
      ok = mid;
    } else {
      bad = mid;
    }
  }
  return ok;
}

}  // namespace

// ---------------------------------------------------------------- MotionLimiter

MotionLimiter::MotionLimiter(double period_s, double margin, const JointLimits& limits) noexcept
    : period_s_(period_s > 0.0 && std::isfinite(period_s) ? period_s : 0.001),
      margin_(margin > 0.0 && margin <= 1.0 ? margin : 0.8) {
  for (int i = 0; i < kNumJoints; ++i) {
    limits_.dq_max_rad_s[i] = margin_ * limits.dq_max_rad_s[i];
    limits_.ddq_max_rad_s2[i] = margin_ * limits.ddq_max_rad_s2[i];
    limits_.dddq_max_rad_s3[i] = margin_ * limits.dddq_max_rad_s3[i];
  }
  limits_.position_based_velocity_limits = limits.position_based_velocity_limits;
  limits_.q_min_rad = limits.q_min_rad;
  limits_.q_max_rad = limits.q_max_rad;
  limits_.velocity_offset_rad_s = limits.velocity_offset_rad_s;
  limits_.deceleration_limit_rad_s2 = limits.deceleration_limit_rad_s2;
  for (int i = 0; i < kNumJoints; ++i) {
    const double d = limits.deceleration_limit_rad_s2[i];
    envelope_[i] = limits.position_based_velocity_limits && d > 0.0 && std::isfinite(d) &&
                   limits.q_min_rad[i] < limits.q_max_rad[i] &&
                   std::isfinite(limits.velocity_offset_rad_s[i]);
    // The braking curve S may ask for at most the acceleration bound b: m²·d_e ≤ b.
    envelope_decel_rad_s2_[i] =
        envelope_[i] ? std::min(d, limits_.ddq_max_rad_s2[i] / (margin_ * margin_)) : 0.0;
  }
}

void MotionLimiter::reset(const JointArray& q_rad) noexcept {
  q_ = q_rad;
  v_.fill(0.0);
  a_.fill(0.0);
}

void MotionLimiter::extrapolate(std::uint64_t periods) noexcept {
  // Franka's control substitutes each missed waypoint by keeping the acceleration constant and
  // integrating (v += a·T, then q += v·T); the same here keeps our reference on the robot's.
  for (std::uint64_t k = 0; k < periods; ++k) {
    for (int i = 0; i < kNumJoints; ++i) {
      v_[i] += a_[i] * period_s_;
      q_[i] += v_[i] * period_s_;
    }
  }
}

double MotionLimiter::step_s(std::uint64_t periods) const noexcept {
  return static_cast<double>(std::max<std::uint64_t>(periods, 1)) * period_s_;
}

double MotionLimiter::acceleration_wish(int i, double v_wish, double dt_s) const noexcept {
  const double dv = v_wish - v_[i];
  const double a_dead_beat = dv / dt_s;
  // On the jerk-limited braking curve the acceleration can reach zero exactly when the velocity
  // reaches v_wish; the j·T term keeps a smooth target's own acceleration passing unchanged.
  const double j = limits_.dddq_max_rad_s3[i];
  const double a_cap = std::sqrt(2.0 * j * std::abs(dv)) + j * dt_s;
  return std::clamp(a_dead_beat, -a_cap, a_cap);
}

double MotionLimiter::envelope_speed(int i, double s_rad) const noexcept {
  // S(s) = m·max(0, min(dq_max, √(2·d_e·s) − c) − tol): the robot's envelope at distance s from the
  // range end × the margin, with d_e ≤ d so that following it needs no more deceleration than the
  // acceleration bound.
  const double root = std::sqrt(2.0 * envelope_decel_rad_s2_[i] * std::max(s_rad, 0.0));
  const double dq_max = limits_.dq_max_rad_s[i] / margin_;  // published
  return margin_ * std::max(0.0, std::min(dq_max, root - limits_.velocity_offset_rad_s[i]) -
                                     kJointVelocityLimitsToleranceRadS);
}

// How far the state after a step with acceleration a_new breaks the envelope condition toward the
// upper range end (`toward` = +1) or the lower one (−1) (> 0: inadmissible): the speed's peak toward
// that end while the acceleration turns to full braking (∓b) at full jerk, against S at the distance
// left once that turn is over (reached at most at that peak). Monotone in a_new: non-decreasing for
// the upper end, non-increasing for the lower one.
double MotionLimiter::end_excess(int i, double a_new, double dt_s, double toward) const noexcept {
  const double j = limits_.dddq_max_rad_s3[i];
  const double b = limits_.ddq_max_rad_s2[i];
  const double v_next = v_[i] + a_new * dt_s;
  const double q_next = q_[i] + v_next * dt_s;
  const double a_toward = std::max(toward * a_new, 0.0);
  const double v_peak = toward * v_next + a_toward * a_toward / (2.0 * j);
  if (v_peak <= 0.0) {
    return v_peak;  // not moving toward that end, not even while the acceleration turns
  }
  const double turn_s = std::max(0.0, (toward * a_new + b) / j);
  const double distance = toward > 0.0 ? limits_.q_max_rad[i] - q_next : q_next - limits_.q_min_rad[i];
  return v_peak - envelope_speed(i, distance - turn_s * v_peak);
}

bool MotionLimiter::step_joint(int i, double a_wish, double dt_s) noexcept {
  const double T = dt_s;
  const double v_max = limits_.dq_max_rad_s[i];
  const double a_max = limits_.ddq_max_rad_s2[i];
  const double j_max = limits_.dddq_max_rad_s3[i];
  const double v = v_[i];
  const double a = a_[i];

  // The jerk and acceleration box, always non-empty while |a| ≤ a_max.
  const double box_lo = std::max(a - j_max * T, -a_max);
  const double box_hi = std::min(a + j_max * T, a_max);
  double lo = box_lo;
  double hi = box_hi;
  // |v'| ≤ v_max.
  hi = std::min(hi, (v_max - v) / T);
  lo = std::max(lo, (-v_max - v) / T);
  // The acceleration must still be brought to zero at full jerk before the velocity bound:
  // v + a'T + a'|a'|/(2j) ≤ v_max, solved for a' (the left side grows with a').
  const double jT = j_max * T;
  if (v_max - v >= 0.0) {
    hi = std::min(hi, -jT + std::sqrt(jT * jT + 2.0 * j_max * (v_max - v)));
  }
  if (v_max + v >= 0.0) {
    lo = std::max(lo, jT - std::sqrt(jT * jT + 2.0 * j_max * (v_max + v)));
  }
  if (envelope_[i]) {
    // The largest a' in the box that keeps the upper end's condition, the smallest for the lower
    // end (bisection on the monotone excess, see last_admissible).
    const auto upper = [&](double a_new) { return end_excess(i, a_new, T, 1.0); };
    const auto lower = [&](double a_new) { return end_excess(i, a_new, T, -1.0); };
    if (upper(box_hi) > 0.0) {
      hi = std::min(hi, last_admissible(upper, box_lo, box_hi));
    }
    if (lower(box_lo) > 0.0) {
      lo = std::max(lo, last_admissible(lower, box_hi, box_lo));
    }
  }
  double a_new = a_wish;
  if (lo <= hi) {
    a_new = std::clamp(a_wish, lo, hi);
  } else {
    // Only from a state that broke the invariant (never after reset()): keep jerk and
    // acceleration, get as close to the velocity bounds as they allow.
    a_new = std::clamp(0.5 * (lo + hi), box_lo, box_hi);
  }
  const bool limited = std::abs(a_new - a_wish) > 1e-9 * std::max(1.0, std::abs(a_wish));
  a_[i] = a_new;
  v_[i] = v + a_new * T;
  q_[i] += v_[i] * T;
  return limited;
}

bool MotionLimiter::step(const JointArray& q_target_rad, const JointArray& dq_target_rad_s,
                         std::uint64_t periods) noexcept {
  if (!all_finite(q_target_rad) || !all_finite(dq_target_rad_s)) {
    return brake(periods);
  }
  const double T = step_s(periods);
  bool limited = false;
  for (int i = 0; i < kNumJoints; ++i) {
    // Position error beyond what the target's own velocity covers in this step.
    const double e = q_target_rad[i] - q_[i] - dq_target_rad_s[i] * T;
    // Small errors close in about two periods (a dead-beat e/T chatters against the jerk bound);
    // large ones on a braking curve at half the acceleration limit (no overshoot).
    const double a_brake = 0.5 * limits_.ddq_max_rad_s2[i];
    const double correction =
        sign(e) * std::min(std::abs(e) / (2.0 * T), std::sqrt(2.0 * a_brake * std::abs(e)));
    const double v_wish = dq_target_rad_s[i] + correction;
    limited = step_joint(i, acceleration_wish(i, v_wish, T), T) || limited;
  }
  return limited;
}

bool MotionLimiter::brake(std::uint64_t periods) noexcept {
  const double T = step_s(periods);
  bool limited = false;
  for (int i = 0; i < kNumJoints; ++i) {
    limited = step_joint(i, acceleration_wish(i, 0.0, T), T) || limited;
  }
  return limited;
}

// ---------------------------------------------------------------- RateMatcher

bool is_finite(const CommandSample& sample) noexcept {
  return all_finite(sample.q_rad) && all_finite(sample.dq_rad_s) && std::isfinite(sample.controller_time_s);
}

RateMatcher::RateMatcher(const RateMatcherConfig& config) noexcept : config_(config) {
  if (!(config_.period_s > 0.0) || !std::isfinite(config_.period_s)) {
    config_.period_s = 0.001;
  }
  if (!(config_.hold_after_intervals >= 1.0)) {
    config_.hold_after_intervals = 1.0;
  }
  if (!(config_.hold_after_min_s >= 0.0) || !std::isfinite(config_.hold_after_min_s)) {
    config_.hold_after_min_s = 0.0;
  }
  if (!(config_.initial_interval_s >= config_.period_s)) {
    config_.initial_interval_s = config_.period_s;
  }
  if (!(config_.interval_smoothing > 0.0 && config_.interval_smoothing <= 1.0)) {
    config_.interval_smoothing = 1.0;
  }
  if (!(config_.max_ramp_periods >= 1.0)) {
    config_.max_ramp_periods = 1.0;
  }
  if (!(config_.stamp_agreement_factor >= 1.0)) {
    config_.stamp_agreement_factor = 1.0;
  }
}

void RateMatcher::reset() noexcept {
  has_sample_ = false;
  holding_ = true;
  since_sample_ = 0;
  packets_ = 0;
  interval_s_ = 0.0;
  interval_from_stamps_ = false;
  had_source_tick_ = false;
  interval_exact_ = false;
  accel_valid_ = false;
  source_lag_packets_ = 0.0;
  v_meas_.fill(0.0);
  a_meas_.fill(0.0);
}

bool RateMatcher::on_sample(const CommandSample& sample, const JointArray& q_d_echo_rad,
                            std::uint64_t tick) noexcept {
  if (!is_finite(sample) || !all_finite(q_d_echo_rad)) {
    return false;
  }
  const double T = config_.period_s;
  // The source tick counts only when it is a state already seen and not older than the longest
  // ramp (a sample that old is placed at its arrival, as one without a source tick).
  const bool has_source = sample.source_tick != CommandSample::kUnknownTick && sample.source_tick <= tick &&
                          static_cast<double>(tick - sample.source_tick) <= config_.max_ramp_periods;
  if (has_sample_) {
    // Device time between the samples: between their source ticks when both carry one, else
    // between the arrivals (at least one period: two samples in one packet, the newest replaces
    // the older one).
    const std::uint64_t arrival_ticks = tick > sample_tick_ ? tick - sample_tick_ : 1;
    const bool from_sources = has_source && had_source_tick_ && sample.source_tick > source_tick_;
    const std::uint64_t ticks = from_sources ? sample.source_tick - source_tick_ : arrival_ticks;
    const double device_interval_s = static_cast<double>(ticks) * T;
    const double stamp_interval_s = sample.controller_time_s - sample_.controller_time_s;
    const double f = config_.stamp_agreement_factor;
    interval_from_stamps_ = !from_sources && stamp_interval_s >= device_interval_s / f &&
                            stamp_interval_s <= device_interval_s * f;
    const double previous_interval_s = interval_s_;
    interval_s_ = interval_from_stamps_ ? stamp_interval_s : device_interval_s;
    // Two consecutive intervals between source ticks also give the acceleration (see next()).
    // Intervals between source ticks, or between stamps that agree with the arrivals, are the
    // sampling instants' (free of delivery jitter): two in a row also give the acceleration.
    const bool exact = from_sources || interval_from_stamps_;
    accel_valid_ = exact && interval_exact_;
    interval_exact_ = exact;
    for (int i = 0; i < kNumJoints; ++i) {
      const double v_new = (sample.q_rad[i] - sample_.q_rad[i]) / interval_s_;
      a_meas_[i] = accel_valid_ ? (v_new - v_meas_[i]) / (0.5 * (interval_s_ + previous_interval_s)) : 0.0;
      v_meas_[i] = v_new;
    }
  } else {
    interval_s_ = config_.initial_interval_s;
    interval_from_stamps_ = false;
    interval_exact_ = false;
    accel_valid_ = false;
    v_meas_.fill(0.0);
    a_meas_.fill(0.0);
  }
  // The delay D of the reconstruction: the controller's nominal interval when it gives one, else
  // the smoothed measured interval, fed only with intervals that did not time out (a stall must not
  // stretch the ramps that follow it).
  const double interval_packets = interval_s_ / T;
  if (std::isfinite(sample.nominal_interval_s) && sample.nominal_interval_s > 0.0) {
    delay_packets_ = std::clamp(sample.nominal_interval_s / T, 1.0, config_.max_ramp_periods);
  } else if (!has_sample_) {
    delay_packets_ = std::clamp(interval_packets, 1.0, config_.max_ramp_periods);
  } else if (interval_packets <= config_.hold_after_intervals * delay_packets_) {
    delay_packets_ += config_.interval_smoothing * (interval_packets - delay_packets_);
    delay_packets_ = std::clamp(delay_packets_, 1.0, config_.max_ramp_periods);
  }
  // Ticks by which the sample's source precedes the tick before its arrival (0 when unknown).
  source_lag_packets_ =
      has_source ? static_cast<double>(tick) - 1.0 - static_cast<double>(sample.source_tick) : 0.0;
  // The anchor's offset from the reconstruction at the tick before this arrival, ramped out over D.
  sample_ = sample;
  for (int i = 0; i < kNumJoints; ++i) {
    anchor_offset_[i] = q_d_echo_rad[i] - reconstruction(i, (source_lag_packets_ - delay_packets_) * T);
  }
  sample_tick_ = tick;
  source_tick_ = has_source ? sample.source_tick : 0;
  had_source_tick_ = has_source;
  has_sample_ = true;
  holding_ = false;
  since_sample_ = 0;
  return true;
}

void RateMatcher::next(RateTarget& target, std::uint64_t periods) noexcept {
  periods = std::max<std::uint64_t>(periods, 1);
  packets_ += periods;
  if (!has_sample_) {
    target.hold = true;
    holding_ = true;
    return;
  }
  // k counts packets from the tick before the sample's arrival: a sample that arrived in this
  // packet is one packet old, however many periods passed since the previous packet (its source
  // tick, when known, says how old its content is).
  since_sample_ += since_sample_ == 0 ? 1 : periods;
  const double k = static_cast<double>(since_sample_);
  const double T = config_.period_s;
  if (k > std::max(config_.hold_after_intervals * delay_packets_, config_.hold_after_min_s / T)) {
    holding_ = true;
    target.hold = true;
    return;
  }
  holding_ = false;
  target.hold = false;
  const double D = delay_packets_;
  // The anchor's offset goes out along a quintic smoothstep (zero slope and curvature at both
  // ends): a straight ramp starts and ends with a step of e/(D·T) in velocity, which the robot reads
  // as an acceleration spike (a 125 Hz stream with a few µrad of arrival jitter: ~2000 rad/s³).
  const double x = k < D ? k / D : 1.0;
  const double blend = 1.0 - x * x * x * (10.0 - 15.0 * x + 6.0 * x * x);
  // The velocity is the measured one only: the anchor's ramp-out is a position offset, which the
  // limiter's position loop closes on its braking curve. Feeding the ramp's own slope forward
  // (−e/(D·T)) would tell the limiter that the target runs toward the robot at up to e/T, so its
  // position error stays zero and it accelerates flat out across a large gap (a stitched or
  // re-started goal) and overshoots by v²/(2·a_max) instead of braking in time.
  const double after_sample_s = (k + source_lag_packets_ - D) * T;
  for (int i = 0; i < kNumJoints; ++i) {
    target.q_rad[i] = reconstruction(i, after_sample_s) + anchor_offset_[i] * blend;
    // The limiter's velocity is the backward difference over one period (v' = (q' − q)/T): so is
    // the target's (the measured velocity between the samples; over the last period on the curve).
    target.dq_rad_s[i] = (reconstruction(i, after_sample_s) - reconstruction(i, after_sample_s - T)) / T;
  }
}

double RateMatcher::reconstruction(int i, double after_sample_s) const noexcept {
  // The straight line through the last two samples, or, when the last two intervals were measured
  // between source ticks, the parabola through the last two samples with the acceleration of the
  // last three: its slope at the sample is v_end = v + a·interval/2 (the mean velocity v lags the
  // motion by that), so between the samples it runs on the motion to j·h³ where the line misses by
  // a·h²/8, and past the sample (one that arrived late) by j·Δ³ where the line misses by a·Δ²/2.
  // Past two nominal intervals (at least 4 periods: a few states lost in a row) it goes on straight. A 1 kHz
  // law whose state was lost thus keeps its reference on the trajectory to nrad; with the line it missed by
  // µrad, and the limiter's position loop closed that at its jerk bound.
  if (!accel_valid_) {
    return sample_.q_rad[i] + v_meas_[i] * after_sample_s;
  }
  const double a = a_meas_[i];
  const double v_end = v_meas_[i] + 0.5 * a * interval_s_;
  const double curved_s = std::min(after_sample_s, std::max(2.0 * delay_packets_, 4.0) * config_.period_s);
  const double straight_s = after_sample_s - curved_s;
  return sample_.q_rad[i] + v_end * curved_s + 0.5 * a * curved_s * curved_s +
         (v_end + a * curved_s) * straight_s;
}

}  // namespace jtac::hw
