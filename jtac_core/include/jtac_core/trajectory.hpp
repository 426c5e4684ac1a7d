// A joint trajectory in preallocated storage, and its sampling.
//
// Points are stored in the controller's joint order, with capacity fixed by reserve() at configure;
// filling and sampling never allocate. Sampling semantics (ros2_controllers' JTC, made explicit):
//   * before the first point (τ < t_first): a segment from the start state (the command at the
//     moment the trajectory starts, at τ = start_tau) to the first point, of the order the first
//     point allows;
//   * between points: cubic when the trajectory gives velocities, quintic when it also gives
//     accelerations; a point that gives none where others do is at rest there (zero velocity and
//     acceleration), so no segment steps the velocity (JTC falls back to linear segments there);
//   * positions only (no point gives velocities: scripts, teach pendants, rqt): a C2 cubic spline
//     through the start state (when it lies before the first point) and the points, starting at the
//     start state's velocity and ending at rest (fit_positions_only_spline(), done when the goal
//     starts, because the start state is known only then). Linear interpolation, JTC's choice for
//     positions only, steps the velocity at every point;
//   * at and after the last point: the last point's position, with its own velocity and acceleration
//     exactly at τ = t_last and zero after (the controller decides how to end, see
//     trajectory_controller.hpp);
//   * τ < 0 (a start stamp in the future): the start state's position, at rest.
// A trajectory with a single point is one segment from the start state to that point. An empty
// trajectory is rejected at goal intake (cancel the goal to stop the arm).
#pragma once

#include <vector>

#include "jtac_core/interpolation.hpp"
#include "jtac_core/types.hpp"

namespace jtac {

/// Position / velocity / acceleration of every joint at one instant.
struct JointTrajectoryState {
  JointVector position_rad = JointVector::Zero(0);
  JointVector velocity_rad_s = JointVector::Zero(0);
  JointVector acceleration_rad_s2 = JointVector::Zero(0);

  /// Sets the size and zeroes every entry (no allocation: fixed capacity).
  void set_zero(int num_joints) noexcept {
    position_rad.setZero(num_joints);
    velocity_rad_s.setZero(num_joints);
    acceleration_rad_s2.setZero(num_joints);
  }
};

/// Waypoints with fixed capacity, sampled by piecewise polynomials.
class Trajectory {
 public:
  /// Claims storage for `max_points` points of `num_joints` joints. Not real-time (allocates).
  void reserve(int num_joints, int max_points);

  /// Removes every point; keeps the storage.
  void clear() noexcept { size_ = 0; }

  /// Appends a point in controller joint order. `velocities` / `accelerations` may be null (the
  /// point does not provide them). False when full or when time does not strictly increase.
  bool append(double time_from_start_s, const double* positions, const double* velocities,
              const double* accelerations) noexcept;

  /// Adds `offset_rad` to every position of joint `joint` (whole-turn alignment).
  void offset_joint(int joint, double offset_rad) noexcept;

  /// The state the segment before the first point starts from, at trajectory time start_tau_s
  /// (0 for a fresh start; the stitch time when the goal's prefix has already elapsed).
  void set_start_state(const JointTrajectoryState& state, double start_tau_s = 0.0) noexcept;

  /// Whether no point gives velocities (the trajectory is interpolated by fit_positions_only_spline()).
  bool positions_only() const noexcept { return size_ > 0 && kind_ == SegmentKind::kLinear; }

  /// For a positions-only trajectory: the velocity at every point of the C2 cubic spline through the
  /// start state (a knot when start_tau_s lies before the first point, set by set_start_state())
  /// and the points, clamped to the start state's velocity at its first knot and to rest at the last
  /// point. When the first point has already elapsed (start_tau ≥ its time) the spline starts at
  /// that point at the start state's velocity if start_tau equals its time, else at rest: the path
  /// as planned. Real-time safe (storage claimed by reserve()); O(points × joints).
  void fit_positions_only_spline() noexcept;

  /// The largest |velocity| and |acceleration| of joint `joint` between trajectory times from_tau_s and
  /// to_tau_s (the segment from the start state included), with the trajectory times where they occur.
  /// Exact for cubic segments, sampled for quintic ones (segment_peaks()). Real-time safe.
  SegmentPeaks peaks(int joint, double from_tau_s, double to_tau_s) const noexcept;

  /// Samples at trajectory time tau_s [s since the trajectory's start].
  void sample(double tau_s, JointTrajectoryState& out) const noexcept;

  /// Position of `joint` at point `index`.
  double position(int index, int joint) const noexcept {
    return positions_[static_cast<std::size_t>(index) * static_cast<std::size_t>(num_joints_) +
                      static_cast<std::size_t>(joint)];
  }

  /// time_from_start of point `index` [s].
  double time_from_start(int index) const noexcept { return times_s_[static_cast<std::size_t>(index)]; }

  /// Time of the last point [s]; 0 when empty.
  double duration() const noexcept { return size_ > 0 ? times_s_[static_cast<std::size_t>(size_ - 1)] : 0.0; }

  int size() const noexcept { return size_; }
  int capacity() const noexcept { return capacity_; }
  int num_joints() const noexcept { return num_joints_; }

 private:
  ScalarSample point_sample(int index, int joint) const noexcept;

  int num_joints_ = 0;
  int capacity_ = 0;
  int size_ = 0;
  std::vector<double> times_s_;
  std::vector<double> positions_;      // size_ x num_joints_, row per point
  std::vector<double> velocities_;     // zero where the point has none
  std::vector<double> accelerations_;  // zero where the point has none
  JointTrajectoryState start_;
  double start_tau_s_ = 0.0;
  bool spline_ = false;                      // velocities_ hold a fitted spline: every segment is cubic
  SegmentKind kind_ = SegmentKind::kLinear;  // of every segment: from what any point gives
  std::vector<double> spline_upper_;         // Thomas algorithm scratch, one entry per knot
  std::vector<double> spline_rhs_;
};

}  // namespace jtac
