#include "franka_hw/async_interface.hpp"
#include "jtac_rt/numeric.hpp"
#include "jtac_rt/realtime_thread.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace jtac::hw {

namespace {

using jtac::all_finite;
using jtac::store_max;

std::int64_t steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// How far the robot's echoed q_d may lie from our reference before we take it as the robot's
// history instead [rad]. franka-sim echoes our command within 0.04 µrad (never bit-equal); a
// substituted or lost waypoint differs from ours by its jerk term, j·T³ (4 µrad at 4000 rad/s³).
// 0.2 µrad is five times the echo's rounding, and a third difference of 200 rad/s³ (4 % of the
// FR3's jerk limit) at most is ever left uncorrected.
constexpr double kEchoToleranceRad = 2e-7;

// Whether the robot's echoed q_d lies away from `reference_rad` (a non-finite echo never does: it is
// no history to settle anything by).
bool echo_disagrees(const JointArray& echo_rad, const JointArray& reference_rad) noexcept {
  if (!all_finite(echo_rad)) {
    return false;
  }
  for (int i = 0; i < kNumJoints; ++i) {
    if (!(std::abs(echo_rad[i] - reference_rad[i]) <= kEchoToleranceRad)) {
      return true;
    }
  }
  return false;
}

void bump(std::atomic<std::uint64_t>& counter) noexcept { counter.fetch_add(1, std::memory_order_relaxed); }

RateMatcherConfig matcher_config(const AsyncInterfaceConfig& config, double period_s) noexcept {
  RateMatcherConfig result = config.rate_matching;
  result.period_s = period_s;
  return result;
}

}  // namespace

AsyncInterface::AsyncInterface(Device& device, const AsyncInterfaceConfig& config)
    : device_(device),
      config_(config),
      period_s_(device.period_s() > 0.0 ? device.period_s() : 0.001),
      matcher_(matcher_config(config, period_s_)),
      limiter_(config.limiter, period_s_, config.limit_margin, config.limits),
      limiter_before_(limiter_),
      period_ns_(static_cast<std::int64_t>(std::llround(period_s_ * 1e9))),
      trace_(std::make_unique<std::array<PacketRecord, kTraceCapacity>>()) {
  for (auto& slot : latency_ns_) {
    slot.store(-1, std::memory_order_relaxed);
  }
}

AsyncInterface::~AsyncInterface() { stop(); }

bool AsyncInterface::start() {
  if (thread_.joinable()) {
    return false;
  }
  stop_requested_.store(false, std::memory_order_release);
  exit_status_.store(DeviceStatus::kOk, std::memory_order_release);
  // A restart begins at the robot's echo, at rest: the reference of the last run (its velocity, and
  // the robot time that passed meanwhile, read as hundreds of skipped ticks) would be extrapolated
  // far off. The thread is not running, so its state may be touched here. A new run: the states of
  // the one before are no longer handed to the controller (see the top of async_interface.hpp).
  started_ = false;
  last_packet_ns_.store(0, std::memory_order_release);
  disturbing_ = false;  // a test disturbance ends with its run
  disturbance_armed_.store(false, std::memory_order_release);
  run_.fetch_add(1, std::memory_order_acq_rel);
  running_.store(true, std::memory_order_release);
  try {
    thread_ = std::thread([this] {
      configure_thread();
      run();
    });
  } catch (...) {
    running_.store(false, std::memory_order_release);
    throw;
  }
  return true;
}

bool AsyncInterface::inject_disturbance(const Disturbance& d) noexcept {
  const bool finite = std::isfinite(d.v_rad_s) && std::isfinite(d.a_rad_s2) && std::isfinite(d.j_rad_s3);
  if (d.joint < 0 || d.joint >= kNumJoints || !finite || disturbance_armed_.load(std::memory_order_acquire)) {
    return false;
  }
  disturbance_ = d;
  disturbance_armed_.store(true, std::memory_order_release);
  return true;
}

void AsyncInterface::apply_disturbance(PacketRecord& record) noexcept {
  const Disturbance& d = disturbance_;
  if (!disturbing_) {
    if (!disturbance_armed_.load(std::memory_order_acquire)) {
      return;
    }
    // Integrated packet by packet as the robot differentiates it (one robot cycle per packet): a
    // velocity step shows as v/T in the first difference's change, an acceleration step as a/T in
    // the second's, a jerk as j in the third, each in the packet after this one.
    disturbing_ = true;
    disturbance_offset_rad_ = 0.0;
    disturbance_velocity_rad_s_ = d.v_rad_s;
    disturbance_acceleration_rad_s2_ = d.a_rad_s2;
  } else {
    disturbance_acceleration_rad_s2_ += d.j_rad_s3 * period_s_;
    disturbance_velocity_rad_s_ += disturbance_acceleration_rad_s2_ * period_s_;
    disturbance_offset_rad_ += disturbance_velocity_rad_s_ * period_s_;
  }
  const auto j = static_cast<std::size_t>(d.joint);
  command_.q_d_rad[j] += disturbance_offset_rad_;
  command_.dq_d_rad_s[j] += disturbance_velocity_rad_s_;
  record.flags |= PacketRecord::kDisturbed;
}

bool AsyncInterface::begin_lockstep_run() noexcept {
  if (running_.load(std::memory_order_acquire) || thread_.joinable()) {
    return false;
  }
  disturbing_ = false;
  disturbance_armed_.store(false, std::memory_order_release);
  started_ = false;
  exit_status_.store(DeviceStatus::kOk, std::memory_order_release);
  run_.fetch_add(1, std::memory_order_acq_rel);
  (void)command_buffer_.take_new();  // a sample of the last run, not taken, is not this run's
  return true;
}

void AsyncInterface::stop() {
  stop_requested_.store(true, std::memory_order_release);
  if (thread_.joinable()) {
    thread_.join();
    // The run is over: its states are the arm as it moved then, and a sample not taken was computed
    // from one. The thread has joined, so this thread may take from the command buffer in its place.
    run_.fetch_add(1, std::memory_order_acq_rel);
    (void)command_buffer_.take_new();
  }
  running_.store(false, std::memory_order_release);
}

void AsyncInterface::configure_thread() const {
  jtac::rt::configure_realtime_thread("jtac::hw::AsyncInterface", config_.fifo_priority, config_.cpu);
}

void AsyncInterface::run() noexcept {
  while (!stop_requested_.load(std::memory_order_acquire)) {
    const DeviceStatus status = packet(/*real_time=*/true);
    if (status == DeviceStatus::kDeviceError || status == DeviceStatus::kNotConfigured ||
        status == DeviceStatus::kMotionFinished) {
      exit_status_.store(status, std::memory_order_release);
      break;
    }
  }
  running_.store(false, std::memory_order_release);
}

DeviceStatus AsyncInterface::step_once() noexcept {
  if (running_.load(std::memory_order_acquire)) {
    return DeviceStatus::kNotConfigured;
  }
  return packet(/*real_time=*/false);
}

DeviceStatus AsyncInterface::packet(bool real_time) noexcept {
  const DeviceStatus read_status = device_.read_once(state_);
  const std::int64_t read_ns = steady_ns();
  if (read_status == DeviceStatus::kWaiting) {
    return read_status;  // the motion has not started: nothing to answer yet
  }
  if (read_status != DeviceStatus::kOk) {
    bump(counters_.device_errors);
    return read_status;
  }

  // Publish the state (newest wins, never waits), stamped with its arrival on the host clock.
  state_.host_receive_ns = read_ns;
  state_buffer_.write_buffer().state = state_;
  state_buffer_.write_buffer().run = run_.load(std::memory_order_relaxed);
  state_buffer_.publish();

  const std::uint64_t packet_index = counters_.packets.load(std::memory_order_relaxed);
  PacketRecord& record = (*trace_)[packet_index % kTraceCapacity];
  record.packet = packet_index;
  record.tick = state_.tick;
  record.read_ns = read_ns;
  record.q_d_echo_rad = state_.q_d_rad;
  record.flags = 0;
  std::uint64_t step_periods = 1;
  std::uint64_t periods_elapsed = 1;  // robot periods since the previous packet's state
  if (!started_) {
    limiter_.reset(state_.q_d_rad);
    matcher_.reset();
    started_ = true;
  } else {
    const std::uint64_t delta = state_.tick - last_tick_;
    if (delta != 1) {
      bump(counters_.anomalous_ticks);
      record.flags |= PacketRecord::kAnomalousTick;
    }
    if (delta == 0) {
      // A duplicate state: nothing advances, the previous command goes out again.
      const DeviceStatus write_status = device_.write_once(command_);
      if (write_status != DeviceStatus::kOk) {
        bump(counters_.device_errors);
      }
      return write_status;
    }
    periods_elapsed = delta;
    const JointLimiter written = limiter_;  // the reference as our last command left it
    // The previous command went out on time and this reader came back after the next cycles had
    // passed (preempted between write and read): the states in between were published after the
    // write. Only the real-time thread's clock can tell; see the top of async_interface.hpp.
    const bool read_late = real_time && delta > 1 && !last_write_late_ &&
                           read_ns - last_write_ns_ >= static_cast<std::int64_t>(delta - 1) * period_ns_;
    if (read_late) {
      // Whatever the robot does with late commands, ours was applied and the robot substituted
      // the delta − 1 cycles it did not get a command for.
      bump(counters_.late_reads);
      record.flags |= PacketRecord::kLateRead;
      limiter_.extrapolate(delta - 1);
    } else if (delta > 1 || last_write_late_) {
      // Our previous command was late (see the top of async_interface.hpp): continue from what the
      // robot judges the next command against.
      bump(counters_.late_commands);
      record.flags |= PacketRecord::kLate;
      if (config_.late_commands == LateCommands::kDropped) {
        limiter_ = limiter_before_;
        limiter_.extrapolate(delta);
      } else {
        step_periods = delta;
      }
    }
    if (settle_by_echo(written, delta, record)) {
      step_periods = 1;  // the reference is the robot's at this tick: one period to the next
    }
  }
  last_tick_ = state_.tick;

  // The newest controller sample, if one arrived (never waits).
  if (const CommandSample* sample = command_buffer_.take_new()) {
    if (matcher_.on_sample(*sample, state_.q_d_rad, state_.tick)) {
      bump(counters_.commands_received);
      record.flags |= PacketRecord::kSample;
      if (had_sample_) {
        store_max(counters_.largest_command_gap, packet_index - last_sample_packet_);
      }
      had_sample_ = true;
      last_sample_packet_ = packet_index;
    }
  } else if (had_sample_) {
    store_max(counters_.largest_command_gap, packet_index - last_sample_packet_);
  }

  matcher_.next(target_, periods_elapsed);
  limiter_before_ = limiter_;
  bool limited = false;
  if (target_.hold) {
    bump(counters_.held_packets);
    record.flags |= PacketRecord::kHeld;
    limited = limiter_.brake(step_periods);
  } else {
    limited = limiter_.step(target_.q_rad, target_.dq_rad_s, step_periods);
  }
  if (limited) {
    bump(counters_.limiter_activations);
    record.flags |= PacketRecord::kLimited;
  }
  command_.q_d_rad = limiter_.q_rad();
  command_.dq_d_rad_s = limiter_.dq_rad_s();
  command_.motion_finished = false;
  apply_disturbance(record);

  const DeviceStatus write_status = device_.write_once(command_);
  const std::int64_t write_ns = steady_ns();
  record.write_ns = write_ns;
  record.step_periods = step_periods;
  record.q_cmd_rad = command_.q_d_rad;
  record.dq_cmd_rad_s = command_.dq_d_rad_s;
  // Only the real-time thread's clock means anything; lockstep stays deterministic.
  last_write_late_ = real_time && write_ns - read_ns > period_ns_;
  latency_ns_[packet_index % kLatencyWindow].store(write_ns - read_ns, std::memory_order_relaxed);
  store_max(counters_.max_latency_ns, write_ns - read_ns);
  const bool gap_restarted = peaks_reset_.exchange(false, std::memory_order_acq_rel);
  if (last_write_ns_ != 0 && !gap_restarted) {
    store_max(counters_.max_write_interval_ns, write_ns - last_write_ns_);
  }
  last_write_ns_ = write_ns;
  last_packet_ns_.store(write_ns, std::memory_order_release);
  counters_.packets.store(packet_index + 1, std::memory_order_relaxed);
  if (write_status != DeviceStatus::kOk) {
    bump(counters_.device_errors);
  }
  return write_status;
}

bool AsyncInterface::settle_by_echo(const JointLimiter& written, std::uint64_t delta,
                                    PacketRecord& record) noexcept {
  // Only for a robot that drops late commands (Franka's control): one that applies them on arrival
  // (franka-sim) shows substitutes for commands still on their way, stalls and catches up, and
  // differences a late command's successor over the whole gap; there the tick handling stands.
  if (config_.late_commands != LateCommands::kDropped || !echo_disagrees(state_.q_d_rad, limiter_.q_rad())) {
    return false;
  }
  // The two histories the robot can have for this tick: our last command applied and the cycles
  // after it substituted, or that command lost (dropped late, or lost on the wire) and every cycle
  // since the one before substituted. The echo (q_d: what the robot applied at this tick) names one.
  JointLimiter applied = written;
  applied.extrapolate(delta - 1);
  JointLimiter substituted = limiter_before_;
  substituted.extrapolate(delta);
  if (!echo_disagrees(state_.q_d_rad, applied.q_rad())) {
    limiter_ = applied;
  } else if (!echo_disagrees(state_.q_d_rad, substituted.q_rad())) {
    limiter_ = substituted;
  } else {
    // Neither: an echo that lags our commands by a cycle. The tick handling's continuation stands.
    return false;
  }
  bump(counters_.echo_resyncs);
  record.flags |= PacketRecord::kResynced;
  return true;
}

bool AsyncInterface::latest_state(DeviceState& state) noexcept {
  if (const RunState* newest = state_buffer_.take_new()) {
    controller_state_ = *newest;
    controller_has_state_ = true;
  }
  // Read after the take: a state of a run that started since is never mistaken for an old one.
  if (!controller_has_state_ || controller_state_.run != run_.load(std::memory_order_acquire)) {
    return false;  // none yet, or one of a run that has ended
  }
  state = controller_state_.state;
  return true;
}

bool AsyncInterface::submit_command(const JointArray& q_rad, const JointArray& dq_rad_s,
                                    double controller_time_s) noexcept {
  return submit_command(q_rad, dq_rad_s, controller_time_s, CommandSample::kUnknownTick, 0.0);
}

bool AsyncInterface::submit_command(const JointArray& q_rad, const JointArray& dq_rad_s,
                                    double controller_time_s, std::uint64_t source_tick,
                                    double nominal_interval_s) noexcept {
  CommandSample& sample = command_buffer_.write_buffer();
  sample.q_rad = q_rad;
  sample.dq_rad_s = dq_rad_s;
  sample.controller_time_s = controller_time_s;
  sample.source_tick = source_tick;
  sample.nominal_interval_s = nominal_interval_s;
  if (!is_finite(sample)) {
    bump(counters_.commands_refused);
    return false;
  }
  command_buffer_.publish();
  return true;
}

AsyncCounters AsyncInterface::counters() const noexcept { return counters_.load(); }

void AsyncInterface::reset_peaks() noexcept {
  counters_.largest_command_gap.store(0, std::memory_order_relaxed);
  counters_.max_write_interval_ns.store(0, std::memory_order_relaxed);
  counters_.max_latency_ns.store(0, std::memory_order_relaxed);
  for (auto& slot : latency_ns_) {
    slot.store(-1, std::memory_order_relaxed);
  }
  peaks_reset_.store(true, std::memory_order_release);
}

std::size_t AsyncInterface::packet_trace(std::array<PacketRecord, kTraceCapacity>& out) const noexcept {
  if (running()) {
    return 0;
  }
  const std::uint64_t packets = counters_.packets.load(std::memory_order_relaxed);
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(packets, kTraceCapacity));
  for (std::size_t k = 0; k < n; ++k) {
    out[k] = (*trace_)[(packets - n + k) % kTraceCapacity];
  }
  return n;
}

LatencyStats AsyncInterface::latency() const noexcept {
  std::array<std::int64_t, kLatencyWindow> window{};
  std::size_t n = 0;
  for (const auto& slot : latency_ns_) {
    const std::int64_t value = slot.load(std::memory_order_relaxed);
    if (value >= 0) {
      window[n++] = value;
    }
  }
  LatencyStats stats;
  stats.samples = n;
  if (n == 0) {
    return stats;
  }
  const auto begin = window.begin();
  const auto end = window.begin() + static_cast<std::ptrdiff_t>(n);
  std::sort(begin, end);
  const auto at = [&](double fraction) {
    const auto index = static_cast<std::size_t>(std::lround(fraction * static_cast<double>(n - 1)));
    return static_cast<double>(window[std::min(index, n - 1)]) * 1e-9;
  };
  stats.min_s = at(0.0);
  stats.median_s = at(0.5);
  stats.p99_s = at(0.99);
  stats.max_s = at(1.0);
  return stats;
}

}  // namespace jtac::hw
