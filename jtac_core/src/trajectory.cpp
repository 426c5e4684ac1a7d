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
  has_velocities_.assign(static_cast<std::size_t>(max_points), 0);
  has_accelerations_.assign(static_cast<std::size_t>(max_points), 0);
  start_.set_zero(num_joints);
}

bool Trajectory::append(double time_from_start_s, const double* positions, const double* velocities,
                        const double* accelerations) noexcept {
  if (size_ >= capacity_ || (size_ > 0 && !(time_from_start_s > duration()))) {
    return false;
  }
  const auto row = static_cast<std::size_t>(size_) * static_cast<std::size_t>(num_joints_);
  for (int j = 0; j < num_joints_; ++j) {
    const auto k = row + static_cast<std::size_t>(j);
    positions_[k] = positions[j];
    velocities_[k] = velocities != nullptr ? velocities[j] : 0.0;
    accelerations_[k] = accelerations != nullptr ? accelerations[j] : 0.0;
  }
  times_s_[static_cast<std::size_t>(size_)] = time_from_start_s;
  has_velocities_[static_cast<std::size_t>(size_)] = velocities != nullptr ? 1 : 0;
  has_accelerations_[static_cast<std::size_t>(size_)] = accelerations != nullptr ? 1 : 0;
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
    const auto first = static_cast<std::size_t>(0);
    const SegmentKind kind = segment_kind(has_velocities_[first] != 0, has_accelerations_[first] != 0);
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
  const SegmentKind kind = segment_kind(has_velocities_[a] != 0 && has_velocities_[b] != 0,
                                        has_accelerations_[a] != 0 && has_accelerations_[b] != 0);
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
