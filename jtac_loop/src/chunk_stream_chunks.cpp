// ChunkStream, a chunk: the C² spline through its points, the blend from the executing future
// onto it and temporal ensembling (chunk_stream.hpp says how).
#include "jtac_loop/chunk_stream.hpp"

#include <algorithm>
#include <cmath>
#include "stream_curve.hpp"

namespace jtac::loop {

using stream_curve::kInf;
using stream_curve::parabola_slope;
using stream_curve::smoothstep;

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

}  // namespace jtac::loop
