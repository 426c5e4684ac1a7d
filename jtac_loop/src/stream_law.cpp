#include "jtac_loop/stream_law.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace jtac::loop {

namespace {

ChunkStreamConfig stream_config(double controller_period_s) noexcept {
  ChunkStreamConfig config;
  config.controller_period_s = controller_period_s;
  return config;
}

CatchUpConfig catch_up_config(double controller_period_s) noexcept {
  CatchUpConfig config;
  config.period_s = controller_period_s;
  return config;
}

}  // namespace

StreamLaw::StreamLaw(double controller_period_s) : StreamLaw(stream_config(controller_period_s)) {}

StreamLaw::StreamLaw(const ChunkStreamConfig& config)
    : stream_(config),
      catch_up_(catch_up_config(config.controller_period_s)),
      clock_(config.controller_period_s) {}

StreamLaw::StreamLaw(const ChunkStreamConfig& config, JtacLaw& jtac, const JtacGoal& admittance)
    : stream_(config),
      jtac_(&jtac),
      catch_up_(catch_up_config(config.controller_period_s)),
      clock_(config.controller_period_s) {
  if (std::string e = jtac.controller().prepare_admittance(admittance, admittance_, warning_); !e.empty()) {
    throw std::invalid_argument(e);
  }
}

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
  return clock_.smooth_controller_time_s(ClockMap::host_now_ns());
}

void StreamLaw::activate(const DeviceState& state, const LawHandover& from) noexcept {
  // Hold the handed-over command (the outgoing law's, at rest; at a start the robot's echoed q_d)
  // until the first input. Inputs sent before this first cycle are taken by it (a sender starts right
  // after switching to the law); those left at a deactivation were dropped there.
  q_cmd_ = handover_position(state, from);
  stream_.reset(q_cmd_, state.time_s);
  catch_up_.reset(q_cmd_, state.time_s);
  if (jtac_ != nullptr) {
    jtac_->activate_external(state, q_cmd_, admittance_);
  }
  stop_code_.store(ResultCode::kSuccessful, std::memory_order_release);
  brakes_taken_.store(brake_requests_.load(std::memory_order_acquire), std::memory_order_release);
  closing_.store(false, std::memory_order_release);
  active_ = true;
}

void StreamLaw::deactivate(double time_s) noexcept {
  // Inputs still in flight were meant for this session, not for the next activation.
  stream_.drop_inputs();
  if (jtac_ != nullptr) {
    jtac_->deactivate(time_s);
  }
  active_ = false;
}

void StreamLaw::begin_handover(double time_s) noexcept {
  closing_.store(true, std::memory_order_release);
  stream_.drop_inputs();
  stream_.brake(time_s);
}

void StreamLaw::brake_for_peer(double time_s) noexcept {
  stop_code_.store(ResultCode::kInvalidState, std::memory_order_release);
  stream_.drop_inputs();
  stream_.brake(time_s);
}

UpdateStatus StreamLaw::update(const DeviceState& state, double time_s, double period_s,
                               LawOutput& out) noexcept {
  if (!active_) {
    return UpdateStatus::kInactive;
  }
  // The clock senders stamp with: the state for controller time time_s arrived at host_receive_ns.
  clock_.update(time_s, state.host_receive_ns > 0 ? state.host_receive_ns : ClockMap::host_now_ns());

  // A brake asked for by the writer, or the hand-over: this cycle's command already brakes.
  if (const std::uint64_t asked = brake_requests_.load(std::memory_order_acquire);
      asked != brakes_taken_.load(std::memory_order_relaxed)) {
    brakes_taken_.store(asked, std::memory_order_release);
    stream_.drop_inputs();
    stream_.brake(time_s);
  }
  const bool stopped = stop_code() != ResultCode::kSuccessful;
  if (closing_.load(std::memory_order_relaxed) || stopped) {
    stream_.drop_inputs();  // a stop holds until the stream is closed
  }
  UpdateStatus status = UpdateStatus::kOk;
  if (jtac_ == nullptr) {
    follow(time_s);
    fill_plain(state, out);
  } else {
    follow(time_s);
    status = jtac_->update_external(state, time_s, period_s, sample_.q_rad, sample_.dq_rad_s,
                                    sample_.ddq_rad_s2, stream_.state() == StreamState::kFollowing, out);
    if (const ResultCode stop = jtac_->external_stop(); stop != ResultCode::kSuccessful && !stopped) {
      // This cycle's command is the sample at time_s with the frozen offset; the brake starts there.
      stream_.brake(time_s);
      stop_code_.store(stop, std::memory_order_release);
    }
    q_cmd_ = out.q_cmd_rad;
  }
  switch (stream_.state()) {
    case StreamState::kFollowing:
      out.mode = ControllerMode::kExecuting;
      break;
    case StreamState::kBraking:
      out.mode = ControllerMode::kStopping;
      break;
    case StreamState::kHolding:  // still moving onto the held point while catching up
      out.mode = catch_up_.catching_up() ? ControllerMode::kStopping : ControllerMode::kIdle;
      break;
  }
  out.goal_id = 0;
  out.time_scale = 1.0;
  out.trajectory_time_s = 0.0;
  return status;
}

void StreamLaw::follow(double time_s) noexcept {
  stream_.update(time_s, sample_);
  if (catch_up_.catching_up() && stream_.state() != StreamState::kFollowing) {
    // The stream brakes (or holds) while the command is still catching up: the command brakes from
    // its own state instead, so that a close or a brake ends at rest within the stop's time; its
    // acceleration eased to zero first, at the catch-up's jerk (from catching up at +a straight into
    // a brake at −a would be a step of 2a).
    if (catch_up_.ease(time_s, sample_)) {
      stream_.brake_from(sample_, time_s);
      catch_up_.rejoin();
    }
    return;
  }
  CatchUpBound bound = CatchUpBound::kInput;
  if (stream_.state() != StreamState::kFollowing) {  // a brake, or the rest it ended at
    bound = CatchUpBound::kBrake;
  } else if (stream_.joining(time_s)) {
    bound = CatchUpBound::kStop;
  }
  catch_up_.update(time_s, bound, stream_.stop_accelerations(), sample_);
}

void StreamLaw::fill_plain(const DeviceState& state, LawOutput& out) noexcept {
  q_cmd_ = sample_.q_rad;
  fill_plain_output(state, sample_.q_rad, sample_.dq_rad_s, out);
}

}  // namespace jtac::loop
