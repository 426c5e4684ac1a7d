#include "jtac_core/trajectory.hpp"

#include <algorithm>
#include <cmath>

namespace jtac {

void Trajectory::reserve(int num_joints, int max_points) {
  num_joints_ = num_joints;
  capacity_ = max_points;
  size_ = 0;
  const auto n = static_cast<std::size_t>(num_joints) * static_cast<std::size_t>(max_points);
  times_s_.assign(static_cast<std::size_t>(max_points), 0.0);
  positions_.assign(n, 0.0);
  velocities_.assign(n, 0.0);
  accelerations_.assign(n, 0.0);
  start_.set_zero(num_joints);
  spline_upper_.assign(static_cast<std::size_t>(max_points) + 1, 0.0);
  spline_rhs_.assign(static_cast<std::size_t>(max_points) + 1, 0.0);
}

bool Trajectory::append(double time_from_start_s, const double* positions, const double* velocities,
                        const double* accelerations) noexcept {
  if (size_ >= capacity_ || (size_ > 0 && !(time_from_start_s > duration()))) {
    return false;
  }
  spline_ = false;
  if (size_ == 0) {
    kind_ = SegmentKind::kLinear;
  }
  kind_ = segment_kind(velocities != nullptr || kind_ != SegmentKind::kLinear,
                       accelerations != nullptr || kind_ == SegmentKind::kQuintic);
  const auto row = static_cast<std::size_t>(size_) * static_cast<std::size_t>(num_joints_);
  for (int j = 0; j < num_joints_; ++j) {
    const auto k = row + static_cast<std::size_t>(j);
    positions_[k] = positions[j];
    velocities_[k] = velocities != nullptr ? velocities[j] : 0.0;
    accelerations_[k] = accelerations != nullptr ? accelerations[j] : 0.0;
  }
  times_s_[static_cast<std::size_t>(size_)] = time_from_start_s;
  ++size_;
  return true;
}

void Trajectory::offset_joint(int joint, double offset_rad) noexcept {
  for (int i = 0; i < size_; ++i) {
    positions_[static_cast<std::size_t>(i * num_joints_ + joint)] += offset_rad;
  }
}

void Trajectory::set_start_state(const JointTrajectoryState& state, double start_tau_s) noexcept {
  start_ = state;
  start_tau_s_ = start_tau_s;
}

void Trajectory::fit_positions_only_spline() noexcept {
  if (size_ == 0) {
    return;
  }
  spline_ = true;
  const double t_first = times_s_[0];
  // Knot k: the start state (when it lies before the first point), then the points.
  const int lead = start_tau_s_ < t_first ? 1 : 0;
  const int knots = size_ + lead;
  const auto time = [&](int k) {
    return k < lead ? start_tau_s_ : times_s_[static_cast<std::size_t>(k - lead)];
  };
  const auto position = [&](int k, int j) {
    return k < lead ? start_.position_rad[j]
                    : positions_[static_cast<std::size_t>((k - lead) * num_joints_ + j)];
  };
  const bool starts_now = lead == 1 || start_tau_s_ == t_first;
  for (int j = 0; j < num_joints_; ++j) {
    const double v_first = starts_now ? start_.velocity_rad_s[j] : 0.0;  // [rad/s of trajectory time]
    const double v_last = 0.0;
    // Unknown velocities at the interior knots 1 .. knots − 2 (C2 continuity of cubic Hermite
    // segments): h_k v_{k−1} + 2 (h_{k−1} + h_k) v_k + h_{k−1} v_{k+1} = 3 (h_k δ_{k−1} + h_{k−1} δ_k),
    // h_k the length of segment k, δ_k its mean slope. Tridiagonal, diagonally dominant: Thomas.
    for (int k = 1; k + 1 < knots; ++k) {
      const double h_prev = time(k) - time(k - 1);
      const double h_next = time(k + 1) - time(k);
      const double slope_prev = (position(k, j) - position(k - 1, j)) / h_prev;
      const double slope_next = (position(k + 1, j) - position(k, j)) / h_next;
      double rhs = 3.0 * (h_next * slope_prev + h_prev * slope_next);
      const double lower = k == 1 ? 0.0 : h_next;
      const double upper = k + 2 == knots ? 0.0 : h_prev;
      if (k == 1) {
        rhs -= h_next * v_first;
      }
      if (k + 2 == knots) {
        rhs -= h_prev * v_last;
      }
      const double diag =
          2.0 * (h_prev + h_next) - lower * (k == 1 ? 0.0 : spline_upper_[static_cast<std::size_t>(k - 1)]);
      spline_upper_[static_cast<std::size_t>(k)] = upper / diag;
      spline_rhs_[static_cast<std::size_t>(k)] =
          (rhs - lower * (k == 1 ? 0.0 : spline_rhs_[static_cast<std::size_t>(k - 1)])) / diag;
    }
    double v_next = v_last;
    for (int k = knots - 1; k >= 0; --k) {
      double v = v_last;
      if (k + 1 < knots) {
        v = k == 0 ? v_first
                   : spline_rhs_[static_cast<std::size_t>(k)] -
                         spline_upper_[static_cast<std::size_t>(k)] * v_next;
      }
      v_next = v;
      if (k >= lead) {
        velocities_[static_cast<std::size_t>((k - lead) * num_joints_ + j)] = v;
        accelerations_[static_cast<std::size_t>((k - lead) * num_joints_ + j)] = 0.0;
      }
    }
  }
}

SegmentPeaks Trajectory::peaks(int joint, double from_tau_s, double to_tau_s) const noexcept {
  SegmentPeaks out;
  if (size_ == 0 || !(to_tau_s > from_tau_s)) {
    return out;
  }
  const SegmentKind kind = spline_ ? SegmentKind::kCubic : kind_;
  // Segment -1 runs from the start state (at start_tau_s_) to the first point.
  for (int i = -1; i + 1 < size_; ++i) {
    const double t0 = i < 0 ? start_tau_s_ : times_s_[static_cast<std::size_t>(i)];
    const double t1 = times_s_[static_cast<std::size_t>(i + 1)];
    if (t1 <= from_tau_s || !(t1 > t0)) {
      continue;
    }
    if (t0 >= to_tau_s) {
      break;
    }
    const ScalarSample a = i < 0 ? ScalarSample{start_.position_rad[joint], start_.velocity_rad_s[joint],
                                                start_.acceleration_rad_s2[joint]}
                                 : point_sample(i, joint);
    const SegmentPeaks p =
        segment_peaks(kind, a, point_sample(i + 1, joint), t1 - t0, from_tau_s - t0, to_tau_s - t0);
    if (p.velocity > out.velocity) {
      out.velocity = p.velocity;
      out.velocity_at_s = t0 + p.velocity_at_s;
    }
    if (p.acceleration > out.acceleration) {
      out.acceleration = p.acceleration;
      out.acceleration_at_s = t0 + p.acceleration_at_s;
    }
  }
  return out;
}

ScalarSample Trajectory::point_sample(int index, int joint) const noexcept {
  const auto k = static_cast<std::size_t>(index * num_joints_ + joint);
  return {positions_[k], velocities_[k], accelerations_[k]};
}

void Trajectory::sample(double tau_s, JointTrajectoryState& out) const noexcept {
  out.set_zero(num_joints_);
  if (size_ == 0 || tau_s < 0.0 || std::isnan(tau_s)) {  // NaN: never index past the points
    out.position_rad = start_.position_rad;
    return;
  }
  const double t_first = times_s_[0];
  if (tau_s < t_first) {
    const SegmentKind kind = spline_ ? SegmentKind::kCubic : kind_;
    for (int j = 0; j < num_joints_; ++j) {
      const ScalarSample start{start_.position_rad[j], start_.velocity_rad_s[j],
                               start_.acceleration_rad_s2[j]};
      const ScalarSample s =
          sample_segment(kind, start, point_sample(0, j), t_first - start_tau_s_, tau_s - start_tau_s_);
      out.position_rad[j] = s.position;
      out.velocity_rad_s[j] = s.velocity;
      out.acceleration_rad_s2[j] = s.acceleration;
    }
    return;
  }
  const double t_last = duration();
  if (tau_s >= t_last) {
    const int last = size_ - 1;
    for (int j = 0; j < num_joints_; ++j) {
      const ScalarSample p = point_sample(last, j);
      out.position_rad[j] = p.position;
      if (tau_s == t_last) {
        out.velocity_rad_s[j] = p.velocity;
        out.acceleration_rad_s2[j] = p.acceleration;
      }
    }
    return;
  }
  // Segment [i, i+1] with times_s_[i] <= tau < times_s_[i+1].
  const auto begin = times_s_.begin();
  const auto it = std::upper_bound(begin, begin + size_, tau_s);
  const int i = static_cast<int>(it - begin) - 1;
  const auto a = static_cast<std::size_t>(i);
  const auto b = a + 1;
  const SegmentKind kind = spline_ ? SegmentKind::kCubic : kind_;
  const double t0 = times_s_[a];
  const double duration_s = times_s_[b] - t0;
  for (int j = 0; j < num_joints_; ++j) {
    const ScalarSample s =
        sample_segment(kind, point_sample(i, j), point_sample(i + 1, j), duration_s, tau_s - t0);
    out.position_rad[j] = s.position;
    out.velocity_rad_s[j] = s.velocity;
    out.acceleration_rad_s2[j] = s.acceleration;
  }
}

}  // namespace jtac
