// The simulated Franka Hand's controller. Design and semantics: franka_hw/simulated_hand.hpp.
#include "franka_hw/simulated_hand.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace jtac::hw {
namespace {

static_assert(std::is_trivially_copyable_v<HandState>, "the seqlock copies HandState as bytes");

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

[[noreturn]] void refuse(const char* field, const char* rule, double value) {
  throw std::invalid_argument(std::string("hand command: ") + field + " must be " + rule + ", got " +
                              number(value));
}

void check_width(double width_m) {
  if (!(std::isfinite(width_m) && width_m >= 0.0 && width_m <= kHandMaxWidthM)) {
    refuse("width_m", "in [0, 0.08] m", width_m);
  }
}

void check_speed(double speed_m_s) {
  if (!(std::isfinite(speed_m_s) && speed_m_s > 0.0 && speed_m_s <= kHandMaxSpeedMS)) {
    refuse("speed_m_s", "in (0, 0.1] m/s", speed_m_s);
  }
}

}  // namespace

void validate_hand_command(const HandCommand& command) {
  switch (command.kind) {
    case HandCommandKind::kHoming:
    case HandCommandKind::kStop:
      return;
    case HandCommandKind::kMove:
      check_width(command.width_m);
      check_speed(command.speed_m_s);
      return;
    case HandCommandKind::kGrasp:
      check_width(command.width_m);
      check_speed(command.speed_m_s);
      if (!(std::isfinite(command.force_N) && command.force_N > 0.0 && command.force_N <= kHandMaxForceN)) {
        refuse("force_N", "in (0, 140] N", command.force_N);
      }
      if (!(std::isfinite(command.epsilon_inner_m) && command.epsilon_inner_m >= 0.0)) {
        refuse("epsilon_inner_m", "finite and >= 0", command.epsilon_inner_m);
      }
      if (!(std::isfinite(command.epsilon_outer_m) && command.epsilon_outer_m >= 0.0)) {
        refuse("epsilon_outer_m", "finite and >= 0", command.epsilon_outer_m);
      }
      return;
  }
  refuse("kind", "homing, move, grasp or stop", static_cast<double>(command.kind));
}

std::uint64_t SimulatedHand::command(const HandCommand& command) {
  validate_hand_command(command);
  std::lock_guard<std::mutex> lock(command_mutex_);
  Pending& pending = mailbox_.write_buffer();
  pending.command = command;
  pending.id = ++last_id_;
  mailbox_.publish();
  return pending.id;
}

void SimulatedHand::reset(double width_m) noexcept {
  {
    std::lock_guard<std::mutex> lock(command_mutex_);
    (void)mailbox_.take_new();  // a command sent before the reset never runs
  }
  active_ = HandCommand{};
  active_id_ = 0;
  status_ = HandStatus::kIdle;
  phase_ = Phase::kHold;
  reference_m_ = width_m;
  reference_velocity_m_s_ = 0.0;
  target_m_ = width_m;
  force_limit_N_ = kHandMoveForceN;
  force_N_ = 0.0;
  settled_ticks_ = 0;
  grasped_ = false;
  HandState state;
  state.width_m = width_m;
  publish(state);
}

void SimulatedHand::start(const Pending& pending, double width_m) noexcept {
  active_ = pending.command;
  active_id_ = pending.id;
  status_ = HandStatus::kRunning;
  phase_ = Phase::kRamp;
  reference_m_ = width_m;
  reference_velocity_m_s_ = 0.0;
  force_limit_N_ = kHandMoveForceN;
  settled_ticks_ = 0;
  grasped_ = false;
  switch (active_.kind) {
    case HandCommandKind::kHoming:
      active_.width_m = kHandMaxWidthM;
      active_.speed_m_s = kHandMaxSpeedMS;
      target_m_ = kHandMaxWidthM;
      break;
    case HandCommandKind::kMove:
      target_m_ = active_.width_m;
      break;
    case HandCommandKind::kGrasp:
      target_m_ = 0.0;  // close until something stops the fingers
      force_limit_N_ = active_.force_N;
      break;
    case HandCommandKind::kStop:
      phase_ = Phase::kHold;
      target_m_ = width_m;
      status_ = HandStatus::kSuccess;
      break;
  }
}

void SimulatedHand::advance_reference(double period_s) noexcept {
  if (phase_ != Phase::kRamp) {
    reference_velocity_m_s_ = 0.0;
    return;
  }
  const double step_m = active_.speed_m_s * period_s;
  const double remaining_m = target_m_ - reference_m_;
  if (std::abs(remaining_m) <= step_m) {
    reference_m_ = target_m_;
    reference_velocity_m_s_ = 0.0;
  } else {
    const double direction = remaining_m > 0.0 ? 1.0 : -1.0;
    reference_m_ += direction * step_m;
    reference_velocity_m_s_ = direction * active_.speed_m_s;
  }
}

double SimulatedHand::servo(double width_m, double width_velocity_m_s, double force_limit_N) const noexcept {
  const double force_N =
      kStiffnessNM * (reference_m_ - width_m) + kDampingNsM * (reference_velocity_m_s_ - width_velocity_m_s);
  return std::clamp(force_N, -force_limit_N, force_limit_N);
}

bool SimulatedHand::in_band(double width_m) const noexcept {
  return width_m > active_.width_m - active_.epsilon_inner_m &&
         width_m < active_.width_m + active_.epsilon_outer_m;
}

// Ends the running command once the fingers have settled at the ramp's end or stalled behind it.
void SimulatedHand::judge(double width_m, double width_velocity_m_s) noexcept {
  settled_ticks_ = std::abs(width_velocity_m_s) < kHandSettleSpeedMS ? settled_ticks_ + 1 : 0;
  if (status_ != HandStatus::kRunning || phase_ != Phase::kRamp || settled_ticks_ < kHandSettleTicks) {
    return;
  }
  const bool ramp_done = reference_m_ == target_m_;
  const bool stalled = std::abs(reference_m_ - width_m) > kHandStallErrorM;
  if (!ramp_done && !stalled) {
    return;
  }
  if (active_.kind == HandCommandKind::kGrasp) {
    phase_ = Phase::kSqueeze;
    grasped_ = in_band(width_m);
    status_ = grasped_ ? HandStatus::kSuccess : HandStatus::kUnsuccessful;
    return;
  }
  phase_ = Phase::kHold;
  if (ramp_done && std::abs(width_m - target_m_) <= kHandWidthToleranceM) {
    status_ = HandStatus::kSuccess;
    return;
  }
  status_ = HandStatus::kBlocked;  // hold where the fingers stopped, without pressing on
  reference_m_ = width_m;
  target_m_ = width_m;
}

double SimulatedHand::update(double width_m, double width_velocity_m_s, double period_s,
                             std::uint64_t tick) noexcept {
  if (const Pending* pending = mailbox_.take_new(); pending != nullptr) {
    start(*pending, width_m);
  }
  judge(width_m, width_velocity_m_s);
  advance_reference(period_s);
  force_N_ =
      phase_ == Phase::kSqueeze ? -active_.force_N : servo(width_m, width_velocity_m_s, force_limit_N_);

  HandState state;
  state.width_m = width_m;
  state.width_velocity_m_s = width_velocity_m_s;
  state.force_N = -force_N_;
  state.is_grasped = grasped_ && in_band(width_m);
  state.moving = std::abs(width_velocity_m_s) >= kHandSettleSpeedMS;
  state.command_id = active_id_;
  state.command_kind = active_.kind;
  state.status = status_;
  state.tick = tick;
  publish(state);
  return force_N_;
}

void SimulatedHand::publish(const HandState& state) noexcept {
  std::array<std::uint64_t, kStateWords> words{};
  std::memcpy(words.data(), &state, sizeof(HandState));
  const std::uint64_t sequence = sequence_.load(std::memory_order_relaxed);
  sequence_.store(sequence + 1, std::memory_order_relaxed);  // odd: being written
  std::atomic_thread_fence(std::memory_order_release);
  for (std::size_t i = 0; i < kStateWords; ++i) {
    state_words_[i].store(words[i], std::memory_order_relaxed);
  }
  sequence_.store(sequence + 2, std::memory_order_release);
}

HandState SimulatedHand::state() const noexcept {
  std::array<std::uint64_t, kStateWords> words{};
  for (;;) {
    const std::uint64_t before = sequence_.load(std::memory_order_acquire);
    if ((before & 1U) != 0U) {
      continue;  // the device thread is writing: a few stores, retry
    }
    for (std::size_t i = 0; i < kStateWords; ++i) {
      words[i] = state_words_[i].load(std::memory_order_relaxed);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sequence_.load(std::memory_order_relaxed) == before) {
      break;
    }
  }
  HandState state;
  std::memcpy(static_cast<void*>(&state), words.data(), sizeof(HandState));
  return state;
}

}  // namespace jtac::hw
