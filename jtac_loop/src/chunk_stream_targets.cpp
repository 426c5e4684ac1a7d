// ChunkStream, single targets: the sender's interval and jitter, the delay that places a target on
// the controller clock and its smooth time warp, and each target's knot (chunk_stream.hpp says how).
#include "jtac_loop/chunk_stream.hpp"

#include <algorithm>
#include <cmath>
#include "stream_curve.hpp"

namespace jtac::loop {

using stream_curve::continue_at_constant_acceleration;
using stream_curve::newton_derivatives;

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
