// What the StreamLaw and CatchUp tests share: a law activated at home at rest, and the comparison of
// a run that lost states with one that did not.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "franka_hw/device.hpp"
#include "jtac_loop/control_law.hpp"

namespace jtac::loop::test {

/// Activates `law` on a robot at home at rest (its echo q_d at home), filling `state` with it.
inline void activate_at_home(ControlLaw& law, hw::DeviceState& state) {
  state.q_rad = hw::kFr3HomeRad;
  state.q_d_rad = hw::kFr3HomeRad;
  LawHandover from;
  from.q_rad = hw::kFr3HomeRad;
  law.activate(state, from);
}

/// The largest difference [rad] between the commands of two runs, (tick, q_cmd) in tick order, at
/// the ticks of `lossy` (a subset of `steady`'s).
template <typename Tick>
double worst_difference_at_common_ticks(const std::vector<std::pair<Tick, hw::JointArray>>& steady,
                                        const std::vector<std::pair<Tick, hw::JointArray>>& lossy) {
  double worst_rad = 0.0;
  std::size_t k = 0;
  for (const auto& [tick, q] : lossy) {
    while (steady[k].first < tick) {
      ++k;
    }
    for (std::size_t i = 0; i < q.size(); ++i) {
      worst_rad = std::max(worst_rad, std::abs(q[i] - steady[k].second[i]));
    }
  }
  return worst_rad;
}

}  // namespace jtac::loop::test
