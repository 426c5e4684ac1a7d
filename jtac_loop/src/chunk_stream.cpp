// Length: over 600 lines because chunks, single targets, the blend and the brake share one executing
// future (the knots) and its private state; the header says what each part does.
#include "jtac_loop/chunk_stream.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace jtac::loop {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool finite(const JointArray& x) noexcept {
  return std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); });
}

// Derivative at x of the parabola through (x0, y0), (x1, y1), (x2, y2).
double parabola_slope(double x0, double y0, double x1, double y1, double x2, double y2, double x) noexcept {
  return y0 * (2.0 * x - x1 - x2) / ((x0 - x1) * (x0 - x2)) +
         y1 * (2.0 * x - x0 - x2) / ((x1 - x0) * (x1 - x2)) +
         y2 * (2.0 * x - x0 - x1) / ((x2 - x0) * (x2 - x1));
}

// First and second derivative, at the last abscissa x[n − 1], of the polynomial through the n ≤ 4
// points (x[k], y[k]) (Newton's divided differences; n = 1 gives 0 and 0, n = 2 a line).
void newton_derivatives(const double* x, const double* y, int n, double& slope, double& curvature) noexcept {
  double dd[4] = {0.0, 0.0, 0.0, 0.0};  // the divided differences f[x0..xk]
  double work[4] = {0.0, 0.0, 0.0, 0.0};
  for (int k = 0; k < n; ++k) {
    work[k] = y[k];
  }
  dd[0] = work[0];
  for (int order = 1; order < n; ++order) {
    for (int k = 0; k + order < n; ++k) {
      work[k] = (work[k + 1] - work[k]) / (x[k + order] - x[k]);
    }
    dd[order] = work[0];
  }
  // p(x) = dd0 + dd1·u0 + dd2·u0·u1 + dd3·u0·u1·u2 with u_k = x − x_k, at x = x[n − 1].
  const double xe = x[n - 1];
  const double u0 = xe - x[0];
  const double u1 = n > 1 ? xe - x[1] : 0.0;
  const double u2 = n > 2 ? xe - x[2] : 0.0;
  slope = dd[1] + dd[2] * (u0 + u1) + dd[3] * (u1 * u2 + u0 * u2 + u0 * u1);
  curvature = 2.0 * dd[2] + 2.0 * dd[3] * (u0 + u1 + u2);
}

// Constant-acceleration continuation of `from` by dt_s [s] (negative: backwards).
void continue_at_constant_acceleration(const StreamSample& from, double dt_s, StreamSample& out) noexcept {
  for (int i = 0; i < kNumJoints; ++i) {
    out.q_rad[i] = from.q_rad[i] + from.dq_rad_s[i] * dt_s + 0.5 * from.ddq_rad_s2[i] * dt_s * dt_s;
    out.dq_rad_s[i] = from.dq_rad_s[i] + from.ddq_rad_s2[i] * dt_s;
    out.ddq_rad_s2[i] = from.ddq_rad_s2[i];
  }
}

// The quintic smoothstep s(u) = 10u³ − 15u⁴ + 6u⁵ and its first two derivatives in u.
void smoothstep(double u, double& s, double& ds, double& dds) noexcept {
  u = std::clamp(u, 0.0, 1.0);
  const double u2 = u * u;
  s = u2 * u * (10.0 - 15.0 * u + 6.0 * u2);
  ds = 30.0 * u2 * (1.0 - 2.0 * u + u2);
  dds = 60.0 * u * (1.0 - 3.0 * u + 2.0 * u2);
}

}  // namespace

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
    ok = std::isfinite(times_s[k]) && (k == 0 || times_s[k] > times_s[k - 1]) && finite(q_rad[k]) &&
         (dq_rad_s.empty() || finite(dq_rad_s[k]));
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
  if (!finite(q_rad) || (dq_rad_s != nullptr && !finite(*dq_rad_s)) || !std::isfinite(stamp_s)) {
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

void ChunkStream::build_chunk_curve(const Chunk& chunk, double now_s) noexcept {
  const std::size_t n = chunk.size;
  const double* t = chunk.times_s.data();
  // Ensembling: where the executing future still covers a point, average it in.
  const double w = config_.ensemble_weight;
  const bool following = now_s < brake_start_s_;
  const double covered_until_s = following ? knots_[num_knots_ - 1].time_s : -kInf;
  StreamSample old;
  for (std::size_t k = 0; k < n; ++k) {
    chunk_q_[k] = chunk.q_rad[k];
    chunk_knots_[k].time_s = t[k];
    chunk_knots_[k].state.dq_rad_s = chunk.has_velocities ? chunk.dq_rad_s[k] : JointArray{};
    if (w < 1.0 && t[k] > now_s && t[k] <= covered_until_s) {
      sample(t[k], old);
      for (int i = 0; i < kNumJoints; ++i) {
        chunk_q_[k][i] = w * chunk_q_[k][i] + (1.0 - w) * old.q_rad[i];
        if (chunk.has_velocities) {
          chunk_knots_[k].state.dq_rad_s[i] = w * chunk.dq_rad_s[k][i] + (1.0 - w) * old.dq_rad_s[i];
        }
      }
    }
    chunk_knots_[k].state.q_rad = chunk_q_[k];
  }
  num_chunk_knots_ = n;
  for (int i = 0; i < kNumJoints; ++i) {
    auto q = [&](std::size_t k) { return chunk_q_[k][i]; };
    auto v = [&](std::size_t k) -> double& { return chunk_knots_[k].state.dq_rad_s[i]; };
    auto a = [&](std::size_t k) -> double& { return chunk_knots_[k].state.ddq_rad_s2[i]; };
    if (n == 1) {
      a(0) = 0.0;
      if (!chunk.has_velocities) {
        v(0) = 0.0;
      }
      continue;
    }
    if (n == 2) {
      const double h = t[1] - t[0];
      if (!chunk.has_velocities) {
        v(0) = v(1) = (q(1) - q(0)) / h;
      }
      a(0) = a(1) = chunk.has_velocities ? (v(1) - v(0)) / h : 0.0;
      continue;
    }
    if (chunk.has_velocities) {
      // Accelerations: the parabola through three neighbouring velocities.
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t m = std::clamp<std::size_t>(k, 1, n - 2);
        a(k) = parabola_slope(t[m - 1], v(m - 1), t[m], v(m), t[m + 1], v(m + 1), t[k]);
      }
      continue;
    }
    // C² cubic spline, end slopes from the end parabolas; slopes by the Thomas algorithm on
    // h_k·v_{k−1} + 2(h_{k−1} + h_k)·v_k + h_{k−1}·v_{k+1} = 3(h_k·δ_{k−1} + h_{k−1}·δ_k).
    v(0) = parabola_slope(t[0], q(0), t[1], q(1), t[2], q(2), t[0]);
    v(n - 1) = parabola_slope(t[n - 3], q(n - 3), t[n - 2], q(n - 2), t[n - 1], q(n - 1), t[n - 1]);
    double* c = spline_c_.data();
    double* d = spline_d_.data();
    for (std::size_t k = 1; k + 1 < n; ++k) {
      const double h0 = t[k] - t[k - 1];
      const double h1 = t[k + 1] - t[k];
      const double lower = h1;
      const double diag = 2.0 * (h0 + h1);
      const double upper = h0;
      double rhs = 3.0 * (h1 * (q(k) - q(k - 1)) / h0 + h0 * (q(k + 1) - q(k)) / h1);
      if (k == 1) {
        rhs -= lower * v(0);
      }
      if (k + 2 == n) {
        rhs -= upper * v(n - 1);
      }
      const double prev_c = k == 1 ? 0.0 : c[k - 1];
      const double prev_d = k == 1 ? 0.0 : d[k - 1];
      const double denom = diag - (k == 1 ? 0.0 : lower * prev_c);
      c[k] = (k + 2 == n) ? 0.0 : upper / denom;
      d[k] = (rhs - (k == 1 ? 0.0 : lower * prev_d)) / denom;
    }
    for (std::size_t k = n - 2; k >= 1; --k) {
      v(k) = d[k] - (k + 2 == n ? 0.0 : c[k] * v(k + 1));
    }
    // Accelerations of the cubic pieces at their left ends (the last at its right end).
    for (std::size_t k = 0; k + 1 < n; ++k) {
      const double h = t[k + 1] - t[k];
      a(k) = (6.0 * (q(k + 1) - q(k)) / h - 4.0 * v(k) - 2.0 * v(k + 1)) / h;
    }
    const double h = t[n - 1] - t[n - 2];
    a(n - 1) = (-6.0 * (q(n - 1) - q(n - 2)) / h + 2.0 * v(n - 2) + 4.0 * v(n - 1)) / h;
  }
}

void ChunkStream::blend_state(double time_s, double start_s, double window_s,
                              StreamSample& out) const noexcept {
  StreamSample old;
  StreamSample fresh;
  sample(time_s, old);
  sample_knots(std::span<const StreamKnot>(chunk_knots_.data(), num_chunk_knots_), time_s, fresh);
  double s = 0.0;
  double ds = 0.0;
  double dds = 0.0;
  smoothstep((time_s - start_s) / window_s, s, ds, dds);
  ds /= window_s;
  dds /= window_s * window_s;
  for (int i = 0; i < kNumJoints; ++i) {
    const double dq = fresh.q_rad[i] - old.q_rad[i];
    const double dv = fresh.dq_rad_s[i] - old.dq_rad_s[i];
    const double da = fresh.ddq_rad_s2[i] - old.ddq_rad_s2[i];
    out.q_rad[i] = old.q_rad[i] + s * dq;
    out.dq_rad_s[i] = old.dq_rad_s[i] + s * dv + ds * dq;
    out.ddq_rad_s2[i] = old.ddq_rad_s2[i] + s * da + 2.0 * ds * dv + dds * dq;
  }
}

void ChunkStream::apply_chunk(const Chunk& chunk, double now_s) noexcept {
  chunks_taken_.fetch_add(1, std::memory_order_relaxed);
  num_placed_ = 0;  // single targets after this chunk start afresh
  const std::size_t n = chunk.size;
  const double end_s = chunk.times_s[n - 1];
  if (end_s <= now_s + config_.controller_period_s) {
    stale_chunks_.fetch_add(1, std::memory_order_relaxed);
    last_input_s_ = now_s;
    brake_at(now_s);
    return;
  }
  build_chunk_curve(chunk, now_s);
  // The join knot: the command's own state now.
  scratch_[0].time_s = now_s;
  sample(now_s, scratch_[0].state);
  std::size_t m = 1;
  std::size_t first = 0;  // the first chunk point after now
  while (chunk.times_s[first] <= now_s) {
    ++first;
  }
  join_end_s_ = std::max(join_end_s_, chunk.times_s[first]);  // the quintic to a later first point
  if (first > 0) {
    // The window ends at the first point at least blend_window_s ahead (or at the last point).
    std::size_t end = first;
    while (end + 1 < n && chunk.times_s[end] < now_s + config_.blend_window_s) {
      ++end;
    }
    const double window_s = chunk.times_s[end] - now_s;
    join_end_s_ = std::max(join_end_s_, chunk.times_s[end]);
    for (int quarter = 1; quarter <= 4; ++quarter) {
      const double sample_s = now_s + 0.25 * quarter * window_s;
      // Chunk points before this blend sample (all before the window's end), blended too.
      while (first < end && (quarter == 4 || chunk.times_s[first] < sample_s - 0.125 * window_s)) {
        scratch_[m].time_s = chunk.times_s[first];
        blend_state(chunk.times_s[first], now_s, window_s, scratch_[m].state);
        ++m;
        ++first;
      }
      if (quarter == 4) {
        break;
      }
      // A blend sample, unless a chunk point lies within an eighth of the window of it.
      if (!(first < end && chunk.times_s[first] < sample_s + 0.125 * window_s)) {
        scratch_[m].time_s = sample_s;
        blend_state(sample_s, now_s, window_s, scratch_[m].state);
        ++m;
      }
    }
    first = end;  // the window's end is the chunk's own point
  }
  for (std::size_t k = first; k < n; ++k) {
    scratch_[m++] = chunk_knots_[k];
  }
  commit(m, now_s);
}

void ChunkStream::update_interval(double stamp_s) noexcept {
  const double dt = stamp_s - last_stamp_s_;
  if (has_stamp_ && dt > 0.0 && dt < config_.timeout_s) {
    // The first intervals average evenly, later ones with weight 1/20 (a few senders' periods).
    ++intervals_;
    const double weight = std::max(1.0 / static_cast<double>(intervals_), 0.05);
    const double deviation = std::abs(dt - interval_s_);
    interval_s_ += weight * (dt - interval_s_);
    jitter_s_ += (intervals_ == 1 ? 0.0 : weight) * (deviation - jitter_s_);
  }
  has_stamp_ = true;
  last_stamp_s_ = stamp_s;
}

double ChunkStream::settled_delay_s() const noexcept {
  return interval_s_ + 3.0 * jitter_s_ + config_.controller_period_s;
}

void ChunkStream::adapt_delay(double stamp_s, double since_last_stamp_s, double now_s) noexcept {
  // The next target comes about an interval after this one: when this one's lead over the command is
  // less than that and a period, the command may pass it first. Aim at the settled lead again.
  const double lead_s = stamp_s + delay_s_ - now_s;
  if (lead_s < interval_s_ + config_.controller_period_s) {
    delay_goal_s_ = std::max(delay_goal_s_, delay_s_ + settled_delay_s() - lead_s);
  }
  // The delay grows at a warp rate (seconds of delay per second of stamps), below kMaxWarp, slowing
  // towards the goal: the command plays the sender's motion up to kMaxWarp slower while it catches
  // up. Targets at a constant rate lie on one smoothly warped curve; only a change of the rate bends
  // it, so the rate changes by at most kWarpRateChange per target, and not at all across a gap or a
  // burst of the sender (each such change costs ~rate change × speed / interval of acceleration: at
  // 0.6 rad/s and 8 ms, 0.4 rad/s² per 0.005).
  const double dt_s = std::max(since_last_stamp_s, 0.0);
  const double remaining_s = std::max(delay_goal_s_ - delay_s_, 0.0);
  const double previous_rate = warp_rate_;
  // Past its last knot the command goes on at the rate of that knot: a change now would open a gap
  // between it and the next knot.
  const bool on_curve = knots_[num_knots_ - 1].time_s > now_s;
  if (on_curve && dt_s > 0.5 * interval_s_ && dt_s < 1.5 * interval_s_) {
    const double wanted = std::min(kMaxWarp, std::sqrt(2.0 * kWarpRateChange / interval_s_ * remaining_s));
    warp_rate_ =
        std::max(0.0, std::clamp(wanted, warp_rate_ - kWarpRateChange, warp_rate_ + kWarpRateChange));
  }
  // Not cut at the goal (that would stop the warp at once): the rate runs down from there, and the
  // delay passes the goal by at most rate² × interval / (2 × kWarpRateChange).
  delay_s_ += 0.5 * (previous_rate + warp_rate_) * dt_s;
}

void ChunkStream::apply_target(const Target& target, double now_s) noexcept {
  targets_taken_.fetch_add(1, std::memory_order_relaxed);
  const bool restart = !has_stamp_ || !(target.stamp_s - last_stamp_s_ < config_.timeout_s) ||
                       now_s >= brake_start_s_ || num_placed_ == 0;
  const double since_last_stamp_s = has_stamp_ ? target.stamp_s - last_stamp_s_ : 0.0;
  update_interval(target.stamp_s);
  if (restart) {
    intervals_since_restart_ = 0;
  } else {
    ++intervals_since_restart_;
  }
  if (intervals_since_restart_ <= kSettlingIntervals) {
    delay_s_ = settled_delay_s();
    delay_goal_s_ = delay_s_;
    warp_rate_ = 0.0;
  } else {
    adapt_delay(target.stamp_s, since_last_stamp_s, now_s);
  }
  target_delay_s_.store(delay_s_, std::memory_order_relaxed);
  // Placed at stamp + delay: every target keeps its own time (moving one against its position would
  // bend the curve through it), late or not.
  double place_s = target.stamp_s + delay_s_;
  StreamSample current;
  sample(now_s, current);
  std::size_t keep = num_knots_;  // knots of the executing future that may stay
  if (restart) {
    placed_[0] = Placed{now_s, current.q_rad, current.dq_rad_s};
    num_placed_ = 1;
    // The first target of a stream is joined over at least half an interval.
    place_s = std::max(place_s, now_s + 0.5 * interval_s_);
  } else if (num_placed_ > 1 && place_s - placed_[num_placed_ - 1].time_s < 0.25 * interval_s_) {
    // A burst (two targets sent within a fraction of an interval): the newer replaces the older, whose
    // knot leaves the future if it is still ahead; derivatives through nearly coincident times would
    // turn the smallest disagreement into velocities of any size.
    const double dropped_s = placed_[num_placed_ - 1].time_s;
    --num_placed_;
    if (keep > 1 && knots_[keep - 1].time_s == dropped_s && dropped_s > now_s) {
      --keep;
    }
  }
  StreamKnot knot;
  knot.time_s = place_s;
  knot.state.q_rad = target.q_rad;
  knot_derivatives(target, knot);
  remember(knot);

  const double last_s = knots_[keep - 1].time_s;
  // A target that arrives after its place, or less than an interval before it: the command went on
  // along the curve; it joins this target's own continuation an interval from now (a shorter join
  // would turn the few µrad the command's constant-acceleration run-out is off by into jerk).
  const double join_lead_s = std::max(interval_s_, 2.0 * config_.controller_period_s);
  if (!restart && place_s < now_s + join_lead_s) {
    const double join_s = now_s + join_lead_s;
    StreamSample predicted;
    continue_at_constant_acceleration(knot.state, join_s - place_s, predicted);
    knot.time_s = join_s;
    knot.state = predicted;
    late_targets_.fetch_add(1, std::memory_order_relaxed);
  }
  const bool append = now_s < brake_start_s_ && last_s > now_s && last_s < knot.time_s;
  std::size_t m = 0;
  if (append) {
    // Keep the segment in force and what follows (the segments wholly in the past are dropped).
    std::size_t from = 0;
    while (from + 1 < keep && knots_[from + 1].time_s <= now_s) {
      ++from;
    }
    for (std::size_t k = from; k < keep && m + 1 < scratch_.size(); ++k) {
      scratch_[m++] = knots_[k];
    }
  } else {
    // Replace the future from the command's own state now.
    scratch_[0].time_s = now_s;
    scratch_[0].state = current;
    m = 1;
  }
  // A join: the first targets (their derivatives lean on the command's state at the restart, their
  // times on a delay still settling), a late target's, a replaced future's; with the run-out past
  // the knot, should the next target come later.
  if (restart || intervals_since_restart_ <= kSettlingIntervals + kHistory || !append ||
      knot.time_s != place_s) {
    join_end_s_ = std::max(join_end_s_, knot.time_s + config_.run_out_s);
  }
  scratch_[m++] = knot;
  commit(m, now_s);
}

void ChunkStream::knot_derivatives(const Target& target, StreamKnot& knot) const noexcept {
  // The cubic through the knot and the targets placed before it (fewer after a restart; the first
  // one is the command's own state then); with velocities given, the parabola through the last three.
  double x[kHistory + 1];
  double y[kHistory + 1];
  for (int k = 0; k < num_placed_; ++k) {
    x[k] = placed_[k].time_s;
  }
  x[num_placed_] = knot.time_s;
  for (int i = 0; i < kNumJoints; ++i) {
    double slope = 0.0;
    double curvature = 0.0;
    if (target.has_velocity) {
      const int first = std::max(0, num_placed_ - 2);
      for (int k = first; k < num_placed_; ++k) {
        y[k] = placed_[k].dq_rad_s[i];
      }
      y[num_placed_] = target.dq_rad_s[i];
      newton_derivatives(x + first, y + first, num_placed_ + 1 - first, curvature, slope);
      knot.state.dq_rad_s[i] = target.dq_rad_s[i];
      knot.state.ddq_rad_s2[i] = curvature;
      continue;
    }
    for (int k = 0; k < num_placed_; ++k) {
      y[k] = placed_[k].q_rad[i];
    }
    y[num_placed_] = target.q_rad[i];
    newton_derivatives(x, y, num_placed_ + 1, slope, curvature);
    knot.state.dq_rad_s[i] = slope;
    knot.state.ddq_rad_s2[i] = curvature;
  }
}

void ChunkStream::remember(const StreamKnot& knot) noexcept {
  // The last kHistory placed targets (the oldest is dropped) for the next target's derivatives.
  if (num_placed_ == kHistory) {
    for (int k = 1; k < kHistory; ++k) {
      placed_[k - 1] = placed_[k];
    }
    --num_placed_;
  }
  placed_[num_placed_++] = Placed{knot.time_s, knot.state.q_rad, knot.state.dq_rad_s};
}

}  // namespace jtac::loop
