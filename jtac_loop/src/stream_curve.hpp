// The curve arithmetic ChunkStream's parts share (chunk_stream.cpp, chunk_stream_chunks.cpp,
// chunk_stream_targets.cpp): slopes of interpolating polynomials, a constant-acceleration
// continuation and the blend's smoothstep. Private to jtac_loop; real-time safe (no allocation).
#pragma once

#include <algorithm>
#include <limits>

#include "jtac_loop/chunk_stream.hpp"

namespace jtac::loop::stream_curve {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Derivative at x of the parabola through (x0, y0), (x1, y1), (x2, y2).
inline double parabola_slope(double x0, double y0, double x1, double y1, double x2, double y2,
                             double x) noexcept {
  return y0 * (2.0 * x - x1 - x2) / ((x0 - x1) * (x0 - x2)) +
         y1 * (2.0 * x - x0 - x2) / ((x1 - x0) * (x1 - x2)) +
         y2 * (2.0 * x - x0 - x1) / ((x2 - x0) * (x2 - x1));
}

// First and second derivative, at the last abscissa x[n − 1], of the polynomial through the n ≤ 4
// points (x[k], y[k]) (Newton's divided differences; n = 1 gives 0 and 0, n = 2 a line).
inline void newton_derivatives(const double* x, const double* y, int n, double& slope,
                               double& curvature) noexcept {
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
inline void continue_at_constant_acceleration(const StreamSample& from, double dt_s,
                                              StreamSample& out) noexcept {
  for (int i = 0; i < kNumJoints; ++i) {
    out.q_rad[i] = from.q_rad[i] + from.dq_rad_s[i] * dt_s + 0.5 * from.ddq_rad_s2[i] * dt_s * dt_s;
    out.dq_rad_s[i] = from.dq_rad_s[i] + from.ddq_rad_s2[i] * dt_s;
    out.ddq_rad_s2[i] = from.ddq_rad_s2[i];
  }
}

// The quintic smoothstep s(u) = 10u³ − 15u⁴ + 6u⁵ and its first two derivatives in u.
inline void smoothstep(double u, double& s, double& ds, double& dds) noexcept {
  u = std::clamp(u, 0.0, 1.0);
  const double u2 = u * u;
  s = u2 * u * (10.0 - 15.0 * u + 6.0 * u2);
  ds = 30.0 * u2 * (1.0 - 2.0 * u + u2);
  dds = 60.0 * u * (1.0 - 3.0 * u + 2.0 * u2);
}

}  // namespace jtac::loop::stream_curve
