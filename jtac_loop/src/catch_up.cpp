#include "jtac_loop/catch_up.hpp"

#include <algorithm>
#include <cmath>

namespace jtac::loop {

namespace {

// Slack on a bound for rounding: relative, and absolute [rad/s²].
constexpr double kRelativeSlack = 1e-6;
constexpr double kAbsoluteSlackRadS2 = 1e-9;

}  // namespace

void CatchUp::reset(const JointArray& q_rad, double time_s) noexcept {
  command_ = StreamSample{q_rad, {}, {}};
  reference_ = command_;
  accel_rad_s2_ = {};
  time_s_ = time_s;
  catching_up_ = false;
}

bool CatchUp::fits(const StreamSample& ref, double dt_s, CatchUpBound kind,
                   const JointArray& a) const noexcept {
  for (std::size_t j = 0; j < a.size(); ++j) {
    // A join may go on accelerating as the command did (not more); a brake at its own deceleration.
    double bound = std::max(a[j], std::abs(accel_rad_s2_[j]));
    if (kind == CatchUpBound::kBrake) {
      bound = std::max({bound, std::abs(ref.ddq_rad_s2[j]), std::abs(reference_.ddq_rad_s2[j])});
    } else if (kind == CatchUpBound::kInput) {
      bound =
          std::max({bound, std::abs(ref.ddq_rad_s2[j]), std::abs(reference_.ddq_rad_s2[j])}) + 0.25 * a[j];
    }
    bound = bound * (1.0 + kRelativeSlack) + kAbsoluteSlackRadS2;
    const double accel = (ref.dq_rad_s[j] - reference_.dq_rad_s[j]) / dt_s;
    const double off_trapezoid =
        ref.q_rad[j] - reference_.q_rad[j] - 0.5 * (reference_.dq_rad_s[j] + ref.dq_rad_s[j]) * dt_s;
    if (!(std::abs(accel) <= bound) || !(std::abs(off_trapezoid) <= 0.5 * bound * dt_s * dt_s)) {
      return false;
    }
    // A join changes the acceleration within the catch-up's jerk: a short join from a
    // brake under way steps it by more (the limiter's business otherwise).
    if (kind == CatchUpBound::kStop &&
        !(std::abs(accel - accel_rad_s2_[j]) <= config_.jerk_rad_s3 * dt_s * (1.0 + kRelativeSlack))) {
      return false;
    }
  }
  return true;
}

void CatchUp::track(const StreamSample& ref, double dt_s, CatchUpBound kind, double a,
                    std::size_t j) noexcept {
  // The error at the last cycle against the last reference, and the reference's mean acceleration
  // over this one; after a step or kink of the reference, against the new curve extended back.
  double e = command_.q_rad[j] - reference_.q_rad[j];
  double de = command_.dq_rad_s[j] - reference_.dq_rad_s[j];
  double ref_accel = (ref.dq_rad_s[j] - reference_.dq_rad_s[j]) / dt_s;
  const double off_trapezoid =
      ref.q_rad[j] - reference_.q_rad[j] - 0.5 * (reference_.dq_rad_s[j] + ref.dq_rad_s[j]) * dt_s;
  if (std::abs(off_trapezoid) > kRebaseRad) {
    const double ddq = ref.ddq_rad_s2[j];
    e = command_.q_rad[j] - (ref.q_rad[j] - ref.dq_rad_s[j] * dt_s + 0.5 * ddq * dt_s * dt_s);
    de = command_.dq_rad_s[j] - (ref.dq_rad_s[j] - ddq * dt_s);
    ref_accel = ddq;
  }
  const double lambda = config_.rate_per_s;
  const double speed = std::min({lambda * std::abs(e), std::sqrt(a * std::abs(e)), config_.max_speed_rad_s});
  const double de_wanted = -std::copysign(speed, e);
  double bound = a;
  if (kind == CatchUpBound::kBrake) {
    bound = std::max(a, std::abs(ref.ddq_rad_s2[j]));
  } else if (kind == CatchUpBound::kInput) {
    bound = std::max(a, std::abs(ref.ddq_rad_s2[j]) + 0.25 * a);
  }
  const double jerk_step = config_.jerk_rad_s3 * dt_s;
  double accel = ref_accel + 4.0 * lambda * (de_wanted - de);
  accel = std::clamp(accel, accel_rad_s2_[j] - jerk_step, accel_rad_s2_[j] + jerk_step);
  accel = std::clamp(accel, -bound, bound);  // the bound before the jerk
  const double u = accel - ref_accel;        // the error's own acceleration
  e += de * dt_s + 0.5 * u * dt_s * dt_s;
  de += u * dt_s;
  command_.q_rad[j] = ref.q_rad[j] + e;
  command_.dq_rad_s[j] = ref.dq_rad_s[j] + de;
  command_.ddq_rad_s2[j] = accel;  // its mean over the cycle (r̈ + u where r̈ is constant)
  accel_rad_s2_[j] = accel;
}

bool CatchUp::ease(double time_s, StreamSample& out) noexcept {
  const double dt_s = std::max(time_s - time_s_, 0.0);
  time_s_ = time_s;
  const double jerk_step = config_.jerk_rad_s3 * dt_s;
  bool eased = true;
  for (std::size_t j = 0; j < out.q_rad.size(); ++j) {
    const double accel = std::clamp(0.0, accel_rad_s2_[j] - jerk_step, accel_rad_s2_[j] + jerk_step);
    eased = eased && accel == 0.0;
    command_.q_rad[j] += command_.dq_rad_s[j] * dt_s + 0.5 * accel * dt_s * dt_s;
    command_.dq_rad_s[j] += accel * dt_s;
    command_.ddq_rad_s2[j] = accel;
    accel_rad_s2_[j] = accel;
  }
  reference_ = command_;
  out = command_;
  return eased;
}

void CatchUp::hermite(const StreamSample& a, const StreamSample& b, double s, double span_s,
                      StreamSample& out) noexcept {
  const double s2 = s * s;
  const double s3 = s2 * s;
  for (std::size_t j = 0; j < out.q_rad.size(); ++j) {
    const double q0 = a.q_rad[j];
    const double q1 = b.q_rad[j];
    const double v0 = a.dq_rad_s[j] * span_s;  // tangents in the unit parameter
    const double v1 = b.dq_rad_s[j] * span_s;
    out.q_rad[j] =
        (2 * s3 - 3 * s2 + 1) * q0 + (s3 - 2 * s2 + s) * v0 + (-2 * s3 + 3 * s2) * q1 + (s3 - s2) * v1;
    out.dq_rad_s[j] =
        ((6 * s2 - 6 * s) * (q0 - q1) + (3 * s2 - 4 * s + 1) * v0 + (3 * s2 - 2 * s) * v1) / span_s;
    out.ddq_rad_s2[j] = ((12 * s - 6) * (q0 - q1) + (6 * s - 4) * v0 + (6 * s - 2) * v1) / (span_s * span_s);
  }
}

bool CatchUp::on(const StreamSample& ref) const noexcept {
  for (std::size_t j = 0; j < ref.q_rad.size(); ++j) {
    if (!(std::abs(command_.q_rad[j] - ref.q_rad[j]) <= kOnReferenceRad) ||
        !(std::abs(command_.dq_rad_s[j] - ref.dq_rad_s[j]) <= kOnReferenceRadS)) {
      return false;
    }
  }
  return true;
}

void CatchUp::update(double time_s, CatchUpBound kind, const JointArray& stop_accelerations_rad_s2,
                     StreamSample& ref) noexcept {
  const double dt_s = time_s - time_s_;
  if (!(dt_s > 0.0)) {  // the same time again (a first cycle at the reset time): nothing moved
    if (!catching_up_) {
      command_ = ref;
      reference_ = ref;
    }
    ref = command_;
    return;
  }
  time_s_ = time_s;
  if (!catching_up_) {
    if (fits(ref, dt_s, kind, stop_accelerations_rad_s2)) {
      for (std::size_t j = 0; j < ref.q_rad.size(); ++j) {
        accel_rad_s2_[j] = (ref.dq_rad_s[j] - reference_.dq_rad_s[j]) / dt_s;
      }
      command_ = ref;
      reference_ = ref;
      return;
    }
    catching_up_ = true;
    catch_ups_.fetch_add(1, std::memory_order_relaxed);
  }
  // One step per controller period: a cycle that comes late (states lost, the thread late) gives the
  // command the cycles in between would have given, so that it stays what the hardware thread
  // extrapolated from the last one (the reference in between: the cubic Hermite through its two
  // samples).
  const StreamSample from = reference_;
  const int steps = std::max(1, static_cast<int>(std::lround(dt_s / config_.period_s)));
  const double step_s = dt_s / steps;
  for (int k = 1; k <= steps; ++k) {
    StreamSample r = ref;
    if (k < steps) {
      hermite(from, ref, static_cast<double>(k) / steps, dt_s, r);
    }
    if (catching_up_) {
      for (std::size_t j = 0; j < r.q_rad.size(); ++j) {
        track(r, step_s, kind, stop_accelerations_rad_s2[j], j);
      }
      if (on(r)) {
        catching_up_ = false;
      }
    }
    reference_ = r;
    if (!catching_up_) {
      command_ = r;
    }
  }
  ref = command_;
}

}  // namespace jtac::loop
