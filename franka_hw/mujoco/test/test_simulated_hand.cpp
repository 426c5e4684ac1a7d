// The simulated Franka Hand on the MuJoCo FR3 (lockstep): move at its speed, grasp a box of known
// width and a grasp that misses, stop, a command replacing another, refused values, the arm left
// alone by the hand, and a held box lifted with the arm. Models: jtac_py.robots' hand=True MJCF,
// with and without a 0.03 m GraspObject at the home pose.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "franka_hw/mujoco_device.hpp"
#include "franka_hw/simulated_hand.hpp"
#include "jtac_test_support.hpp"

namespace {

using jtac::hw::ClockMode;
using jtac::hw::DeviceCommand;
using jtac::hw::DeviceState;
using jtac::hw::DeviceStatus;
using jtac::hw::HandCommand;
using jtac::hw::HandCommandKind;
using jtac::hw::HandState;
using jtac::hw::HandStatus;
using jtac::hw::JointArray;
using jtac::hw::kFr3HomeRad;
using jtac::hw::kNumJoints;
using jtac::hw::MujocoDevice;
using jtac::hw::MujocoDeviceConfig;

constexpr double kPeriodS = 0.001;
constexpr double kObjectWidthM = 0.03;

MujocoDeviceConfig config_for(const char* path) {
  MujocoDeviceConfig config;
  config.mjcf_xml = jtac::test::read_text_file(path);
  config.clock = ClockMode::kLockstep;
  return config;
}

HandCommand move(double width_m, double speed_m_s) {
  HandCommand c;
  c.kind = HandCommandKind::kMove;
  c.width_m = width_m;
  c.speed_m_s = speed_m_s;
  return c;
}

HandCommand grasp(double width_m, double speed_m_s, double force_N) {
  HandCommand c;
  c.kind = HandCommandKind::kGrasp;
  c.width_m = width_m;
  c.speed_m_s = speed_m_s;
  c.force_N = force_N;
  return c;
}

HandCommand of_kind(HandCommandKind kind) {
  HandCommand c;
  c.kind = kind;
  return c;
}

// The arm held (or driven) by joint commands in lockstep, the hand commanded beside it.
class HandSim {
 public:
  explicit HandSim(const char* mjcf) : device_(config_for(mjcf)) {}

  MujocoDevice& device() { return device_; }

  // One tick with the arm commanded to q_d_rad (dq_d_rad_s); returns the arm's state.
  DeviceState tick(const JointArray& q_d_rad = kFr3HomeRad, const JointArray& dq_d_rad_s = {}) {
    DeviceCommand command;
    command.q_d_rad = q_d_rad;
    command.dq_d_rad_s = dq_d_rad_s;
    EXPECT_EQ(device_.write_once(command), DeviceStatus::kOk);
    DeviceState state;
    EXPECT_EQ(device_.read_once(state), DeviceStatus::kOk);
    worst_arm_error_rad_ = std::max(worst_arm_error_rad_, arm_error_rad(state, q_d_rad));
    return state;
  }

  void ticks(int n) {
    for (int i = 0; i < n; ++i) {
      tick();
    }
  }

  // Ticks (arm held at home) until `done` holds for the hand's state; returns the ticks taken, or -1.
  int until(const std::function<bool(const HandState&)>& done, int max_ticks = 5000) {
    for (int i = 1; i <= max_ticks; ++i) {
      tick();
      if (done(device_.hand_state())) {
        return i;
      }
    }
    return -1;
  }

  // Ticks until command `id` is no longer running; returns the ticks taken, or -1.
  int until_done(std::uint64_t id, int max_ticks = 5000) {
    return until([id](const HandState& s) { return s.command_id == id && s.status != HandStatus::kRunning; },
                 max_ticks);
  }

  double worst_arm_error_rad() const { return worst_arm_error_rad_; }

  std::array<double, 3> position(const char* frame) const {
    std::array<double, 3> p{};
    std::array<double, 9> r{};
    device_.frame_pose(frame, p.data(), r.data());
    return p;
  }

 private:
  static double arm_error_rad(const DeviceState& state, const JointArray& q_d_rad) {
    double worst = 0.0;
    for (int j = 0; j < kNumJoints; ++j) {
      worst = std::max(worst, std::abs(state.q_rad[j] - q_d_rad[j]));
    }
    return worst;
  }

  MujocoDevice device_;
  double worst_arm_error_rad_ = 0.0;
};

TEST(SimulatedHand, ModelWithHandIsFoundAndStartsOpenAndIdle) {
  HandSim sim(JTAC_FR3_HAND_MJCF);
  ASSERT_TRUE(sim.device().has_hand());
  sim.tick();
  const HandState s = sim.device().hand_state();
  EXPECT_NEAR(s.width_m, 0.08, 1e-6);
  EXPECT_EQ(s.status, HandStatus::kIdle);
  EXPECT_EQ(s.command_id, 0U);
  EXPECT_EQ(s.temperature_C, 30.0);
  EXPECT_FALSE(s.is_grasped);

  MujocoDevice arm_only(config_for(JTAC_FR3_MJCF));
  EXPECT_FALSE(arm_only.has_hand());
  EXPECT_TRUE(std::isnan(arm_only.hand_state().width_m));
  EXPECT_THROW(arm_only.hand_command(move(0.04, 0.05)), std::logic_error);
}

TEST(SimulatedHand, MoveRunsAtItsSpeedAndEndsWithinOneMillimetre) {
  HandSim sim(JTAC_FR3_HAND_MJCF);
  sim.ticks(10);
  const std::uint64_t id = sim.device().hand_command(move(0.04, 0.05));
  EXPECT_GT(id, 0U);
  sim.tick();
  EXPECT_EQ(sim.device().hand_state().command_id, id);  // taken at the next tick
  EXPECT_EQ(sim.device().hand_state().status, HandStatus::kRunning);
  sim.ticks(99);
  EXPECT_TRUE(sim.device().hand_state().moving);
  EXPECT_NEAR(sim.device().hand_state().width_velocity_m_s, -0.05, 0.001);  // at the commanded speed
  const int ticks = sim.until_done(id) + 100;
  const HandState s = sim.device().hand_state();
  const double duration_s = ticks * kPeriodS;
  std::printf("move 0.08 -> 0.04 m at 0.05 m/s: %.3f s, width %.5f m\n", duration_s, s.width_m);
  EXPECT_EQ(s.status, HandStatus::kSuccess);
  EXPECT_NEAR(duration_s, 0.8, 0.08);
  EXPECT_NEAR(s.width_m, 0.04, 0.001);
  sim.ticks(500);  // and it stays there
  EXPECT_NEAR(sim.device().hand_state().width_m, 0.04, 0.001);
}

TEST(SimulatedHand, GraspOfTheBoxSucceedsAtItsWidth) {
  HandSim sim(JTAC_FR3_HAND_OBJECT_MJCF);
  sim.ticks(10);
  const std::uint64_t id = sim.device().hand_command(grasp(kObjectWidthM, 0.05, 20.0));
  const int ticks = sim.until_done(id);
  ASSERT_GT(ticks, 0);
  sim.ticks(100);  // the squeeze settles
  const HandState s = sim.device().hand_state();
  std::printf("grasp 0.03 m box: judged after %.3f s, width %.5f m, force %.1f N\n", ticks * kPeriodS,
              s.width_m, s.force_N);
  EXPECT_EQ(s.status, HandStatus::kSuccess);
  EXPECT_NEAR(s.width_m, kObjectWidthM, 0.002);
  EXPECT_TRUE(s.is_grasped);
  EXPECT_DOUBLE_EQ(s.force_N, 20.0);
}

TEST(SimulatedHand, GraspOfNothingIsUnsuccessfulWithTheFingersClosed) {
  HandSim sim(JTAC_FR3_HAND_MJCF);
  const std::uint64_t id = sim.device().hand_command(grasp(kObjectWidthM, 0.1, 20.0));
  ASSERT_GT(sim.until_done(id), 0);
  const HandState s = sim.device().hand_state();
  std::printf("grasp of nothing: width %.5f m\n", s.width_m);
  EXPECT_EQ(s.status, HandStatus::kUnsuccessful);
  EXPECT_LT(s.width_m, 0.002);
  EXPECT_FALSE(s.is_grasped);
}

TEST(SimulatedHand, MoveOntoTheBoxIsBlocked) {
  HandSim sim(JTAC_FR3_HAND_OBJECT_MJCF);
  const std::uint64_t id = sim.device().hand_command(move(0.01, 0.05));
  ASSERT_GT(sim.until_done(id), 0);
  const HandState s = sim.device().hand_state();
  EXPECT_EQ(s.status, HandStatus::kBlocked);
  EXPECT_NEAR(s.width_m, kObjectWidthM, 0.002);
  EXPECT_FALSE(s.is_grasped);
}

TEST(SimulatedHand, StopMidMoveHoldsTheWidth) {
  HandSim sim(JTAC_FR3_HAND_MJCF);
  const std::uint64_t move_id = sim.device().hand_command(move(0.0, 0.1));
  sim.ticks(300);
  const double width_at_stop_m = sim.device().hand_state().width_m;
  const std::uint64_t stop_id = sim.device().hand_command(of_kind(HandCommandKind::kStop));
  EXPECT_GT(stop_id, move_id);
  sim.tick();
  EXPECT_EQ(sim.device().hand_state().command_id, stop_id);
  EXPECT_EQ(sim.device().hand_state().status, HandStatus::kSuccess);
  sim.ticks(500);
  const HandState s = sim.device().hand_state();
  std::printf("stop at %.5f m: held at %.5f m\n", width_at_stop_m, s.width_m);
  EXPECT_NEAR(s.width_m, width_at_stop_m, 0.001);
  EXPECT_GT(width_at_stop_m, 0.045);  // stopped mid-way
  EXPECT_FALSE(s.moving);
}

TEST(SimulatedHand, ANewCommandAbortsTheRunningOne) {
  HandSim sim(JTAC_FR3_HAND_MJCF);
  const std::uint64_t first = sim.device().hand_command(move(0.02, 0.05));
  sim.ticks(200);
  EXPECT_EQ(sim.device().hand_state().command_id, first);
  EXPECT_EQ(sim.device().hand_state().status, HandStatus::kRunning);
  const std::uint64_t second = sim.device().hand_command(move(0.07, 0.05));
  EXPECT_EQ(second, first + 1);
  sim.tick();
  EXPECT_EQ(sim.device().hand_state().command_id, second);  // the first is the older id: aborted
  EXPECT_EQ(sim.device().hand_state().command_kind, HandCommandKind::kMove);
  ASSERT_GT(sim.until_done(second), 0);
  EXPECT_EQ(sim.device().hand_state().status, HandStatus::kSuccess);
  EXPECT_NEAR(sim.device().hand_state().width_m, 0.07, 0.001);

  // Two commands between ticks: only the newest runs.
  const std::uint64_t skipped = sim.device().hand_command(move(0.03, 0.05));
  const std::uint64_t homing = sim.device().hand_command(of_kind(HandCommandKind::kHoming));
  EXPECT_EQ(homing, skipped + 1);
  ASSERT_GT(sim.until_done(homing), 0);
  EXPECT_EQ(sim.device().hand_state().status, HandStatus::kSuccess);
  EXPECT_NEAR(sim.device().hand_state().width_m, 0.08, 0.001);
}

void expect_refused(MujocoDevice& device, const HandCommand& command, const std::string& field) {
  try {
    device.hand_command(command);
    ADD_FAILURE() << "accepted a bad " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(SimulatedHand, BadValuesAreRefusedNamingTheField) {
  HandSim sim(JTAC_FR3_HAND_MJCF);
  const std::uint64_t id = sim.device().hand_command(move(0.05, 0.05));
  expect_refused(sim.device(), move(0.081, 0.05), "width_m");
  expect_refused(sim.device(), move(-0.001, 0.05), "width_m");
  expect_refused(sim.device(), move(std::nan(""), 0.05), "width_m");
  expect_refused(sim.device(), move(0.04, 0.0), "speed_m_s");
  expect_refused(sim.device(), move(0.04, 0.11), "speed_m_s");
  expect_refused(sim.device(), grasp(0.04, 0.05, 0.0), "force_N");
  expect_refused(sim.device(), grasp(0.04, 0.05, 141.0), "force_N");
  HandCommand eps = grasp(0.04, 0.05, 20.0);
  eps.epsilon_inner_m = -0.001;
  expect_refused(sim.device(), eps, "epsilon_inner_m");
  eps.epsilon_inner_m = 0.005;
  eps.epsilon_outer_m = std::numeric_limits<double>::infinity();
  expect_refused(sim.device(), eps, "epsilon_outer_m");
  HandCommand bad_kind;
  bad_kind.kind = static_cast<HandCommandKind>(7);
  expect_refused(sim.device(), bad_kind, "kind");
  // The refusals left the running command alone, and took no id.
  sim.tick();
  EXPECT_EQ(sim.device().hand_state().command_id, id);
  EXPECT_EQ(sim.device().hand_command(of_kind(HandCommandKind::kStop)), id + 1);
}

TEST(SimulatedHand, TheArmHoldsStillWhileTheHandMovesAndGrasps) {
  HandSim sim(JTAC_FR3_HAND_OBJECT_MJCF);
  sim.ticks(200);
  const std::uint64_t id = sim.device().hand_command(move(0.05, 0.1));
  ASSERT_GT(sim.until_done(id), 0);
  const std::uint64_t grasp_id = sim.device().hand_command(grasp(kObjectWidthM, 0.1, 70.0));
  ASSERT_GT(sim.until_done(grasp_id), 0);
  sim.ticks(300);
  const std::uint64_t home_id = sim.device().hand_command(of_kind(HandCommandKind::kHoming));
  ASSERT_GT(sim.until_done(home_id), 0);
  std::printf("arm's largest deviation from q_init while the hand worked: %.2e rad\n",
              sim.worst_arm_error_rad());
  EXPECT_LT(sim.worst_arm_error_rad(), 1e-4);
}

TEST(SimulatedHand, ResetOpensTheHandAndPutsTheBoxBack) {
  HandSim sim(JTAC_FR3_HAND_OBJECT_MJCF);
  const auto box_start = sim.position("grasp_object");
  const std::uint64_t id = sim.device().hand_command(grasp(kObjectWidthM, 0.1, 20.0));
  ASSERT_GT(sim.until_done(id), 0);
  sim.device().push("grasp_object", {0.0, 0.0, 5.0, 0.0, 0.0, 0.0}, 0.2);  // lift it off its pedestal
  sim.ticks(200);
  sim.device().reset(kFr3HomeRad);
  const HandState s = sim.device().hand_state();
  EXPECT_NEAR(s.width_m, 0.08, 1e-9);
  EXPECT_EQ(s.status, HandStatus::kIdle);
  EXPECT_EQ(s.command_id, 0U);
  const auto box = sim.position("grasp_object");
  for (int i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(box[static_cast<std::size_t>(i)], box_start[static_cast<std::size_t>(i)]);
  }
}

// Joint positions that raise the TCP by lift_m along world z over duration_s (a quintic in time),
// orientation kept: resolved rates through MuJoCo's Jacobian of the TCP site on scratch data.
std::vector<JointArray> lift_trajectory(const MujocoDevice& device, const JointArray& q_start_rad,
                                        double lift_m, double duration_s) {
  const mjModel* m = device.model();
  mjData* d = mj_makeData(m);
  const int tcp = mj_name2id(m, mjOBJ_SITE, "fr3_tcp");
  std::vector<mjtNum> jacp(static_cast<std::size_t>(3 * m->nv));
  std::vector<mjtNum> jacr(static_cast<std::size_t>(3 * m->nv));
  const int steps = static_cast<int>(std::lround(duration_s / kPeriodS));
  std::vector<JointArray> q_rad(static_cast<std::size_t>(steps + 1), q_start_rad);
  for (int k = 1; k <= steps; ++k) {
    JointArray q = q_rad[static_cast<std::size_t>(k - 1)];
    for (int j = 0; j < kNumJoints; ++j) {
      d->qpos[j] = q[j];  // the arm's joints come first in the model
    }
    mj_kinematics(m, d);
    mj_comPos(m, d);
    mj_jacSite(m, d, jacp.data(), jacr.data(), tcp);
    const double s = (k - 0.5) / steps;
    const double vz = lift_m / duration_s * 30.0 * s * s * (1.0 - s) * (1.0 - s);
    // dq = Jᵀ (J Jᵀ + λI)⁻¹ [0 0 vz 0 0 0] over the arm's seven columns.
    std::array<mjtNum, 36> JJt{};
    auto J = [&](int row, int col) {
      return row < 3 ? jacp[row * m->nv + col] : jacr[(row - 3) * m->nv + col];
    };
    for (int r = 0; r < 6; ++r) {
      for (int c = 0; c < 6; ++c) {
        for (int j = 0; j < kNumJoints; ++j) {
          JJt[r * 6 + c] += J(r, j) * J(c, j);
        }
      }
      JJt[r * 6 + r] += 1e-8;
    }
    std::array<mjtNum, 6> v{0.0, 0.0, vz, 0.0, 0.0, 0.0};
    std::array<mjtNum, 6> x{};
    mju_cholFactor(JJt.data(), 6, 0.0);
    mju_cholSolve(x.data(), JJt.data(), v.data(), 6);
    for (int j = 0; j < kNumJoints; ++j) {
      double dq = 0.0;
      for (int r = 0; r < 6; ++r) {
        dq += J(r, j) * x[static_cast<std::size_t>(r)];
      }
      q[j] += dq * kPeriodS;
    }
    q_rad[static_cast<std::size_t>(k)] = q;
  }
  mj_deleteData(d);
  return q_rad;
}

// A held box rises with the hand: 5 cm in 1 s (0.29 m/s² peak), and in 0.54 s (1.0 m/s² peak).
class SimulatedHandLift : public ::testing::TestWithParam<double> {};

TEST_P(SimulatedHandLift, TheHeldBoxRisesWithTheHand) {
  const double duration_s = GetParam();
  constexpr double kLiftM = 0.05;
  HandSim sim(JTAC_FR3_HAND_OBJECT_MJCF);
  const std::uint64_t id = sim.device().hand_command(grasp(kObjectWidthM, 0.05, 20.0));
  ASSERT_GT(sim.until_done(id), 0);
  sim.ticks(100);
  ASSERT_TRUE(sim.device().hand_state().is_grasped);
  const auto tcp_start = sim.position("fr3_tcp");
  const auto box_start = sim.position("grasp_object");
  const std::vector<JointArray> q = lift_trajectory(sim.device(), kFr3HomeRad, kLiftM, duration_s);
  for (std::size_t k = 1; k < q.size(); ++k) {
    JointArray dq{};
    for (int j = 0; j < kNumJoints; ++j) {
      dq[j] = (q[k][j] - q[k - 1][j]) / kPeriodS;
    }
    sim.tick(q[k], dq);
  }
  for (int i = 0; i < 500; ++i) {
    sim.tick(q.back());
  }
  const double tcp_rise_m = sim.position("fr3_tcp")[2] - tcp_start[2];
  const double box_rise_m = sim.position("grasp_object")[2] - box_start[2];
  std::printf("lift in %.2f s (peak %.2f m/s²): tcp +%.5f m, box +%.5f m, width %.5f m\n", duration_s,
              5.7735 * kLiftM / (duration_s * duration_s), tcp_rise_m, box_rise_m,
              sim.device().hand_state().width_m);
  EXPECT_NEAR(tcp_rise_m, kLiftM, 0.002);
  EXPECT_NEAR(box_rise_m, tcp_rise_m, 0.005);
  EXPECT_TRUE(sim.device().hand_state().is_grasped);
}

INSTANTIATE_TEST_SUITE_P(Durations, SimulatedHandLift, ::testing::Values(1.0, 0.54));

}  // namespace
