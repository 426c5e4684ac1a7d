// The hardware thread's two limiters on the same inputs, in one run: jtac's MotionLimiter (the
// baseline) and the RuckigLimiter (Ruckig's time-optimal trajectory to the target, replanned every
// step), both behind JointLimiter as AsyncInterface holds them, FR3 limits × 0.8.
//
// Scenarios (every one deterministic; the same targets for both):
//   staircase   a 125 Hz controller sampling a smooth motion (joints 1 and 4: 0.3·(1 − cos 2πt/4 s)),
//               its samples taken at their arrival (no source tick: a Python loop), rate matched
//   law125      the same at 125 Hz with the source tick and nominal period (ControlLoop's samples)
//   jittered    samples 4..12 ms apart (seeded), stamped with their sampling instant
//   step        a 1 kHz command that jumps by ±50 mrad on every joint and stays there
//   brake       every joint at full speed (0.8 × dq_max), then brake() until rest
//   range end   every joint asked out at full speed toward a target 0.3 rad beyond each end of its
//               range, in turn (the FR3's position-based velocity envelope must stop it)
//   late        a target jumping ±50 mrad every 40 ms (the limiter at full jerk much of the time),
//               5 % of the steps spanning 2 or 3 periods (late commands on a robot that applies them)
//   lossy       AsyncInterface on a model robot losing 2 % of the states and of the commands
//               (late_commands = dropped, echo check: extrapolate() and the rewinds), seeds 1..3
// Figures, from the robot's side (backward differences of the commanded positions over each step's
// periods, max over joints): peak and p99 |acceleration| and |jerk|; tracking lag (the time shift of
// the source that fits the command best) and the largest residual after it; overshoot past the
// target; time to rest; packets a limit shaped (activations); the envelope's excess; cost per call
// (median / p99.9, timed interleaved call by call). Instructions per call and allocations are
// machine-independent and live in the tests (ctest -L callgrind, -L malloc).
//
// Usage: bench_limiters [repeats]   (default 5: the whole set that many times; every figure is the
// last pass's, the same in every pass but the costs; the "all scenarios" costs pool every pass)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "franka_hw/async_interface.hpp"
#include "franka_hw/joint_limiter.hpp"
#include "franka_hw/rate_matching.hpp"
#include "jtac_test_support.hpp"
#include "model_robots.hpp"

namespace {

using jtac::hw::AsyncInterface;
using jtac::hw::AsyncInterfaceConfig;
using jtac::hw::CommandSample;
using jtac::hw::DeviceStatus;
using jtac::hw::JointArray;
using jtac::hw::JointLimiter;
using jtac::hw::kFr3HomeRad;
using jtac::hw::kFr3Limits;
using jtac::hw::kNumJoints;
using jtac::hw::LimiterKind;
using jtac::hw::RateMatcher;
using jtac::hw::RateTarget;
using Clock = std::chrono::steady_clock;

constexpr double kPi = 3.14159265358979323846;
constexpr double kT = 0.001;
constexpr double kMargin = 0.8;
constexpr int kLanes = 2;
constexpr LimiterKind kKinds[kLanes] = {LimiterKind::kMotionLimiter, LimiterKind::kRuckig};
constexpr const char* kNames[kLanes] = {"MotionLimiter", "Ruckig"};

// The smooth motion of test_rate_matching.cpp: joints 1 and 4, peak 0.471 rad/s, 0.74 rad/s².
void motion(double t, JointArray& q, JointArray& dq) {
  q = kFr3HomeRad;
  dq.fill(0.0);
  for (int i : {0, 3}) {
    q[i] += 0.3 * (1.0 - std::cos(2.0 * kPi * t / 4.0));
    dq[i] = 0.3 * 2.0 * kPi / 4.0 * std::sin(2.0 * kPi * t / 4.0);
  }
}

// The FR3's envelope as the robot computes it (no margin): the velocity bound toward each end.
double robot_upper_rad_s(int i, double q) {
  const auto& l = kFr3Limits;
  const double root = std::sqrt(std::max(0.0, 2.0 * l.deceleration_limit_rad_s2[i] * (l.q_max_rad[i] - q)));
  return std::min(l.dq_max_rad_s[i], std::max(0.0, root - l.velocity_offset_rad_s[i])) -
         jtac::hw::kJointVelocityLimitsToleranceRadS;
}
double robot_lower_rad_s(int i, double q) {
  const auto& l = kFr3Limits;
  const double root = std::sqrt(std::max(0.0, 2.0 * l.deceleration_limit_rad_s2[i] * (q - l.q_min_rad[i])));
  return std::max(-l.dq_max_rad_s[i], std::min(0.0, l.velocity_offset_rad_s[i] - root)) +
         jtac::hw::kJointVelocityLimitsToleranceRadS;
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) {
    return 0.0;
  }
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1))];
}

// One design's run of one scenario: the robot's view of the commands and what shaped them.
struct Lane {
  JointLimiter limiter;
  RateMatcher matcher;
  JointArray q{}, v{}, a{};                // the robot's backward differences of the commands
  std::vector<double> acceleration, jerk;  // per packet, max over joints
  std::vector<JointArray> q_cmd;           // per packet
  std::vector<double> cost_ns;
  std::uint64_t activations = 0;
  double envelope_excess_margin = -1e9;  // max of v − m·v_upper(q), m·v_lower(q) − v [rad/s]
  double envelope_excess_robot = -1e9;   // the same against the robot's own envelope

  explicit Lane(LimiterKind kind) : limiter(kind, kT, kMargin, kFr3Limits) {}

  void start(const JointArray& q0) {
    limiter.reset(q0);
    matcher.reset();
    q = q0;
    v.fill(0.0);
    a.fill(0.0);
  }

  // One call of the limiter, timed; then the robot's view of its command over `periods`.
  template <typename Call>
  void packet(Call&& call, std::uint64_t periods = 1) {
    const auto t0 = Clock::now();
    const bool limited = call(limiter);
    const auto t1 = Clock::now();
    cost_ns.push_back(
        static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
    activations += limited ? 1 : 0;
    const double dt = static_cast<double>(periods) * kT;
    const JointArray& q_next = limiter.q_rad();
    double worst_a = 0.0, worst_j = 0.0;
    for (int i = 0; i < kNumJoints; ++i) {
      const double v_next = (q_next[i] - q[i]) / dt;
      const double a_next = (v_next - v[i]) / dt;
      worst_a = std::max(worst_a, std::abs(a_next));
      worst_j = std::max(worst_j, std::abs(a_next - a[i]) / dt);
      q[i] = q_next[i];
      v[i] = v_next;
      a[i] = a_next;
      envelope_excess_margin =
          std::max({envelope_excess_margin, v_next - kMargin * robot_upper_rad_s(i, q[i]),
                    kMargin * robot_lower_rad_s(i, q[i]) - v_next});
      envelope_excess_robot = std::max(
          {envelope_excess_robot, v_next - robot_upper_rad_s(i, q[i]), robot_lower_rad_s(i, q[i]) - v_next});
    }
    acceleration.push_back(worst_a);
    jerk.push_back(worst_j);
    q_cmd.push_back(q_next);
  }
};

struct Row {
  std::string name;
  double value[kLanes];
  const char* format;
};

struct Table {
  std::string scenario;
  std::vector<Row> rows;
};

std::vector<Table> g_tables;
std::vector<double> g_cost_ns[kLanes];

void add_common_rows(Table& table, Lane (&lanes)[kLanes], std::size_t skip = 0) {
  Row peak_a{"peak acceleration [rad/s^2]", {}, "%.2f"}, p99_a{"p99 acceleration [rad/s^2]", {}, "%.2f"};
  Row peak_j{"peak jerk [rad/s^3]", {}, "%.0f"}, p99_j{"p99 jerk [rad/s^3]", {}, "%.0f"};
  Row act{"activations [packets]", {}, "%.0f"};
  Row cost50{"cost median [us]", {}, "%.3f"}, cost999{"cost p99.9 [us]", {}, "%.3f"};
  for (int d = 0; d < kLanes; ++d) {
    std::vector<double> acc(lanes[d].acceleration.begin() + static_cast<std::ptrdiff_t>(skip),
                            lanes[d].acceleration.end());
    std::vector<double> jerk(lanes[d].jerk.begin() + static_cast<std::ptrdiff_t>(skip), lanes[d].jerk.end());
    peak_a.value[d] = percentile(acc, 1.0);
    p99_a.value[d] = percentile(acc, 0.99);
    peak_j.value[d] = percentile(jerk, 1.0);
    p99_j.value[d] = percentile(jerk, 0.99);
    act.value[d] = static_cast<double>(lanes[d].activations);
    cost50.value[d] = percentile(lanes[d].cost_ns, 0.5) * 1e-3;
    cost999.value[d] = percentile(lanes[d].cost_ns, 0.999) * 1e-3;
    g_cost_ns[d].insert(g_cost_ns[d].end(), lanes[d].cost_ns.begin(), lanes[d].cost_ns.end());
  }
  table.rows.insert(table.rows.end(), {peak_a, p99_a, peak_j, p99_j, act, cost50, cost999});
}

// The shift τ of the source motion that fits the command best (RMS over joints 1 and 4, from 0.2 s
// on, 0.1 ms grid up to 30 ms), and the largest residual at that shift.
void add_lag_rows(Table& table, Lane (&lanes)[kLanes]) {
  Row lag{"tracking lag [ms]", {}, "%.1f"}, residual{"largest residual after the lag [urad]", {}, "%.1f"};
  for (int d = 0; d < kLanes; ++d) {
    const auto& q_cmd = lanes[d].q_cmd;
    double best_tau = 0.0, best_rms = 1e9;
    for (int k = 0; k <= 300; ++k) {
      const double tau = k * 1e-4;
      double sum = 0.0;
      std::size_t n = 0;
      for (std::size_t p = 200; p < q_cmd.size(); ++p) {
        JointArray q, dq;
        motion(static_cast<double>(p) * kT - tau, q, dq);
        for (int i : {0, 3}) {
          sum += (q_cmd[p][i] - q[i]) * (q_cmd[p][i] - q[i]);
          ++n;
        }
      }
      const double rms = std::sqrt(sum / static_cast<double>(n));
      if (rms < best_rms) {
        best_rms = rms;
        best_tau = tau;
      }
    }
    double worst = 0.0;
    for (std::size_t p = 200; p < q_cmd.size(); ++p) {
      JointArray q, dq;
      motion(static_cast<double>(p) * kT - best_tau, q, dq);
      for (int i : {0, 3}) {
        worst = std::max(worst, std::abs(q_cmd[p][i] - q[i]));
      }
    }
    lag.value[d] = best_tau * 1e3;
    residual.value[d] = worst * 1e6;
  }
  table.rows.insert(table.rows.end(), {lag, residual});
}

// A controller at 125 Hz or jittered, through each lane's own rate matcher (anchored on its own
// command, as AsyncInterface does).
void run_stream(const char* name, bool source_ticks, bool jittered) {
  Lane lanes[kLanes] = {Lane(kKinds[0]), Lane(kKinds[1])};
  for (Lane& lane : lanes) {
    lane.start(kFr3HomeRad);
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> gap(4, 12);
  int next_sample = 0;
  for (int p = 0; p < 4000; ++p) {
    const std::uint64_t tick = static_cast<std::uint64_t>(p) + 1;
    const bool sample_now = p == next_sample;
    if (sample_now) {
      next_sample += jittered ? gap(rng) : 8;
    }
    for (Lane& lane : lanes) {
      if (sample_now) {
        CommandSample sample;
        const double t_s = source_ticks ? static_cast<double>(tick - 1) * kT : static_cast<double>(p) * kT;
        motion(t_s, sample.q_rad, sample.dq_rad_s);
        sample.controller_time_s = t_s;
        if (source_ticks) {
          sample.source_tick = tick - 1;
          sample.nominal_interval_s = 0.008;
        }
        lane.matcher.on_sample(sample, lane.limiter.q_rad(), tick);
      }
      RateTarget target;
      lane.matcher.next(target);
      lane.packet(
          [&](JointLimiter& l) { return target.hold ? l.brake() : l.step(target.q_rad, target.dq_rad_s); });
    }
  }
  Table table{name, {}};
  add_common_rows(table, lanes, 200);
  add_lag_rows(table, lanes);
  g_tables.push_back(table);
}

// The first packet from which every joint stays within `tol_rad` of `q_end` and below 1e-4 rad/s.
double time_to_rest_ms(const Lane& lane, std::size_t from, const JointArray& q_end, double tol_rad) {
  std::size_t settled = lane.q_cmd.size();
  for (std::size_t p = lane.q_cmd.size(); p-- > from + 1;) {
    bool ok = true;
    for (int i = 0; i < kNumJoints; ++i) {
      const double v = (lane.q_cmd[p][i] - lane.q_cmd[p - 1][i]) / kT;
      ok = ok && std::abs(lane.q_cmd[p][i] - q_end[i]) <= tol_rad && std::abs(v) < 1e-4;
    }
    if (!ok) {
      break;
    }
    settled = p;
  }
  return static_cast<double>(settled - from) * kT * 1e3;
}

void run_step() {
  Lane lanes[kLanes] = {Lane(kKinds[0]), Lane(kKinds[1])};
  JointArray target = kFr3HomeRad;
  JointArray jump{};
  for (int i = 0; i < kNumJoints; ++i) {
    jump[i] = i % 2 == 0 ? 0.05 : -0.05;
  }
  const JointArray zero{};
  for (Lane& lane : lanes) {
    lane.start(kFr3HomeRad);
  }
  const std::size_t at = 100;
  for (std::size_t p = 0; p < 1500; ++p) {
    if (p == at) {
      for (int i = 0; i < kNumJoints; ++i) {
        target[i] += jump[i];
      }
    }
    for (Lane& lane : lanes) {
      lane.packet([&](JointLimiter& l) { return l.step(target, zero); });
    }
  }
  Table table{"step", {}};
  add_common_rows(table, lanes);
  Row overshoot{"overshoot [urad]", {}, "%.2f"}, half{"time to half the step [ms]", {}, "%.0f"};
  Row rest{"time to rest within 1 urad [ms]", {}, "%.0f"};
  for (int d = 0; d < kLanes; ++d) {
    const Lane& lane = lanes[d];
    double worst = 0.0;
    std::size_t halfway = 0;
    for (std::size_t p = at; p < lane.q_cmd.size(); ++p) {
      bool all_half = true;
      for (int i = 0; i < kNumJoints; ++i) {
        const double dir = jump[i] > 0.0 ? 1.0 : -1.0;
        worst = std::max(worst, dir * (lane.q_cmd[p][i] - target[i]));
        all_half = all_half && dir * (lane.q_cmd[p][i] - (target[i] - 0.5 * jump[i])) >= 0.0;
      }
      if (all_half && halfway == 0) {
        halfway = p - at + 1;
      }
    }
    overshoot.value[d] = worst * 1e6;
    half.value[d] = static_cast<double>(halfway);
    rest.value[d] = time_to_rest_ms(lane, at, target, 1e-6);
  }
  table.rows.insert(table.rows.end(), {overshoot, half, rest});
  g_tables.push_back(table);
}

void run_brake() {
  Lane lanes[kLanes] = {Lane(kKinds[0]), Lane(kKinds[1])};
  // From 0.3 rad above each lower range end upward: full speed with room to stop before the upper end.
  JointArray start{}, far{}, dq_full{};
  for (int i = 0; i < kNumJoints; ++i) {
    start[i] = kFr3Limits.q_min_rad[i] + 0.3;
    far[i] = kFr3Limits.q_max_rad[i] + 10.0;
    dq_full[i] = kMargin * kFr3Limits.dq_max_rad_s[i];
  }
  for (Lane& lane : lanes) {
    lane.start(start);
  }
  const std::size_t at = 600;  // every joint at full speed by then (joint 5: 4.2 rad/s after 0.53 s)
  JointArray q_at[kLanes];
  for (std::size_t p = 0; p < 2000; ++p) {
    for (int d = 0; d < kLanes; ++d) {
      Lane& lane = lanes[d];
      if (p == at) {
        q_at[d] = lane.limiter.q_rad();
      }
      lane.packet([&](JointLimiter& l) { return p < at ? l.step(far, dq_full) : l.brake(); });
    }
  }
  Table table{"brake from full speed", {}};
  add_common_rows(table, lanes);
  Row rest{"time to rest [ms]", {}, "%.0f"}, distance{"stopping distance, largest joint [mrad]", {}, "%.1f"};
  for (int d = 0; d < kLanes; ++d) {
    const Lane& lane = lanes[d];
    rest.value[d] = time_to_rest_ms(lane, at, lane.q_cmd.back(), 1e-9);
    double worst = 0.0;
    for (int i = 0; i < kNumJoints; ++i) {
      worst = std::max(worst, std::abs(lane.q_cmd.back()[i] - q_at[d][i]));
    }
    distance.value[d] = worst * 1e3;
  }
  table.rows.insert(table.rows.end(), {rest, distance});
  g_tables.push_back(table);
}

void run_range_end() {
  Lane lanes[kLanes] = {Lane(kKinds[0]), Lane(kKinds[1])};
  Row closest{"closest approach to a range end [mrad]", {}, "%.2f"};
  Row rest{"time to rest within 10 urad, slowest end [ms]", {}, "%.0f"};
  for (int d = 0; d < kLanes; ++d) {
    closest.value[d] = 1e9;
    rest.value[d] = 0.0;
  }
  for (const double direction : {+1.0, -1.0}) {
    JointArray target{}, dq_target{};
    for (int i = 0; i < kNumJoints; ++i) {
      target[i] = (direction > 0.0 ? kFr3Limits.q_max_rad[i] : kFr3Limits.q_min_rad[i]) + 0.3 * direction;
      dq_target[i] = direction * kFr3Limits.dq_max_rad_s[i];
    }
    for (Lane& lane : lanes) {
      lane.start(kFr3HomeRad);
    }
    const std::size_t first = lanes[0].q_cmd.size();
    for (std::size_t p = 0; p < 3000; ++p) {
      for (Lane& lane : lanes) {
        lane.packet([&](JointLimiter& l) { return l.step(target, dq_target); });
      }
    }
    for (int d = 0; d < kLanes; ++d) {
      const Lane& lane = lanes[d];
      for (std::size_t p = first; p < lane.q_cmd.size(); ++p) {
        for (int i = 0; i < kNumJoints; ++i) {
          const double gap = direction > 0.0 ? kFr3Limits.q_max_rad[i] - lane.q_cmd[p][i]
                                             : lane.q_cmd[p][i] - kFr3Limits.q_min_rad[i];
          closest.value[d] = std::min(closest.value[d], gap * 1e3);
        }
      }
      rest.value[d] = std::max(rest.value[d], time_to_rest_ms(lane, first, lane.q_cmd.back(), 1e-5));
    }
  }
  Table table{"range end (out at full speed, each end)", {}};
  add_common_rows(table, lanes);
  Row margin_excess{"envelope x 0.8 exceeded by [rad/s]", {}, "%.4f"};
  Row robot_excess{"robot's envelope exceeded by [rad/s] (> 0: reflex)", {}, "%.4f"};
  for (int d = 0; d < kLanes; ++d) {
    margin_excess.value[d] = std::max(0.0, lanes[d].envelope_excess_margin);
    robot_excess.value[d] = std::max(0.0, lanes[d].envelope_excess_robot);
  }
  table.rows.insert(table.rows.end(), {margin_excess, robot_excess, closest, rest});
  g_tables.push_back(table);
}

void run_late() {
  Lane lanes[kLanes] = {Lane(kKinds[0]), Lane(kKinds[1])};
  for (Lane& lane : lanes) {
    lane.start(kFr3HomeRad);
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const JointArray zero{};
  for (int p = 0; p < 4000; ++p) {
    JointArray target = kFr3HomeRad;
    for (double& q : target) {
      q += (p / 40) % 2 == 0 ? 0.05 : -0.05;
    }
    const std::uint64_t periods = unit(rng) < 0.05 ? (unit(rng) < 0.5 ? 2U : 3U) : 1U;
    for (Lane& lane : lanes) {
      lane.packet([&](JointLimiter& l) { return l.step(target, zero, periods); }, periods);
    }
  }
  Table table{"late commands (5 % of steps over 2-3 periods)", {}};
  add_common_rows(table, lanes);
  g_tables.push_back(table);
}

void run_lossy() {
  Table table{"lossy link, model robot (2 % each way, seeds 1-3)", {}};
  Row jerk{"robot's worst jerk [rad/s^3]", {}, "%.0f"},
      acc{"robot's worst acceleration [rad/s^2]", {}, "%.2f"};
  Row resyncs{"echo resyncs", {}, "%.0f"}, act{"activations [packets]", {}, "%.0f"};
  for (int d = 0; d < kLanes; ++d) {
    jerk.value[d] = acc.value[d] = resyncs.value[d] = act.value[d] = 0.0;
    for (const std::uint32_t seed : {1U, 2U, 3U}) {
      jtac::hw::test::LossyRobot robot(0.02, 0.02, seed, 3000);
      AsyncInterfaceConfig config;
      config.limiter = kKinds[d];
      AsyncInterface interface(robot, config);
      for (int p = 0; p < 3000; ++p) {
        JointArray target = kFr3HomeRad;
        for (double& q : target) {
          q += (p / 40) % 2 == 0 ? 0.05 : -0.05;
        }
        interface.submit_command(target, JointArray{}, p * kT);
        if (interface.step_once() != DeviceStatus::kOk) {
          break;
        }
      }
      jerk.value[d] = std::max(jerk.value[d], robot.history.worst_jerk_rad_s3);
      acc.value[d] = std::max(acc.value[d], robot.history.worst_acceleration_rad_s2);
      resyncs.value[d] += static_cast<double>(interface.counters().echo_resyncs);
      act.value[d] += static_cast<double>(interface.counters().limiter_activations);
    }
  }
  table.rows.insert(table.rows.end(), {acc, jerk, resyncs, act});
  g_tables.push_back(table);
}

void print_tables() {
  std::printf(
      "FR3 limits: 10 rad/s^2, 5000 rad/s^3 (published); the limiters allow 0.8 of them: 8, 4000.\n\n");
  std::printf("| scenario | figure | %s | %s | ratio %s / %s |\n| --- | --- | --- | --- | --- |\n", kNames[0],
              kNames[1], kNames[1], kNames[0]);
  for (const Table& table : g_tables) {
    for (const Row& row : table.rows) {
      char a[32], b[32], ratio[32];
      std::snprintf(a, sizeof a, row.format, row.value[0]);
      std::snprintf(b, sizeof b, row.format, row.value[1]);
      if (std::abs(row.value[0]) > 1e-12) {
        std::snprintf(ratio, sizeof ratio, "%.2f", row.value[1] / row.value[0]);
      } else {
        std::snprintf(ratio, sizeof ratio, "-");
      }
      std::printf("| %s | %s | %s | %s | %s |\n", table.scenario.c_str(), row.name.c_str(), a, b, ratio);
    }
  }
  double p50[kLanes], p999[kLanes];
  for (int d = 0; d < kLanes; ++d) {
    p50[d] = percentile(g_cost_ns[d], 0.5) * 1e-3;
    p999[d] = percentile(g_cost_ns[d], 0.999) * 1e-3;
  }
  std::printf("| all scenarios | cost median [us] | %.3f | %.3f | %.2f |\n", p50[0], p50[1], p50[1] / p50[0]);
  std::printf("| all scenarios | cost p99.9 [us] | %.3f | %.3f | %.2f |\n", p999[0], p999[1],
              p999[1] / p999[0]);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  for (int r = 0; r < repeats; ++r) {
    g_tables.clear();
    run_stream("125 Hz staircase (arrival-timed)", false, false);
    run_stream("125 Hz law (source ticks)", true, false);
    run_stream("jittered 4-12 ms", false, true);
    run_step();
    run_brake();
    run_range_end();
    run_late();
    run_lossy();
  }
  print_tables();
  return 0;
}
