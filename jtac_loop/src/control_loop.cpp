#include "jtac_loop/control_loop.hpp"
#include "jtac_rt/numeric.hpp"
#include "jtac_rt/realtime_thread.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

namespace jtac::loop {

namespace {

std::int64_t steady_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void sleep_until_ns(std::int64_t deadline_ns) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(deadline_ns / 1000000000LL);
  ts.tv_nsec = static_cast<long>(deadline_ns % 1000000000LL);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

namespace {

bool supported_rate(int rate_hz) noexcept {
  return rate_hz == 1000 || rate_hz == 500 || rate_hz == 250 || rate_hz == 200 || rate_hz == 125 ||
         rate_hz == 100;
}

std::unique_ptr<JtacLaw> make_jtac_law(JointTrajectoryAdmittanceController& controller) {
  if (controller.joint_names().size() != static_cast<std::size_t>(kNumJoints)) {
    throw std::invalid_argument("ControlLoop: the controller must be configured with 7 joints, has " +
                                std::to_string(controller.joint_names().size()));
  }
  return std::make_unique<JtacLaw>(controller);
}

}  // namespace

ControlLoop::ControlLoop(AsyncInterface& interface, JointTrajectoryAdmittanceController& controller,
                         const ControlLoopConfig& config)
    : interface_(interface),
      owned_law_(make_jtac_law(controller)),
      law_(*owned_law_),
      requested_law_(&law_),
      active_law_(&law_),
      config_(config) {
  init();
}

ControlLoop::ControlLoop(AsyncInterface& interface, ControlLaw& law, const ControlLoopConfig& config)
    : interface_(interface), law_(law), requested_law_(&law_), active_law_(&law_), config_(config) {
  init();
}

void ControlLoop::init() {
  const int rate = config_.update_rate_hz;
  if (!supported_rate(rate)) {
    throw std::invalid_argument("ControlLoop: update_rate_hz must be 1000, 500, 250, 200, 125 or 100, got " +
                                std::to_string(rate));
  }
  const double device_period_s = interface_.limiter().period_s();
  if (std::abs(device_period_s - 0.001) > 1e-9) {
    throw std::invalid_argument("ControlLoop: the device period must be 0.001 s, got " +
                                std::to_string(device_period_s));
  }
  packets_per_cycle_ = 1000 / rate;
  period_s_ = device_period_s * packets_per_cycle_;
  clock_ = std::make_unique<ClockMap>(period_s_);
  period_ns_ = 1000000LL * packets_per_cycle_;
  ring_ = std::make_unique<SpscRingBuffer<CycleRecord>>(config_.record_capacity);
}

ControlLoop::~ControlLoop() { stop(); }

bool ControlLoop::start() {
  if (running_.load(std::memory_order_acquire)) {
    return false;
  }
  stop_requested_.store(false, std::memory_order_release);
  running_.store(true, std::memory_order_release);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (...) {
    running_.store(false, std::memory_order_release);
    throw;
  }
  return true;
}

void ControlLoop::stop() {
  stop_requested_.store(true, std::memory_order_release);
  if (thread_.joinable()) {
    thread_.join();
  }
  running_.store(false, std::memory_order_release);
  if (activated_) {
    active_law_->deactivate(last_time_s_);
    activated_ = false;
  }
  // A stop ends every hand-over: the next start begins from the robot's echo at rest, whatever the
  // last law commanded (the arm may have moved on while nothing was commanded).
  if (handing_over_) {
    active_law_ = requested_law_.load(std::memory_order_acquire);
    handing_over_ = false;
    handing_over_flag_.store(false, std::memory_order_release);
  }
  have_handover_ = false;
}

DeviceStatus ControlLoop::step() noexcept {
  if (running_.load(std::memory_order_acquire)) {
    return DeviceStatus::kNotConfigured;
  }
  const DeviceStatus status = interface_.step_once();
  if (status != DeviceStatus::kOk) {
    return status;
  }
  if (packets_ % static_cast<std::uint64_t>(packets_per_cycle_) == 0) {
    cycle();
  }
  ++packets_;
  return status;
}

void ControlLoop::use_law(ControlLaw* law) noexcept {
  requested_law_.store(law != nullptr ? law : &law_, std::memory_order_release);
}

void ControlLoop::set_stop_accelerations(const JointArray& a_rad_s2) noexcept {
  stop_accelerations_in_.write_buffer() = a_rad_s2;
  stop_accelerations_in_.publish();
}

void ControlLoop::serve_switch(double time_s) noexcept {
  ControlLaw* requested = requested_law_.load(std::memory_order_acquire);
  if (!activated_) {
    active_law_ = requested;  // nothing runs yet: no hand-over
    return;
  }
  if (requested == active_law_) {
    // Asked back to the running law during its hand-over: it stays, braked (what it ran has ended).
    handing_over_ = false;
    handing_over_flag_.store(false, std::memory_order_release);
    return;
  }
  if (!handing_over_) {
    active_law_->begin_handover(time_s);
    handing_over_ = true;
    handing_over_flag_.store(true, std::memory_order_release);
    rest_since_s_ = -1.0;
  }
  // A law already at rest (an idle JTAC, a holding stream) hands over in this same cycle. The
  // robot's echo should have reached the last command too (the next law may start from either); a
  // robot that echoes it rounded, or never quite, is given kHandoverEchoWaitS at rest.
  bool echo_settled = true;
  for (std::size_t j = 0; j < state_.q_d_rad.size(); ++j) {
    echo_settled = echo_settled && std::abs(state_.q_d_rad[j] - out_.q_cmd_rad[j]) <= kHandoverEchoRad;
  }
  if (!active_law_->at_rest()) {
    rest_since_s_ = -1.0;
  } else if (rest_since_s_ < 0.0) {
    rest_since_s_ = time_s;
  }
  if (active_law_->at_rest() && (echo_settled || time_s - rest_since_s_ >= kHandoverEchoWaitS)) {
    active_law_->deactivate(last_time_s_);
    activated_ = false;
    active_law_ = requested;
    handing_over_ = false;
    handing_over_flag_.store(false, std::memory_order_release);
    handovers_.fetch_add(1, std::memory_order_acq_rel);
  }
}

bool ControlLoop::watch_peer(const AsyncInterface& peer, std::int64_t silence_ns) noexcept {
  if (num_peers_ >= kMaxPeers || &peer == &interface_ || silence_ns < 0) {
    return false;
  }
  peers_[num_peers_++] = Peer{&peer, silence_ns};
  return true;
}

bool ControlLoop::peer_stopped(const Peer& peer, std::int64_t now_ns) noexcept {
  const AsyncInterface& arm = *peer.interface;
  if (arm.exit_status() != DeviceStatus::kOk) {
    return true;
  }
  const std::int64_t last_ns = arm.last_packet_ns();
  return peer.silence_ns > 0 && arm.running() && last_ns > 0 && now_ns - last_ns > peer.silence_ns;
}

void ControlLoop::serve_peers(double time_s) noexcept {
  if (const std::uint64_t rearms = peer_watch_rearms_.load(std::memory_order_acquire);
      rearms != peer_watch_rearms_taken_) {
    peer_watch_rearms_taken_ = rearms;
    peer_braked_ = false;
  }
  bool fault = false;
  if (const std::uint64_t asked = peer_brake_requests_.load(std::memory_order_acquire);
      asked != peer_brake_requests_taken_) {
    peer_brake_requests_taken_ = asked;
    fault = true;  // asked for: brakes even after an earlier fault
    peer_braked_ = false;
  }
  const std::int64_t now_ns = num_peers_ > 0 ? ClockMap::host_now_ns() : 0;
  for (std::size_t i = 0; i < num_peers_ && !fault; ++i) {
    fault = peer_stopped(peers_[i], now_ns);
  }
  if (fault && !peer_braked_) {
    active_law_->brake_for_peer(time_s);
    peer_braked_ = true;
    peer_brakes_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ControlLoop::remember_command(double time_s, double period_s) noexcept {
  for (std::size_t j = 0; j < handover_.q_rad.size(); ++j) {
    const double dq = out_.dq_cmd_rad_s[j];
    handover_.ddq_rad_s2[j] =
        have_handover_ && period_s > 0.0 ? (dq - handover_.dq_rad_s[j]) / period_s : 0.0;
    handover_.dq_rad_s[j] = dq;
  }
  handover_.q_rad = out_.q_cmd_rad;
  handover_.time_s = time_s;
  have_handover_ = true;
}

void ControlLoop::configure_thread() const {
  jtac::rt::configure_realtime_thread("jtac::loop::ControlLoop", config_.fifo_priority, config_.cpu);
}

void ControlLoop::run() noexcept {
  configure_thread();
  while (!stop_requested_.load(std::memory_order_acquire)) {
    const CycleOutcome outcome = cycle();
    const std::int64_t now = steady_now_ns();
    std::int64_t deadline = now + kPollNs;
    if (outcome == CycleOutcome::kRan && state_.host_receive_ns > 0) {
      // Phase-locked to the robot: one controller period after the state just used arrived. A
      // cycle that ran late starts the next one at once rather than bursting to catch up.
      deadline = std::max(now, state_.host_receive_ns + period_ns_ + kPhaseOffsetNs);
    }
    sleep_until_ns(deadline);
  }
}

ControlLoop::CycleOutcome ControlLoop::cycle() noexcept {
  const std::int64_t read_ns = steady_now_ns();
  if (!interface_.latest_state(state_)) {
    timing_.cycles_without_state.fetch_add(1, std::memory_order_relaxed);
    return CycleOutcome::kNoState;
  }
  if (have_update_ && state_.tick == last_tick_) {
    timing_.stale_states.fetch_add(1, std::memory_order_relaxed);
    return CycleOutcome::kStale;
  }
  // Read-to-read interval between cycles that ran (polls for a state that had not arrived yet are
  // not cycles).
  double interval_us = 0.0;
  if (have_read_) {
    interval_us = static_cast<double>(read_ns - last_read_ns_) * 1e-3;
    timing_.last_interval_us.store(interval_us, std::memory_order_relaxed);
    store_max(timing_.max_interval_us, interval_us);
    if (interval_us > 1.5 * period_s_ * 1e6) {
      timing_.overruns.fetch_add(1, std::memory_order_relaxed);
    }
  }
  last_read_ns_ = read_ns;
  have_read_ = true;

  const double t = state_.time_s;
  const double dt = have_update_ ? t - last_time_s_ : period_s_;
  if (const JointArray* a = stop_accelerations_in_.take_new()) {
    stop_accelerations_ = *a;
    active_law_->set_stop_accelerations(stop_accelerations_);
  }
  clock_->update(t, state_.host_receive_ns > 0 ? state_.host_receive_ns : ClockMap::host_now_ns());
  // A law switch is served at a cycle boundary, by the hand-over contract (control_law.hpp).
  serve_switch(t);
  if (!activated_) {
    if (!have_handover_) {
      // A start: the robot's echoed command, at rest.
      handover_ = LawHandover{};
      handover_.q_rad = state_.q_d_rad;
      handover_.time_s = t;
    }
    active_law_->set_stop_accelerations(stop_accelerations_);
    active_law_->activate(state_, handover_);
    activated_ = true;
  }
  serve_peers(t);
  const UpdateStatus status = active_law_->update(state_, t, dt, out_);
  if (status != UpdateStatus::kOk) {
    timing_.update_not_ok.fetch_add(1, std::memory_order_relaxed);
  }
  if (!interface_.submit_command(out_.q_cmd_rad, out_.dq_cmd_rad_s, t, state_.tick, period_s_)) {
    timing_.commands_refused.fetch_add(1, std::memory_order_relaxed);
  }
  remember_command(t, dt);
  published_law_.store(active_law_, std::memory_order_release);
  have_update_ = true;
  last_tick_ = state_.tick;
  last_time_s_ = t;
  timing_.unserved_cycles.store(state_.ticks_without_new_command, std::memory_order_relaxed);
  const double duration_us = static_cast<double>(steady_now_ns() - read_ns) * 1e-3;
  timing_.last_cycle_duration_us.store(duration_us, std::memory_order_relaxed);
  store_max(timing_.max_cycle_duration_us, duration_us);
  timing_.cycles.fetch_add(1, std::memory_order_relaxed);

  // One record of the cycle, filled once: the snapshot is it plus the loop's counters, the
  // recording's row is it.
  LoopSnapshot& s = snapshots_.write_buffer();
  fill_cycle_record(state_, out_, status, duration_us, interval_us, s);
  s.valid = true;
  s.timing = timing();
  if (recording_.load(std::memory_order_acquire)) {
    ring_->push(static_cast<const CycleRecord&>(s));
  }
  snapshots_.publish();
  return CycleOutcome::kRan;
}

bool ControlLoop::snapshot(LoopSnapshot& out) noexcept {
  if (const LoopSnapshot* fresh = snapshots_.take_new()) {
    reader_snapshot_ = fresh;
  }
  if (reader_snapshot_ == nullptr) {
    return false;
  }
  out = *reader_snapshot_;
  return true;
}

std::size_t ControlLoop::drain(std::vector<CycleRecord>& rows) {
  std::size_t n = 0;
  CycleRecord row;
  while (ring_->pop(row)) {
    rows.push_back(row);
    ++n;
  }
  return n;
}

LoopTiming ControlLoop::timing() const noexcept { return read_loop_timing(timing_, interface_.counters()); }

}  // namespace jtac::loop
