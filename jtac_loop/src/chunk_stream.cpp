// ChunkStream's frame: configuration, the inputs' intake (validation, the mailboxes), the executing
// future's sampling, the brake and the per-cycle update. The knots are built in
// chunk_stream_chunks.cpp (a chunk) and chunk_stream_targets.cpp (single targets); the header says
// what each part does.
#include "jtac_loop/chunk_stream.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "jtac_rt/numeric.hpp"
#include "stream_curve.hpp"

namespace jtac::loop {

using stream_curve::continue_at_constant_acceleration;
using stream_curve::kInf;

void sample_quintic(const StreamKnot& a, const StreamKnot& b, double time_s, StreamSample& out) noexcept {
  const double h = b.time_s - a.time_s;
  const double u = std::clamp((time_s - a.time_s) / h, 0.0, 1.0);
  const double u2 = u * u;
  const double u3 = u2 * u;
  for (int i = 0; i < kNumJoints; ++i) {
    // q(u) = Σ c_k u^k on u ∈ [0, 1], matching q, h·dq and h²·ddq at both ends.
    const double c0 = a.state.q_rad[i];
    const double c1 = h * a.state.dq_rad_s[i];
    const double c2 = 0.5 * h * h * a.state.ddq_rad_s2[i];
    const double d = b.state.q_rad[i] - c0 - c1 - c2;
    const double e = h * b.state.dq_rad_s[i] - c1 - 2.0 * c2;
    const double f = h * h * b.state.ddq_rad_s2[i] - 2.0 * c2;
    const double c3 = 10.0 * d - 4.0 * e + 0.5 * f;
    const double c4 = -15.0 * d + 7.0 * e - f;
    const double c5 = 6.0 * d - 3.0 * e + 0.5 * f;
    out.q_rad[i] = c0 + u * (c1 + u * (c2 + u * (c3 + u * (c4 + u * c5))));
    out.dq_rad_s[i] = (c1 + u * (2.0 * c2 + u * (3.0 * c3 + u * (4.0 * c4 + u * 5.0 * c5)))) / h;
    out.ddq_rad_s2[i] = (2.0 * c2 + 6.0 * c3 * u + 12.0 * c4 * u2 + 20.0 * c5 * u3) / (h * h);
  }
}

void sample_knots(std::span<const StreamKnot> knots, double time_s, StreamSample& out) noexcept {
  const std::size_t n = knots.size();
  if (n == 1 || time_s <= knots[0].time_s) {
    continue_at_constant_acceleration(knots[0].state, time_s - knots[0].time_s, out);
    return;
  }
  if (time_s >= knots[n - 1].time_s) {
    continue_at_constant_acceleration(knots[n - 1].state, time_s - knots[n - 1].time_s, out);
    return;
  }
  // The segment [k − 1, k] with knots[k − 1].time_s < time_s ≤ knots[k].time_s.
  const auto it = std::lower_bound(knots.begin() + 1, knots.end(), time_s,
                                   [](const StreamKnot& k, double t) { return k.time_s < t; });
  const auto k = static_cast<std::size_t>(it - knots.begin());
  sample_quintic(knots[k - 1], knots[k], time_s, out);
}

// ================================================================================= ChunkStream

ChunkStream::ChunkStream(const ChunkStreamConfig& config) : config_(config) {
  if (!(config_.controller_period_s > 0.0) || config_.chunk_capacity < 1 ||
      !(config_.blend_window_s >= 0.0) || !(config_.timeout_s > 0.0) || !(config_.run_out_s >= 0.0) ||
      !(config_.ensemble_weight > 0.0) || !(config_.ensemble_weight <= 1.0) ||
      !(config_.initial_interval_s > 0.0)) {
    throw std::invalid_argument(
        "ChunkStream: controller_period_s, timeout_s and initial_interval_s must be > 0, blend_window_s "
        "and run_out_s >= 0, chunk_capacity >= 1 and ensemble_weight in (0, 1]");
  }
  for (double a : config_.stop_accelerations_rad_s2) {
    if (!(a > 0.0) || !std::isfinite(a)) {
      throw std::invalid_argument("ChunkStream: stop_accelerations_rad_s2 must be finite and > 0");
    }
  }
  const std::size_t n = config_.chunk_capacity;
  for (Chunk& c : chunks_.buffers()) {
    c.times_s.resize(n);
    c.q_rad.resize(n);
    c.dq_rad_s.resize(n);
  }
  // The join knot, the chunk's points and three blend samples; single targets need three.
  knots_.resize(n + 8);
  scratch_.resize(n + 8);
  chunk_knots_.resize(n);
  chunk_q_.resize(n);
  spline_c_.resize(n);
  spline_d_.resize(n);
  for (int i = 0; i < kNumJoints; ++i) {
    stop_limits_[i] = config_.stop_accelerations_rad_s2[i];
  }
  interval_s_ = config_.initial_interval_s;
  target_delay_s_.store(interval_s_ + config_.controller_period_s, std::memory_order_relaxed);
  reset(JointArray{}, 0.0);
}

std::string ChunkStream::validate_chunk(std::span<const double> times_s, std::span<const JointArray> q_rad,
                                        std::span<const JointArray> dq_rad_s) const {
  const std::size_t n = times_s.size();
  if (n < 1 || n > config_.chunk_capacity) {
    return "a chunk has 1 to " + std::to_string(config_.chunk_capacity) + " points, got " + std::to_string(n);
  }
  if (q_rad.size() != n) {
    return "positions have " + std::to_string(q_rad.size()) + " points, times " + std::to_string(n);
  }
  if (!dq_rad_s.empty() && dq_rad_s.size() != n) {
    return "velocities have " + std::to_string(dq_rad_s.size()) + " points, times " + std::to_string(n);
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (!std::isfinite(times_s[k])) {
      return "times[" + std::to_string(k) + "] is " + std::to_string(times_s[k]);
    }
    if (k > 0 && !(times_s[k] > times_s[k - 1])) {
      return "times must increase strictly: times[" + std::to_string(k) +
             "] = " + std::to_string(times_s[k]) + " after " + std::to_string(times_s[k - 1]);
    }
    for (int i = 0; i < kNumJoints; ++i) {
      if (!std::isfinite(q_rad[k][i])) {
        return "positions[" + std::to_string(k) + "] of joint " + std::to_string(i) + " is " +
               std::to_string(q_rad[k][i]);
      }
      if (!dq_rad_s.empty() && !std::isfinite(dq_rad_s[k][i])) {
        return "velocities[" + std::to_string(k) + "] of joint " + std::to_string(i) + " is " +
               std::to_string(dq_rad_s[k][i]);
      }
    }
  }
  return "";
}

bool ChunkStream::submit_chunk(std::span<const double> times_s, std::span<const JointArray> q_rad,
                               std::span<const JointArray> dq_rad_s) noexcept {
  const std::size_t n = times_s.size();
  bool ok = n >= 1 && n <= config_.chunk_capacity && q_rad.size() == n &&
            (dq_rad_s.empty() || dq_rad_s.size() == n);
  for (std::size_t k = 0; ok && k < n; ++k) {
    ok = std::isfinite(times_s[k]) && (k == 0 || times_s[k] > times_s[k - 1]) && all_finite(q_rad[k]) &&
         (dq_rad_s.empty() || all_finite(dq_rad_s[k]));
  }
  if (!ok) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  Chunk& c = chunks_.write_buffer();
  std::copy(times_s.begin(), times_s.end(), c.times_s.begin());
  std::copy(q_rad.begin(), q_rad.end(), c.q_rad.begin());
  if (!dq_rad_s.empty()) {
    std::copy(dq_rad_s.begin(), dq_rad_s.end(), c.dq_rad_s.begin());
  }
  c.size = n;
  c.has_velocities = !dq_rad_s.empty();
  c.sequence = ++sequence_;
  chunks_.publish();
  return true;
}

bool ChunkStream::submit_target(const JointArray& q_rad, const JointArray* dq_rad_s,
                                double stamp_s) noexcept {
  if (!all_finite(q_rad) || (dq_rad_s != nullptr && !all_finite(*dq_rad_s)) || !std::isfinite(stamp_s)) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  Target t;
  t.q_rad = q_rad;
  t.has_velocity = dq_rad_s != nullptr;
  if (t.has_velocity) {
    t.dq_rad_s = *dq_rad_s;
  }
  t.stamp_s = stamp_s;
  t.sequence = sequence_ + 1;
  if (!targets_.push(t)) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  ++sequence_;
  return true;
}

void ChunkStream::drop_inputs() noexcept {
  while (chunks_.take_new() != nullptr) {
  }
  Target dropped;
  while (targets_.pop(dropped)) {
  }
}

void ChunkStream::reset(const JointArray& q_rad, double time_s) noexcept {
  knots_[0].time_s = time_s;
  knots_[0].state = StreamSample{q_rad, {}, {}};
  num_knots_ = 1;
  num_placed_ = 0;
  has_stamp_ = false;
  last_input_s_ = time_s;
  join_end_s_ = time_s;
  brake_start_s_ = kInf;
  brake_at(time_s);  // at rest: the stop is empty
  brake_counted_ = true;
  state_.store(StreamState::kHolding, std::memory_order_relaxed);
}

void ChunkStream::brake_from(const StreamSample& from, double time_s) noexcept {
  const bool counted = brake_counted_;
  knots_[0].time_s = time_s;
  knots_[0].state = from;
  num_knots_ = 1;
  num_placed_ = 0;
  join_end_s_ = time_s;
  brake_start_s_ = kInf;
  brake_at(time_s);
  brake_counted_ = counted;  // the brake it replaces was counted (or not yet) already
}

void ChunkStream::sample(double time_s, StreamSample& out) const noexcept {
  if (time_s >= brake_start_s_) {
    JointVector q = stop_q_;
    JointVector v = stop_v_;
    JointVector a = stop_a_;
    stop_.sample(time_s - brake_start_s_, q, v, a);
    for (int i = 0; i < kNumJoints; ++i) {
      out.q_rad[i] = q[i];
      out.dq_rad_s[i] = v[i];
      out.ddq_rad_s2[i] = a[i];
    }
    return;
  }
  sample_knots(std::span<const StreamKnot>(knots_.data(), num_knots_), time_s, out);
}

void ChunkStream::brake_at(double time_s) noexcept {
  if (time_s >= brake_start_s_) {
    return;
  }
  StreamSample s;
  sample_knots(std::span<const StreamKnot>(knots_.data(), num_knots_), time_s, s);
  for (int i = 0; i < kNumJoints; ++i) {
    stop_q_[i] = s.q_rad[i];
    stop_v_[i] = s.dq_rad_s[i];
  }
  stop_.start(stop_q_, stop_v_, stop_limits_);
  brake_start_s_ = time_s;
  brake_counted_ = false;
}

void ChunkStream::update(double time_s, StreamSample& out) noexcept {
  // Inputs in the order they were submitted: targets sent before the chunk first.
  const Chunk* chunk = chunks_.take_new();
  Target target;
  while (targets_.pop(target)) {
    if (chunk != nullptr && chunk->sequence < target.sequence) {
      apply_chunk(*chunk, time_s);
      chunk = nullptr;
    }
    apply_target(target, time_s);
  }
  if (chunk != nullptr) {
    apply_chunk(*chunk, time_s);
  }
  // No input for timeout_s: brake (a no-op when the future ends sooner).
  brake_at(last_input_s_ + config_.timeout_s);
  sample(time_s, out);
  StreamState state = StreamState::kFollowing;
  if (time_s >= brake_start_s_) {
    if (!brake_counted_) {
      brakes_.fetch_add(1, std::memory_order_relaxed);
      brake_counted_ = true;
    }
    state = time_s >= brake_start_s_ + stop_.duration() ? StreamState::kHolding : StreamState::kBraking;
  }
  state_.store(state, std::memory_order_relaxed);
}

void ChunkStream::commit(std::size_t count, double now_s) noexcept {
  std::swap(knots_, scratch_);  // swaps the vectors' storage: no allocation
  num_knots_ = count;
  last_input_s_ = now_s;
  brake_start_s_ = kInf;
  brake_at(knots_[count - 1].time_s + config_.run_out_s);
}

}  // namespace jtac::loop
