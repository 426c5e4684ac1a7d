#include "jtac_loop/stream_law.hpp"

#include <algorithm>
#include <cmath>

namespace jtac::hw {

namespace {

RateMatcherConfig stream_config(double controller_period_s) noexcept {
  RateMatcherConfig config;
  config.period_s = controller_period_s;
  // A stream's first interval is unknown: assume one of a 125 Hz source, in controller periods.
  config.initial_interval_s = 0.008 > controller_period_s ? 0.008 : controller_period_s;
  // Streams come from non-real-time senders whose intervals jitter by milliseconds; a stream that
  // stops for four intervals is over.
  config.hold_after_intervals = 4.0;
  config.max_ramp_periods = 0.1 / controller_period_s;  // at most 100 ms of delay
  return config;
}

}  // namespace

StreamLaw::StreamLaw(double controller_period_s) : matcher_(stream_config(controller_period_s)) {}

bool StreamLaw::set_target(const JointArray& q_rad, const JointArray& dq_rad_s, double stamp_s) noexcept {
  CommandSample& sample = mailbox_.write_buffer();
  sample.q_rad = q_rad;
  sample.dq_rad_s = dq_rad_s;
  sample.controller_time_s = stamp_s;
  if (!is_finite(sample)) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  mailbox_.publish();
  return true;
}

void StreamLaw::activate(const DeviceState& state) noexcept {
  // Hold what the robot is being commanded (its echoed q_d; the measurement when that is not finite)
  // until the first target; a target left in the mailbox from before activation is dropped (it was
  // meant for an arm somewhere else).
  const bool q_d_finite =
      std::all_of(state.q_d_rad.begin(), state.q_d_rad.end(), [](double x) { return std::isfinite(x); });
  q_cmd_ = q_d_finite ? state.q_d_rad : state.q_rad;
  matcher_.reset();
  while (mailbox_.take_new() != nullptr) {
  }
  cycle_ = 0;
  active_ = true;
  holding_.store(true, std::memory_order_relaxed);
}

void StreamLaw::deactivate(double /*time_s*/) noexcept { active_ = false; }

void StreamLaw::advance(std::uint64_t periods) noexcept {
  matcher_.next(target_, periods);
  if (!target_.hold) {
    q_cmd_ = target_.q_rad;
  }
}

UpdateStatus StreamLaw::update(const DeviceState& state, double /*time_s*/, double period_s,
                               LawOutput& out) noexcept {
  if (!active_) {
    return UpdateStatus::kInactive;
  }
  // The reconstruction runs on the robot's time: a cycle that comes after a lost (or late-read)
  // state advances it by the controller periods that passed (period_s is the robot-time step since
  // the last update), not by one; else the stream fell a period behind the robot's clock at every
  // lost state and the hardware thread saw the motion stall for a tick.
  const double ratio = period_s / matcher_.config().period_s;
  const std::uint64_t periods = std::isfinite(ratio) && ratio > 1.5
                                    ? static_cast<std::uint64_t>(std::llround(std::min(ratio, 1000.0)))
                                    : 1;
  cycle_ += periods;
  if (periods > 1) {
    // The periods without a cycle first, as if each had had one: the command at the period before
    // this one is then what it is without a lost state, and so is a new sample's anchor.
    advance(periods - 1);
  }
  if (const CommandSample* sample = mailbox_.take_new()) {
    if (matcher_.on_sample(*sample, q_cmd_, cycle_)) {
      taken_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  advance(1);
  out.dq_cmd_rad_s = target_.hold ? JointArray{} : target_.dq_rad_s;
  holding_.store(target_.hold, std::memory_order_relaxed);
  out.q_cmd_rad = q_cmd_;
  out.q_ref_rad = q_cmd_;
  out.dq_ref_rad_s = out.dq_cmd_rad_s;
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
  out.mode = target_.hold ? ControllerMode::kIdle : ControllerMode::kExecuting;
  out.goal_id = 0;
  out.time_scale = 1.0;
  out.trajectory_time_s = 0.0;
  return UpdateStatus::kOk;
}

}  // namespace jtac::hw
