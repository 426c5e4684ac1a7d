#include "jtac_loop/stream_law.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace jtac::hw {

namespace {

ChunkStreamConfig stream_config(double controller_period_s) noexcept {
  ChunkStreamConfig config;
  config.controller_period_s = controller_period_s;
  return config;
}

std::int64_t steady_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

StreamLaw::StreamLaw(double controller_period_s) : StreamLaw(stream_config(controller_period_s)) {}

StreamLaw::StreamLaw(const ChunkStreamConfig& config) : stream_(config) {}

bool StreamLaw::set_target(const JointArray& q_rad, const JointArray& dq_rad_s, double stamp_s) noexcept {
  return stream_.submit_target(q_rad, &dq_rad_s, stamp_s);
}

bool StreamLaw::set_target(const JointArray& q_rad, double stamp_s) noexcept {
  return stream_.submit_target(q_rad, nullptr, stamp_s);
}

bool StreamLaw::set_chunk(std::span<const double> times_s, std::span<const JointArray> q_rad,
                          std::span<const JointArray> dq_rad_s) noexcept {
  return stream_.submit_chunk(times_s, q_rad, dq_rad_s);
}

double StreamLaw::controller_time_s() const noexcept {
  const std::int64_t offset = clock_offset_ns_.load(std::memory_order_relaxed);
  if (offset == INT64_MIN) {
    return std::nan("");
  }
  return static_cast<double>(steady_now_ns() - offset) * 1e-9;
}

void StreamLaw::activate(const DeviceState& state) noexcept {
  // Hold what the robot is being commanded (its echoed q_d; the measurement when that is not finite)
  // until the first input. Inputs sent before this first cycle are taken by it (a sender starts right
  // after switching to the law); those left at a deactivation were dropped there.
  const bool q_d_finite =
      std::all_of(state.q_d_rad.begin(), state.q_d_rad.end(), [](double x) { return std::isfinite(x); });
  q_cmd_ = q_d_finite ? state.q_d_rad : state.q_rad;
  stream_.reset(q_cmd_, state.time_s);
  active_ = true;
}

void StreamLaw::deactivate(double /*time_s*/) noexcept {
  // Inputs still in flight were meant for this session, not for the next activation.
  stream_.drop_inputs();
  active_ = false;
}

UpdateStatus StreamLaw::update(const DeviceState& state, double time_s, double /*period_s*/,
                               LawOutput& out) noexcept {
  if (!active_) {
    return UpdateStatus::kInactive;
  }
  // The clock mapping for senders. A cycle runs a little after its state arrived, late by the host's
  // wake-up jitter (tens of µs, now and then more): the offset follows slowly (1/100 per cycle) and
  // a single late cycle moves it by at most 1 µs.
  const std::int64_t measured_ns = steady_now_ns() - static_cast<std::int64_t>(std::llround(time_s * 1e9));
  const std::int64_t offset_ns = clock_offset_ns_.load(std::memory_order_relaxed);
  if (offset_ns == INT64_MIN || std::abs(measured_ns - offset_ns) > 50'000'000) {
    clock_offset_ns_.store(measured_ns, std::memory_order_relaxed);  // first cycle, or a new clock
  } else {
    const std::int64_t step = std::clamp<std::int64_t>((measured_ns - offset_ns) / 100, -1000, 1000);
    clock_offset_ns_.store(offset_ns + step, std::memory_order_relaxed);
  }

  stream_.update(time_s, sample_);
  q_cmd_ = sample_.q_rad;
  out.q_cmd_rad = sample_.q_rad;
  out.dq_cmd_rad_s = sample_.dq_rad_s;
  out.q_ref_rad = sample_.q_rad;
  out.dq_ref_rad_s = sample_.dq_rad_s;
  for (std::size_t j = 0; j < out.error_rad.size(); ++j) {
    out.error_rad[j] = q_cmd_[j] - state.q_rad[j];
  }
  out.joint_offset_rad = {};
  // No F/T pipeline: the device's reading, unprocessed, as tip 0's raw and filtered wrench.
  out.num_tips = state.has_wrench ? 1 : 0;
  out.wrench_raw_N_Nm = {};
  out.wrench_filtered_N_Nm = {};
  out.wrench_control_N_Nm = {};
  if (state.has_wrench) {
    out.wrench_raw_N_Nm[0] = state.wrench_sensor_N_Nm;
    out.wrench_filtered_N_Nm[0] = state.wrench_sensor_N_Nm;
  }
  switch (stream_.state()) {
    case StreamState::kFollowing:
      out.mode = ControllerMode::kExecuting;
      break;
    case StreamState::kBraking:
      out.mode = ControllerMode::kStopping;
      break;
    case StreamState::kHolding:
      out.mode = ControllerMode::kIdle;
      break;
  }
  out.goal_id = 0;
  out.time_scale = 1.0;
  out.trajectory_time_s = 0.0;
  return UpdateStatus::kOk;
}

}  // namespace jtac::hw
