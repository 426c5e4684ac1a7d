// The hardware thread's limiter, chosen at configure: jtac's MotionLimiter (rate_matching.hpp, the
// default) or the RuckigLimiter (ruckig_limiter.hpp). One value type with their common operations,
// so that AsyncInterface keeps, copies and rewinds it the same way whichever it is.
#pragma once

#include <cstdint>
#include <utility>
#include <variant>

#include "franka_hw/rate_matching.hpp"
#include "franka_hw/ruckig_limiter.hpp"

namespace jtac::hw {

/// Which limiter shapes the commands (AsyncInterfaceConfig::limiter).
enum class LimiterKind : std::uint8_t {
  kMotionLimiter,  ///< jtac's per-step limiter with the FR3 envelope's braking condition (default)
  kRuckig,         ///< Ruckig's time-optimal trajectory to the target, replanned every step
};

/// MotionLimiter or RuckigLimiter behind one interface (see either for the semantics). Copies are
/// real-time safe (a RuckigLimiter's copy shares its solver's scratch).
class JointLimiter {
  using Impl = std::variant<MotionLimiter, RuckigLimiter>;

  // std::visit without its bad_variant_access path: the variant is never valueless (every copy and
  // assignment of the alternatives is noexcept).
  template <typename F>
  decltype(auto) visit(F&& f) noexcept {
    if (auto* motion = std::get_if<MotionLimiter>(&impl_)) {
      return std::forward<F>(f)(*motion);
    }
    return std::forward<F>(f)(*std::get_if<RuckigLimiter>(&impl_));
  }
  template <typename F>
  decltype(auto) visit(F&& f) const noexcept {
    if (const auto* motion = std::get_if<MotionLimiter>(&impl_)) {
      return std::forward<F>(f)(*motion);
    }
    return std::forward<F>(f)(*std::get_if<RuckigLimiter>(&impl_));
  }

 public:
  /// Not real-time safe (RuckigLimiter allocates its solver).
  JointLimiter(LimiterKind kind, double period_s, double margin, const JointLimits& limits)
      : impl_(make(kind, period_s, margin, limits)) {}

  LimiterKind kind() const noexcept {
    return impl_.index() == 0 ? LimiterKind::kMotionLimiter : LimiterKind::kRuckig;
  }

  /// Real-time safe, as the implementations'.
  void reset(const JointArray& q_rad) noexcept {
    visit([&](auto& l) { l.reset(q_rad); });
  }
  void extrapolate(std::uint64_t periods) noexcept {
    visit([&](auto& l) { l.extrapolate(periods); });
  }
  bool step(const JointArray& q_target_rad, const JointArray& dq_target_rad_s,
            std::uint64_t periods = 1) noexcept {
    return visit([&](auto& l) { return l.step(q_target_rad, dq_target_rad_s, periods); });
  }
  bool brake(std::uint64_t periods = 1) noexcept {
    return visit([&](auto& l) { return l.brake(periods); });
  }

  const JointArray& q_rad() const noexcept {
    return visit([](const auto& l) -> const JointArray& { return l.q_rad(); });
  }
  const JointArray& dq_rad_s() const noexcept {
    return visit([](const auto& l) -> const JointArray& { return l.dq_rad_s(); });
  }
  const JointArray& ddq_rad_s2() const noexcept {
    return visit([](const auto& l) -> const JointArray& { return l.ddq_rad_s2(); });
  }
  const JointLimits& limits() const noexcept {
    return visit([](const auto& l) -> const JointLimits& { return l.limits(); });
  }
  double period_s() const noexcept {
    return visit([](const auto& l) { return l.period_s(); });
  }
  double margin() const noexcept {
    return visit([](const auto& l) { return l.margin(); });
  }

 private:
  static Impl make(LimiterKind kind, double period_s, double margin, const JointLimits& limits) {
    if (kind == LimiterKind::kRuckig) {
      return Impl(std::in_place_type<RuckigLimiter>, period_s, margin, limits);
    }
    return Impl(std::in_place_type<MotionLimiter>, period_s, margin, limits);
  }

  Impl impl_;
};

}  // namespace jtac::hw
