// The controller thread (ControlLoop) over the simulated FR3: MujocoDevice in lockstep, the
// AsyncInterface and the composed JTAC controller, stepped deterministically on the test's thread;
// plus one real-time smoke test that asserts no timing. Built a second time with
// JTAC_CONTROL_LOOP_NOALLOC under malloc_tests' counter: then only the allocation test is compiled.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "franka_hw/async_interface.hpp"
#include "franka_hw/mujoco_device.hpp"
#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "jtac_loop/callback_law.hpp"
#include "jtac_loop/clock_map.hpp"
#include "jtac_loop/control_loop.hpp"
#include "jtac_loop/stream_law.hpp"
#include "jtac_test_support.hpp"
#ifdef JTAC_CONTROL_LOOP_NOALLOC
#include "malloc_counter.hpp"
#endif

namespace {

using jtac::Event;
using jtac::EventType;
using jtac::hw::ClockMode;
using jtac::hw::JointArray;
using jtac::hw::kFr3HomeRad;
using jtac::loop::ControlLoop;
using jtac::loop::ControlLoopConfig;
using jtac::loop::CycleRecord;
using jtac::loop::LoopSnapshot;

// The whole rig: device, interface, controller and loop. With two tips, tip 1 is a second sensor
// at fr3_link7 controlling fr3_tcp (a sensor outside the device: its readings are fed).
struct Rig {
  explicit Rig(int update_rate_hz, ClockMode clock = ClockMode::kLockstep,
               std::size_t record_capacity = ControlLoopConfig{}.record_capacity, int tips = 1) {
    jtac::hw::MujocoDeviceConfig dc;
    dc.mjcf_xml = jtac::test::read_text_file(JTAC_FR3_MJCF);
    dc.clock = clock;
    device = std::make_unique<jtac::hw::MujocoDevice>(dc);
    interface = std::make_unique<jtac::hw::AsyncInterface>(*device);
    jtac::JtacConfig config;
    config.trajectory.joint_names = jtac::test::arm_joint_names("fr3");
    config.trajectory.max_trajectory_points = 256;
    config.urdf_xml = jtac::test::read_text_file(JTAC_FR3_URDF);
    config.base_frame = "fr3_link0";
    config.tips = {{"fr3_ft_sensor", "fr3_ee"}};
    if (tips == 2) {
      config.tips.push_back({"fr3_link7", "fr3_tcp"});
    }
    config.has_force_torque_sensor = true;
    params.trajectory.stop_accelerations_rad_s2 = jtac::JointVector::Constant(7, 5.0);
    params.trajectory.default_path_tolerance_rad = jtac::JointVector::Constant(7, 0.05);
    params.trajectory.default_goal_tolerance_rad = jtac::JointVector::Constant(7, 0.01);
    params.trajectory.default_goal_time_tolerance_s = 0.5;
    controller.configure(config, params);
    ControlLoopConfig lc;
    lc.update_rate_hz = update_rate_hz;
    lc.record_capacity = record_capacity;
    loop = std::make_unique<ControlLoop>(*interface, controller, lc);
  }

  // Steps `packets` device packets, draining events after each controller cycle.
  void run_packets(int packets) {
    for (int i = 0; i < packets; ++i) {
      ASSERT_EQ(loop->step(), jtac::hw::DeviceStatus::kOk);
      Event e;
      while (controller.poll_event(e)) {
        events.push_back(e);
      }
    }
  }
  void run(double seconds) { run_packets(static_cast<int>(std::lround(seconds * 1000.0))); }

  LoopSnapshot snap() {
    LoopSnapshot s;
    EXPECT_TRUE(loop->snapshot(s));
    return s;
  }

  std::uint64_t submit(const jtac::JtacGoal& goal) {
    const auto r = controller.submit_goal(goal, snap().time_s);
    EXPECT_EQ(r.code, jtac::ResultCode::kSuccessful) << r.message;
    return r.goal_id;
  }

  const Event* find(EventType type, std::uint64_t goal_id) const {
    for (const auto& e : events) {
      if (e.type == type && e.goal_id == goal_id) {
        return &e;
      }
    }
    return nullptr;
  }

  std::unique_ptr<jtac::hw::MujocoDevice> device;
  std::unique_ptr<jtac::hw::AsyncInterface> interface;
  jtac::JtacParameters params;
  jtac::JointTrajectoryAdmittanceController controller;
  std::unique_ptr<ControlLoop> loop;
  std::vector<Event> events;
};

// A 7-joint quintic rest-to-rest move from home by `delta` over `duration`, sampled every 50 ms.
jtac::JtacGoal quintic(const JointArray& delta, double duration) {
  jtac::JtacGoal goal;
  goal.trajectory.joint_names = jtac::test::arm_joint_names("fr3");
  const int n = static_cast<int>(std::lround(duration / 0.05));
  for (int k = 1; k <= n; ++k) {
    const double s = static_cast<double>(k) / n;
    const double p = 10 * std::pow(s, 3) - 15 * std::pow(s, 4) + 6 * std::pow(s, 5);
    const double v = (30 * s * s - 60 * std::pow(s, 3) + 30 * std::pow(s, 4)) / duration;
    const double a = (60 * s - 180 * s * s + 120 * std::pow(s, 3)) / (duration * duration);
    jtac::GoalPoint point;
    point.time_from_start_s = s * duration;
    for (std::size_t j = 0; j < 7; ++j) {
      point.positions_rad.push_back(kFr3HomeRad[j] + delta[j] * p);
      point.velocities_rad_s.push_back(delta[j] * v);
      point.accelerations_rad_s2.push_back(delta[j] * a);
    }
    goal.trajectory.points.push_back(point);
  }
  return goal;
}

constexpr JointArray kDelta = {0.3, -0.25, 0.2, 0.3, -0.3, 0.25, 0.4};

// A callback law over the sine reference law on the FR3's kinematics: A = params[0] rad, ω = params[1]
// rad/s on joint params[2].
jtac::loop::CallbackLawConfig sine_law_config(double amplitude_rad, double omega_rad_s, int joint) {
  jtac::loop::CallbackLawConfig config;
  config.name = "sine";
  config.function = &jtac::loop::jtac_sine_law;
  config.num_params = 3;
  config.num_memory = 9;
  config.params = {amplitude_rad, omega_rad_s, static_cast<double>(joint)};
  config.urdf_xml = jtac::test::read_text_file(JTAC_FR3_URDF);
  config.base_frame = "fr3_link0";
  config.joint_names = jtac::test::arm_joint_names("fr3");
  config.tcp_frame = "fr3_tcp";
  return config;
}

// The sine law that turns bad 1 s after its start: params[3] = 1 → NaN on joint 2's position,
// params[3] = 2 → returns code 7.
int failing_sine_law(double time_s, double period_s, const double* q_rad, const double* dq_rad_s,
                     const double* q_d_rad, const double* tau_ext_Nm, const double* wrench_N_Nm,
                     const double* T_base_tcp, const double* jacobian, const double* params,
                     std::int64_t /*num_params*/, double* memory, std::int64_t /*num_memory*/,
                     double* q_cmd_rad, double* dq_cmd_rad_s) {
  const int code =
      jtac::loop::jtac_sine_law(time_s, period_s, q_rad, dq_rad_s, q_d_rad, tau_ext_Nm, wrench_N_Nm,
                                T_base_tcp, jacobian, params, 3, memory, 9, q_cmd_rad, dq_cmd_rad_s);
  if (time_s - memory[1] >= 1.0 - 1e-9) {
    if (params[3] == 1.0) {
      q_cmd_rad[2] = std::nan("");
    } else if (params[3] == 2.0) {
      return 7;
    }
  }
  return code;
}

#ifndef JTAC_CONTROL_LOOP_NOALLOC

class ControlLoopQuintic : public ::testing::TestWithParam<int> {};

TEST_P(ControlLoopQuintic, SevenJointQuinticSucceedsWithinTrackingBound) {
  Rig rig(GetParam());
  rig.run(0.05);
  EXPECT_EQ(rig.snap().mode, jtac::ControllerMode::kIdle);
  const auto id = rig.submit(quintic(kDelta, 2.0));
  rig.loop->start_recording();
  double max_error = 0.0;
  for (int i = 0; i < 3000 && rig.find(EventType::kGoalSucceeded, id) == nullptr; ++i) {
    rig.run_packets(1);
    std::vector<CycleRecord> rows;
    rig.loop->drain(rows);
    for (const auto& r : rows) {
      for (std::size_t j = 0; j < 7; ++j) {
        max_error = std::max(max_error, std::abs(r.q_ref_rad[j] - r.q_rad[j]));
      }
    }
  }
  const Event* done = rig.find(EventType::kGoalSucceeded, id);
  ASSERT_NE(done, nullptr);
  // Measured vs reference over the whole motion: device impedance lag + rate matching + one packet.
  const double bound = 0.01;
  EXPECT_LT(max_error, bound);
  std::printf(
      "[ rate %d Hz ] max |q_ref - q| = %.3g mrad over the quintic; largest command gap %llu packets\n",
      GetParam(), max_error * 1e3, static_cast<unsigned long long>(rig.loop->timing().largest_command_gap));
  const LoopSnapshot s = rig.snap();
  for (std::size_t j = 0; j < 7; ++j) {
    EXPECT_NEAR(s.q_rad[j], kFr3HomeRad[j] + kDelta[j], 0.01) << "joint " << j;
  }
  EXPECT_EQ(rig.loop->dropped_records(), 0U);
  EXPECT_EQ(rig.loop->timing().commands_refused, 0U);
  EXPECT_LE(rig.loop->timing().largest_command_gap,
            static_cast<std::uint64_t>(rig.loop->packets_per_cycle()));
}

INSTANTIATE_TEST_SUITE_P(Rates, ControlLoopQuintic, ::testing::Values(1000, 125));

// Position of the TCP site in world [m].
std::array<double, 3> tcp(const jtac::hw::MujocoDevice& device) {
  std::array<double, 3> p{};
  double R[9];
  device.frame_pose("fr3_tcp", p.data(), R);
  return p;
}

TEST(ControlLoop, APushOnTheTcpDeflectsTheToolAlongThePushDuringACompliantGoal) {
  Rig rig(1000);
  rig.run(0.05);
  jtac::JtacGoal goal;
  goal.trajectory.joint_names = jtac::test::arm_joint_names("fr3");
  jtac::GoalPoint hold;
  hold.time_from_start_s = 4.0;
  hold.positions_rad.assign(kFr3HomeRad.begin(), kFr3HomeRad.end());
  hold.velocities_rad_s.assign(7, 0.0);
  goal.trajectory.points.push_back(hold);
  goal.trajectory.path_tolerance_rad.assign(7, 0.5);
  goal.trajectory.goal_tolerance_rad.assign(7, 0.05);
  jtac::TipGoal tip;
  tip.mass.assign(6, 5.0);
  tip.stiffness.assign(6, 500.0);
  tip.damping.assign(6, 2.0 * std::sqrt(5.0 * 500.0));
  tip.selected_axes = {true, true, true, false, false, false};
  goal.tips = {tip};
  const auto id = rig.submit(goal);
  rig.run(0.2);
  const auto before = tcp(*rig.device);
  const double force = 15.0;  // world +y
  rig.device->push("fr3_tcp", {0.0, force, 0.0, 0.0, 0.0, 0.0}, 1.5);
  rig.run(1.4);
  const auto during = tcp(*rig.device);
  const double along = during[1] - before[1];
  std::printf(
      "[ push ] %.0f N along world y: TCP moved %.2f mm along, %.2f / %.2f mm across (F/K = %.1f mm)\n",
      force, along * 1e3, (during[0] - before[0]) * 1e3, (during[2] - before[2]) * 1e3, force / 500.0 * 1e3);
  EXPECT_GT(along, 0.6 * force / 500.0);  // the admittance's F/K, plus the joints' own compliance
  EXPECT_LT(along, 2.0 * force / 500.0);
  EXPECT_EQ(rig.find(EventType::kGoalAborted, id), nullptr);
  rig.run(1.5);  // released: back toward the reference
  const auto after = tcp(*rig.device);
  EXPECT_LT(std::abs(after[1] - before[1]), 0.2 * along);
}

TEST(ControlLoop, RecordingNCyclesGivesNRowsAndNoDrops) {
  Rig rig(125);
  rig.run(0.05);
  const int cycles = 300;
  rig.loop->start_recording();
  rig.run_packets(cycles * rig.loop->packets_per_cycle());
  rig.loop->stop_recording();
  rig.run(0.1);  // not recorded
  std::vector<CycleRecord> rows;
  EXPECT_EQ(rig.loop->drain(rows), static_cast<std::size_t>(cycles));
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(cycles));
  EXPECT_EQ(rig.loop->dropped_records(), 0U);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_NEAR(rows[i].time_s - rows[i - 1].time_s, 0.008, 1e-9);
    EXPECT_EQ(rows[i].tick - rows[i - 1].tick, 8U);
  }
}

// The snapshot and the recording are one cycle record: after a recorded cycle, every field of the
// table (cycle_record.hpp) in the last row equals the snapshot's, and the row carries what the law
// filled (the goal, the reference velocity) and the cycle's timing.
TEST(ControlLoop, TheSnapshotIsTheLastRecordedRowFieldByField) {
  Rig rig(500);
  rig.run(0.05);
  JointArray delta{};
  delta[0] = 0.2;  // [rad]
  const std::uint64_t goal_id = rig.submit(quintic(delta, 1.0));
  rig.run(0.3);  // mid-move: the reference velocity is not zero
  rig.loop->start_recording();
  rig.run_packets(3 * rig.loop->packets_per_cycle());
  rig.loop->stop_recording();
  std::vector<CycleRecord> rows;
  ASSERT_EQ(rig.loop->drain(rows), 3U);
  const LoopSnapshot s = rig.snap();
  const CycleRecord& last = rows.back();
  jtac::loop::for_each_cycle_field([&](const jtac::loop::CycleFieldInfo& f, auto member) {
    EXPECT_TRUE(last.*member == s.*member) << f.python_name;
  });
  EXPECT_EQ(last.goal_id, goal_id);
  EXPECT_EQ(last.mode, jtac::ControllerMode::kExecuting);
  EXPECT_EQ(last.status, jtac::UpdateStatus::kOk);
  EXPECT_GT(last.dq_ref_rad_s[0], 0.0);
  EXPECT_GE(last.cycle_duration_us, 0.0);
  EXPECT_GT(last.interval_us, 0.0);  // read-to-read on the wall clock (lockstep runs as fast as it can)
}

double force_norm(const jtac::hw::WrenchArray& w) {
  return std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
}

// Two tips: the device's sensor feeds tip 0, tip 1's external sensor is fed through the law; both
// tips' raw, filtered and control wrenches reach the snapshot and every recorded row.
TEST(ControlLoop, EveryTipsWrenchesReachTheSnapshotAndTheRecord) {
  using jtac::hw::WrenchArray;
  using jtac::loop::WrenchSource;
  Rig rig(250, ClockMode::kLockstep, ControlLoopConfig{}.record_capacity, 2);
  jtac::loop::JtacLaw* law = rig.loop->jtac_law();
  ASSERT_NE(law, nullptr);
  EXPECT_EQ(law->wrench_source(0), WrenchSource::kDevice);
  EXPECT_EQ(law->wrench_source(1), WrenchSource::kExternal);
  rig.run(0.05);
  LoopSnapshot s = rig.snap();
  EXPECT_EQ(s.num_tips, 2);
  EXPECT_EQ(s.wrench_raw_N_Nm[1], WrenchArray{});  // nothing fed yet
  const WrenchArray w1 = {2.0, -3.0, 5.0, 0.1, 0.2, -0.3};
  EXPECT_TRUE(law->feed_wrench(1, w1));
  EXPECT_FALSE(law->feed_wrench(0, w1));  // tip 0 reads the device
  EXPECT_FALSE(law->feed_wrench(2, w1));  // not a configured tip
  EXPECT_FALSE(law->feed_wrench(-1, w1));
  rig.run_packets(rig.loop->packets_per_cycle());  // the next cycle takes it
  rig.loop->start_recording();
  const double push_n = 15.0;  // world +y at the TCP: through the device's sensor, tip 0's
  rig.device->push("fr3_tcp", {0.0, push_n, 0.0, 0.0, 0.0, 0.0}, 0.3);
  rig.run(0.4);
  rig.loop->stop_recording();
  s = rig.snap();
  EXPECT_EQ(s.wrench_raw_N_Nm[1], w1);  // held since it was fed
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(s.wrench_filtered_N_Nm[1][i], w1[i], 1e-12) << i;  // no filter, deadband or tare
  }
  // Tip 1's control wrench: its reading in fr3_tcp's axes (no payload), the same force.
  EXPECT_NEAR(force_norm(s.wrench_control_N_Nm[1]), force_norm(w1), 1e-9);
  EXPECT_GT(std::abs(s.wrench_control_N_Nm[1][3]) + std::abs(s.wrench_control_N_Nm[1][4]), 0.0);
  for (std::size_t k = 2; k < s.wrench_raw_N_Nm.size(); ++k) {  // tips not configured
    EXPECT_EQ(s.wrench_raw_N_Nm[k], WrenchArray{});
    EXPECT_EQ(s.wrench_filtered_N_Nm[k], WrenchArray{});
    EXPECT_EQ(s.wrench_control_N_Nm[k], WrenchArray{});
  }
  std::vector<CycleRecord> rows;
  rig.loop->drain(rows);
  ASSERT_EQ(rows.size(), 100U);  // 0.4 s at 250 Hz
  double max_tip0_n = 0.0;
  for (const auto& r : rows) {
    EXPECT_EQ(r.num_tips, 2);
    EXPECT_EQ(r.wrench_raw_N_Nm[1], w1);
    max_tip0_n = std::max(max_tip0_n, force_norm(r.wrench_raw_N_Nm[0]));
  }
  std::printf("[ tips ] tip 0 (device) read up to %.2f N of the %.0f N push; tip 1 (fed) held %.2f N\n",
              max_tip0_n, push_n, force_norm(w1));
  EXPECT_NEAR(max_tip0_n, push_n, 0.2 * push_n);
  // Both tips external: tip 0 now reads what it is fed, no longer the device.
  law->set_wrench_sources(
      {WrenchSource::kExternal, WrenchSource::kExternal, WrenchSource::kNone, WrenchSource::kNone});
  const WrenchArray w0 = {-1.0, 0.5, 0.25, 0.0, 0.0, 0.0};
  EXPECT_TRUE(law->feed_wrench(0, w0));
  rig.run(0.02);
  EXPECT_EQ(rig.snap().wrench_raw_N_Nm[0], w0);
  // A tip without a sensor reads zero and takes no readings.
  law->set_wrench_sources(
      {WrenchSource::kExternal, WrenchSource::kNone, WrenchSource::kNone, WrenchSource::kNone});
  EXPECT_FALSE(law->feed_wrench(1, w1));
  rig.run(0.02);
  EXPECT_EQ(rig.snap().wrench_raw_N_Nm[1], WrenchArray{});
}

// The trajectory time of the sampled reference, carried from the engine: the reference is the
// planned quintic at exactly that time, and the time advances by the speed scale of every cycle,
// also while the scale ramps down mid-goal.
TEST(ControlLoop, TheTrajectoryTimeIsThatOfTheSampledReferenceAcrossASpeedChange) {
  Rig rig(250);
  rig.run(0.05);
  const double duration = 2.0;
  const auto id = rig.submit(quintic(kDelta, duration));
  rig.loop->start_recording();
  rig.run(0.6);
  jtac::JtacParameters slow = rig.params;
  slow.trajectory.time_scale_percentage = 40.0;
  ASSERT_EQ(rig.controller.set_parameters(slow), "");
  for (int i = 0; i < 8000 && rig.find(EventType::kGoalSucceeded, id) == nullptr; ++i) {
    rig.run_packets(1);
  }
  ASSERT_NE(rig.find(EventType::kGoalSucceeded, id), nullptr);
  rig.loop->stop_recording();
  std::vector<CycleRecord> rows;
  rig.loop->drain(rows);
  int executing = 0;
  double max_reference_error = 0.0;
  double max_step_error = 0.0;
  double min_scale = 1.0;
  double last_tau = 0.0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const CycleRecord& r = rows[i];
    if (r.mode != jtac::ControllerMode::kExecuting || rows[i - 1].mode != jtac::ControllerMode::kExecuting) {
      continue;
    }
    ++executing;
    const double u = std::min(r.trajectory_time_s / duration, 1.0);
    const double p = 10 * std::pow(u, 3) - 15 * std::pow(u, 4) + 6 * std::pow(u, 5);
    for (std::size_t j = 0; j < 7; ++j) {
      max_reference_error =
          std::max(max_reference_error, std::abs(r.q_ref_rad[j] - (kFr3HomeRad[j] + kDelta[j] * p)));
    }
    // dτ = T·(s_prev + s)/2, the engine's midpoint rule, with s the scale each row reports.
    const double step = r.trajectory_time_s - rows[i - 1].trajectory_time_s;
    max_step_error =
        std::max(max_step_error, std::abs(step - 0.004 * 0.5 * (rows[i - 1].time_scale + r.time_scale)));
    min_scale = std::min(min_scale, r.time_scale);
    last_tau = r.trajectory_time_s;
  }
  std::printf(
      "[ trajectory time ] %d executing cycles, scale down to %.3f: max |q_ref − q(τ)| = %.2g rad, "
      "max |dτ − T·s| = %.2g s\n",
      executing, min_scale, max_reference_error, max_step_error);
  EXPECT_GT(executing, 600);  // 0.6 s at full speed, then 1.4 s of trajectory at 40 %: ~4 s
  EXPECT_NEAR(min_scale, 0.4, 1e-3);
  EXPECT_LT(max_reference_error, 1e-9);
  EXPECT_LT(max_step_error, 1e-12);
  EXPECT_NEAR(last_tau, duration, 0.004);
}

TEST(ControlLoop, TheRecordRingHoldsItsConfiguredRowsAndCountsTheRest) {
  Rig rig(1000, ClockMode::kLockstep, 100);
  EXPECT_EQ(rig.loop->record_capacity(), 100U);
  rig.loop->start_recording();
  rig.run_packets(250);  // nothing drains meanwhile
  EXPECT_EQ(rig.loop->pending_records(), 100U);
  EXPECT_EQ(rig.loop->dropped_records(), 150U);
  std::vector<CycleRecord> rows;
  EXPECT_EQ(rig.loop->drain(rows), 100U);
  EXPECT_EQ(rows.front().tick + 99, rows.back().tick);  // the oldest rows are kept
  rig.run_packets(10);
  EXPECT_EQ(rig.loop->pending_records(), 10U);
}

TEST(ControlLoop, CancelMidMotionEndsCanceledWithTheArmAtRest) {
  Rig rig(250);
  rig.run(0.05);
  const auto id = rig.submit(quintic(kDelta, 3.0));
  rig.run(1.5);  // mid-motion, near peak velocity
  double speed = 0.0;
  for (double v : rig.snap().dq_rad_s) {
    speed = std::max(speed, std::abs(v));
  }
  EXPECT_GT(speed, 0.05);
  rig.controller.request_cancel(id);
  const double cancel_time = rig.snap().time_s;
  for (int i = 0; i < 3000 && rig.find(EventType::kGoalCanceled, id) == nullptr; ++i) {
    rig.run_packets(1);
  }
  ASSERT_NE(rig.find(EventType::kGoalCanceled, id), nullptr);
  EXPECT_EQ(rig.find(EventType::kGoalSucceeded, id), nullptr);
  // The result comes once the command is at rest: the minimum-time stop at 5 rad/s² from `speed`.
  const LoopSnapshot at_result = rig.snap();
  EXPECT_LT(at_result.time_s - cancel_time, speed / 5.0 + 0.05);
  for (std::size_t j = 0; j < 7; ++j) {
    EXPECT_EQ(at_result.dq_cmd_rad_s[j], 0.0) << "joint " << j;
  }
  // The simulated joint impedance (K 600, D 30 N·m·s/rad on joints 1-4) rings for a few tenths of a
  // second after the command stops; then the arm rests on the held command, short of the goal.
  rig.run(1.0);
  const LoopSnapshot s = rig.snap();
  EXPECT_EQ(s.mode, jtac::ControllerMode::kIdle);
  for (std::size_t j = 0; j < 7; ++j) {
    EXPECT_LT(std::abs(s.dq_rad_s[j]), 2e-3) << "joint " << j;
    EXPECT_EQ(s.dq_cmd_rad_s[j], 0.0) << "joint " << j;
    EXPECT_NEAR(s.q_rad[j], s.q_cmd_rad[j], 1e-3) << "joint " << j;
    EXPECT_GT(std::abs(kFr3HomeRad[j] + kDelta[j] - s.q_rad[j]), 0.1 * std::abs(kDelta[j])) << "joint " << j;
  }
  std::printf("[ cancel ] at %.2f rad/s: result after %.0f ms, arm at rest (max |dq| %.2g rad/s) 1 s later\n",
              speed, (at_result.time_s - cancel_time) * 1e3,
              std::max(std::abs(s.dq_rad_s[1]), std::abs(s.dq_rad_s[3])));
}

TEST(ControlLoop, RejectsAnUnsupportedRate) {
  jtac::hw::MujocoDeviceConfig dc;
  dc.mjcf_xml = jtac::test::read_text_file(JTAC_FR3_MJCF);
  jtac::hw::MujocoDevice device(dc);
  jtac::hw::AsyncInterface interface(device);
  jtac::JointTrajectoryAdmittanceController controller;
  ControlLoopConfig lc;
  lc.update_rate_hz = 300;
  EXPECT_THROW(ControlLoop(interface, controller, lc), std::invalid_argument);
}

// The controller slot takes any ControlLaw: a law that swings joint 4 by 0.2 (1 − cos) rad from where
// it was activated, through the same interface, rate matching and snapshot.
class SwingLaw final : public jtac::loop::ControlLaw {
 public:
  void activate(const jtac::hw::DeviceState& state, const jtac::loop::LawHandover& from) noexcept override {
    q0_ = jtac::loop::handover_position(state, from);
    t0_ = state.time_s;
    handing_over_ = false;
    resting_ = false;
    activations_ += 1;
  }
  void deactivate(double /*time_s*/) noexcept override {}
  // Swings on until the swing's next return to its start (velocity zero there), then holds it.
  void begin_handover(double /*time_s*/) noexcept override { handing_over_ = true; }
  bool at_rest() const noexcept override { return resting_; }
  void set_stop_accelerations(const JointArray& /*a_rad_s2*/) noexcept override {}
  jtac::UpdateStatus update(const jtac::hw::DeviceState& state, double time_s, double /*period_s*/,
                            jtac::loop::LawOutput& out) noexcept override {
    const double w = 2.0;  // [rad/s]
    const double period_s = 2.0 * M_PI / w;
    double t = time_s - t0_;
    if (handing_over_ && (resting_ || std::fmod(t, period_s) < std::fmod(t - 0.001, period_s))) {
      resting_ = true;
      t = 0.0;
    }
    out.q_cmd_rad = q0_;
    out.dq_cmd_rad_s = {};
    out.q_cmd_rad[3] += 0.1 * (1.0 - std::cos(w * t));
    out.dq_cmd_rad_s[3] = 0.1 * w * std::sin(w * t);
    out.q_ref_rad = out.q_cmd_rad;
    out.dq_ref_rad_s = out.dq_cmd_rad_s;
    for (std::size_t j = 0; j < 7; ++j) {
      out.error_rad[j] = out.q_ref_rad[j] - state.q_rad[j];
    }
    out.mode = jtac::ControllerMode::kExecuting;
    return jtac::UpdateStatus::kOk;
  }
  int activations_ = 0;

 private:
  JointArray q0_{};
  double t0_ = 0.0;
  bool handing_over_ = false;
  bool resting_ = false;
};

TEST(ControlLoop, ACustomControlLawDrivesTheArmThroughTheSameSlot) {
  jtac::hw::MujocoDeviceConfig dc;
  dc.mjcf_xml = jtac::test::read_text_file(JTAC_FR3_MJCF);
  jtac::hw::MujocoDevice device(dc);
  jtac::hw::AsyncInterface interface(device);
  SwingLaw law;
  ControlLoopConfig lc;
  lc.update_rate_hz = 250;
  ControlLoop loop(interface, law, lc);
  double max_error = 0.0;
  double max_q4 = -10.0;
  for (int i = 0; i < 3000; ++i) {
    ASSERT_EQ(loop.step(), jtac::hw::DeviceStatus::kOk);
    LoopSnapshot s;
    if (i > 100 && loop.snapshot(s)) {
      max_error = std::max(max_error, std::abs(s.error_rad[3]));
      max_q4 = std::max(max_q4, s.q_rad[3]);
    }
  }
  EXPECT_EQ(law.activations_, 1);
  EXPECT_EQ(loop.timing().cycles, 750U);  // 3 s at 250 Hz
  // The arm followed the law: it reached the top of the swing (+0.2 rad) and lagged by little
  // (rate matching delays a 250 Hz law by one controller interval, 4 ms × 0.2 rad/s peak).
  EXPECT_NEAR(max_q4, kFr3HomeRad[3] + 0.2, 0.01);
  EXPECT_LT(max_error, 0.01) << "max error " << max_error;
}

// A streamed target (a 125 Hz teleoperation source) through StreamLaw, switched in and out of the
// loop that runs the JTAC controller: the arm follows the stream smoothly, then a goal runs again.
TEST(ControlLoop, AStreamedTargetAt125HzIsFollowedSmoothlyAndTheLawSwitchesBack) {
  Rig rig(1000);
  rig.run(0.05);
  jtac::loop::StreamLaw stream(0.001);
  rig.loop->use_law(&stream);
  const double w = 2.0;  // [rad/s]
  const JointArray q0 = rig.snap().q_rad;
  double max_lag = 0.0;
  double max_dv = 0.0;
  double dq_prev = 0.0;
  for (int p = 0; p < 3000; ++p) {
    const double t = p * 0.001;
    if (p % 8 == 0) {  // 125 Hz
      JointArray q = q0;
      JointArray dq{};
      q[3] += 0.2 * (1.0 - std::cos(w * t));
      dq[3] = 0.2 * w * std::sin(w * t);
      ASSERT_TRUE(stream.set_target(q, dq, rig.snap().time_s));  // stamped on the controller clock
    }
    ASSERT_EQ(rig.loop->step(), jtac::hw::DeviceStatus::kOk);
    const double dq_cmd = rig.interface->last_command().dq_d_rad_s[3];
    max_dv = std::max(max_dv, std::abs(dq_cmd - dq_prev));
    dq_prev = dq_cmd;
    if (p > 200) {
      const double expected = q0[3] + 0.2 * (1.0 - std::cos(w * t));
      max_lag = std::max(max_lag, std::abs(rig.snap().q_rad[3] - expected));
    }
  }
  EXPECT_GT(stream.targets_taken(), 370U);
  // Delayed by one 8 ms interval at ≤ 0.4 rad/s, plus the robot's own lag: a few mrad.
  EXPECT_LT(max_lag, 0.01) << "lag " << max_lag;
  // The robot's command changes by at most a_max·T per packet (no 125 Hz staircase).
  EXPECT_LE(max_dv, 0.8 * 10.0 * 0.001 + 1e-12) << "velocity step " << max_dv;
  // Back to the JTAC controller: it re-activates from the arm's position and takes a goal.
  rig.loop->use_law(nullptr);
  rig.run(0.05);
  EXPECT_EQ(rig.snap().mode, jtac::ControllerMode::kIdle);
  const auto id = rig.submit(quintic(JointArray{}, 0.5));
  rig.run(1.0);
  EXPECT_NE(rig.find(jtac::EventType::kGoalSucceeded, id), nullptr);
}

// A law behind a C function pointer: its command is what the loop records, exactly; new parameters
// take effect at a cycle boundary; the TCP pose and Jacobian it sees are jtac_core's at the measured q.
TEST(CallbackLaw, ItsCommandIsRecordedExactlyAndParamsChangeAtACycleBoundary) {
  Rig rig(1000);
  rig.run(0.05);
  jtac::loop::CallbackLaw law(sine_law_config(0.1, 3.0, 3));
  rig.loop->use_law(&law);
  rig.loop->start_recording();
  rig.run(1.0);
  ASSERT_EQ(law.set_params(std::vector<double>{0.05, 3.0, 3.0}), "");
  rig.run(0.5);
  std::vector<CycleRecord> rows;
  rig.loop->drain(rows);
  ASSERT_GT(rows.size(), 1400U);
  const double t0 = rows[0].time_s;
  const JointArray q0 = rows[0].q_cmd_rad;
  double max_error = 0.0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double tau = rows[k].time_s - t0;
    // The 1000 cycles before set_params ran with the first set, the next one takes the new set.
    const double amplitude = k < 1000 ? 0.1 : 0.05;
    max_error =
        std::max(max_error, std::abs(rows[k].q_cmd_rad[3] - (q0[3] + amplitude * std::sin(3.0 * tau))));
    EXPECT_EQ(rows[k].q_cmd_rad[0], q0[0]);
    EXPECT_EQ(rows[k].mode, jtac::ControllerMode::kExecuting);
  }
  EXPECT_EQ(law.params_taken(), 1U);
  EXPECT_LT(max_error, 1e-12);
  EXPECT_EQ(law.set_params(std::vector<double>{0.05, 3.0}),
            "law 'sine': set_params got 2 values, num_params is 3");
  EXPECT_NE(law.set_params(std::vector<double>{0.05, std::nan(""), 3.0}).find("params[1] is nan"),
            std::string::npos);
  EXPECT_FALSE(law.failed());
  EXPECT_EQ(law.calls(), rows.size());
}

TEST(CallbackLaw, TheLawSeesTheTcpPoseAndJacobianOfTheMeasuredPosition) {
  static std::array<double, 16> pose{};
  static std::array<double, 42> jacobian{};
  static JointArray q{};
  Rig rig(1000);
  rig.run(0.05);
  jtac::loop::CallbackLawConfig config = sine_law_config(0.0, 0.0, 0);
  config.function = [](double, double, const double* q_rad, const double*, const double* q_d_rad,
                       const double*, const double*, const double* T_base_tcp, const double* J, const double*,
                       std::int64_t, double*, std::int64_t, double* q_cmd_rad, double*) -> int {
    std::copy(T_base_tcp, T_base_tcp + 16, pose.begin());
    std::copy(J, J + 42, jacobian.begin());
    std::copy(q_rad, q_rad + 7, q.begin());
    std::copy(q_d_rad, q_d_rad + 7, q_cmd_rad);
    return 0;
  };
  jtac::loop::CallbackLaw law(config);
  rig.loop->use_law(&law);
  rig.run(0.1);
  jtac::Kinematics kinematics;
  kinematics.configure(config.urdf_xml, "fr3_link0", config.joint_names);
  jtac::JointVector qv(7);
  for (int j = 0; j < 7; ++j) {
    qv[j] = q[static_cast<std::size_t>(j)];
  }
  Eigen::Isometry3d T;
  jtac::Jacobian J(6, 7);
  ASSERT_EQ(kinematics.forward_and_jacobian(qv, kinematics.frame_index("fr3_tcp"), T, J),
            jtac::KinematicsStatus::kOk);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) {
      EXPECT_NEAR(pose[static_cast<std::size_t>(4 * r + c)], T.matrix()(r, c), 1e-12);
    }
  }
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 7; ++c) {
      EXPECT_NEAR(jacobian[static_cast<std::size_t>(7 * r + c)], J(r, c), 1e-12);
    }
  }
  EXPECT_GT(pose[11], 0.3);  // the TCP is above the base at home [m]
}

// A law that commands NaN (or returns a code) 1 s into a swing: the arm stops in minimum time within
// the stop accelerations, then holds; the error names the law, the joint and the value (or the code).
class CallbackLawFailure : public ::testing::TestWithParam<int> {};

TEST_P(CallbackLawFailure, StopsTheArmInMinimumTimeAndSaysWhy) {
  Rig rig(1000);
  rig.run(0.05);
  jtac::loop::CallbackLawConfig config = sine_law_config(0.2, 4.0, 2);
  config.name = "failing_sine";
  config.function = &failing_sine_law;
  config.num_params = 4;
  config.params.push_back(GetParam());
  jtac::loop::CallbackLaw law(config);
  rig.loop->use_law(&law);
  rig.loop->start_recording();
  rig.run(2.5);
  std::vector<CycleRecord> rows;
  rig.loop->drain(rows);
  ASSERT_TRUE(law.failed());
  const jtac::loop::CallbackLawError e = law.error();
  const std::string message(e.message.data());
  EXPECT_NEAR(e.time_s - rows[0].time_s, 1.0, 1e-9);
  if (GetParam() == 1) {
    EXPECT_EQ(e.joint, 2);
    EXPECT_TRUE(std::isnan(e.value));
    EXPECT_EQ(message.rfind("law 'failing_sine' commanded a non-finite value at t = ", 0), 0U) << message;
    EXPECT_NE(message.find("joint 2 (fr3_joint3) = nan"), std::string::npos) << message;
  } else {
    EXPECT_EQ(e.code, 7);
    EXPECT_NE(message.find("law 'failing_sine' returned error code 7"), std::string::npos) << message;
  }
  // Every command is finite; from the failure on the velocity shrinks at ≤ 5 rad/s² to rest.
  double speed_at_failure = 0.0;
  double rest_time = -1.0;
  for (std::size_t k = 1; k < rows.size(); ++k) {
    for (std::size_t j = 0; j < 7; ++j) {
      ASSERT_TRUE(std::isfinite(rows[k].q_cmd_rad[j]) && std::isfinite(rows[k].dq_cmd_rad_s[j]));
    }
    if (rows[k].time_s < e.time_s - 1e-9) {
      continue;
    }
    const double dv = std::abs(rows[k].dq_cmd_rad_s[2] - rows[k - 1].dq_cmd_rad_s[2]);
    if (rows[k].time_s > e.time_s + 1e-9) {
      EXPECT_LE(dv, 5.0 * 0.001 + 1e-9) << "at " << rows[k].time_s;
    } else {
      speed_at_failure = std::abs(rows[k - 1].dq_cmd_rad_s[2]);
    }
    if (rest_time < 0.0 && rows[k].dq_cmd_rad_s[2] == 0.0) {
      rest_time = rows[k].time_s;
    }
  }
  EXPECT_GT(speed_at_failure, 0.1);
  EXPECT_NEAR(rest_time - e.time_s, speed_at_failure / 5.0, 0.002);
  EXPECT_EQ(rows.back().mode, jtac::ControllerMode::kIdle);
  EXPECT_EQ(law.calls(), 1001U);  // not called after the failure
  // Back to the JTAC, then the law again with a set that does not fail: a new activation clears it.
  rig.loop->use_law(nullptr);
  rig.run(0.05);
  EXPECT_EQ(rig.snap().mode, jtac::ControllerMode::kIdle);
  ASSERT_EQ(law.set_params(std::vector<double>{0.2, 4.0, 2.0, 0.0}), "");
  rig.loop->use_law(&law);
  rig.run(0.05);
  EXPECT_FALSE(law.failed());
  EXPECT_EQ(rig.snap().mode, jtac::ControllerMode::kExecuting);
}

INSTANTIATE_TEST_SUITE_P(NanAndCode, CallbackLawFailure, ::testing::Values(1, 2));

TEST(CallbackLaw, RejectsABadConfigurationNamingTheField) {
  jtac::loop::CallbackLawConfig config = sine_law_config(0.1, 1.0, 0);
  config.function = nullptr;
  EXPECT_THROW(jtac::loop::CallbackLaw{config}, std::invalid_argument);
  config = sine_law_config(0.1, 1.0, 0);
  config.params = {0.1, std::nan("")};
  config.num_params = 2;
  try {
    jtac::loop::CallbackLaw law(config);
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("params[1] is nan"), std::string::npos) << e.what();
  }
  config = sine_law_config(0.1, 1.0, 0);
  config.stop_accelerations_rad_s2[4] = 0.0;
  try {
    jtac::loop::CallbackLaw law(config);
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fr3_joint5"), std::string::npos) << e.what();
  }
  config = sine_law_config(0.1, 1.0, 0);
  config.tcp_frame = "no_such_frame";
  EXPECT_THROW(jtac::loop::CallbackLaw{config}, std::invalid_argument);
}

// Real time: both threads run for a moment; asserts only that cycles ran and a snapshot came.
TEST(ControlLoop, RealTimeSmoke) {
  Rig rig(500, ClockMode::kRealTime);
  ASSERT_TRUE(rig.interface->start());
  ASSERT_TRUE(rig.loop->start());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  rig.loop->stop();
  rig.interface->stop();
  EXPECT_GT(rig.loop->timing().cycles, 0U);
  LoopSnapshot s;
  EXPECT_TRUE(rig.loop->snapshot(s));
  EXPECT_TRUE(s.valid);
  const auto t = rig.loop->timing();
  std::printf(
      "[ real time ] cycles %llu, stale %llu, overruns %llu, max cycle %.1f us, max interval %.1f us, "
      "largest command gap %llu packets\n",
      static_cast<unsigned long long>(t.cycles), static_cast<unsigned long long>(t.stale_states),
      static_cast<unsigned long long>(t.overruns), t.max_cycle_duration_us, t.max_interval_us,
      static_cast<unsigned long long>(t.largest_command_gap));
}

#else

TEST(ControlLoopNoAlloc, LockstepStepAllocatesNothingThroughAGoalWithRecording) {
  Rig rig(250, ClockMode::kLockstep, ControlLoopConfig{}.record_capacity, 2);  // tip 1 fed
  rig.run(0.05);
  const auto id = rig.submit(quintic(kDelta, 0.6));
  rig.loop->start_recording();
  rig.run(0.02);  // warm-up outside the counter (goal taken, first cycles)
  int failures = 0;
  LoopSnapshot s;
  const auto allocations = jtac::test::count_allocations([&] {
    for (int i = 0; i < 1200; ++i) {
      if (i % 4 == 0) {  // an external sensor's reading every controller cycle
        const double f = 0.001 * i;
        failures += rig.loop->jtac_law()->feed_wrench(1, {f, -f, 0.5 * f, 0.0, 0.0, 0.0}) ? 0 : 1;
      }
      failures += rig.loop->step() == jtac::hw::DeviceStatus::kOk ? 0 : 1;
      failures += rig.loop->snapshot(s) ? 0 : 1;
    }
  });
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(failures, 0);
  Event e;
  bool succeeded = false;
  while (rig.controller.poll_event(e)) {
    succeeded = succeeded || (e.type == EventType::kGoalSucceeded && e.goal_id == id);
  }
  EXPECT_TRUE(succeeded);
  EXPECT_EQ(rig.loop->dropped_records(), 0U);
}

// A group's peer brake (asked for, as a lockstep group does) mid-goal and the clock map read meanwhile:
// the brake, its result and the map allocate nothing.
TEST(ControlLoopNoAlloc, LockstepStepAllocatesNothingThroughAPeerBrake) {
  Rig rig(1000, ClockMode::kLockstep);
  rig.run(0.05);
  const auto id = rig.submit(quintic(kDelta, 0.6));
  rig.run(0.2);
  int failures = 0;
  double t_sum_s = 0.0;
  const auto allocations = jtac::test::count_allocations([&] {
    rig.loop->request_peer_brake();
    for (int i = 0; i < 600; ++i) {
      failures += rig.loop->step() == jtac::hw::DeviceStatus::kOk ? 0 : 1;
      t_sum_s += rig.loop->controller_time_at(jtac::loop::ClockMap::host_now_ns());
    }
  });
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(failures, 0);
  EXPECT_TRUE(std::isfinite(t_sum_s));
  EXPECT_EQ(rig.loop->peer_brakes(), 1U);
  Event e;
  bool peer_fault = false;
  while (rig.controller.poll_event(e)) {
    peer_fault = peer_fault || (e.goal_id == id && e.detail == jtac::EventDetail::kPeerFault);
  }
  EXPECT_TRUE(peer_fault);
}

// The stream law through chunks (with and without velocities, one stale), single targets and their
// switches: neither the writer side nor the controller cycle allocates.
TEST(ControlLoopNoAlloc, LockstepStepAllocatesNothingThroughChunksAndTargets) {
  Rig rig(1000);
  rig.run(0.05);
  jtac::loop::StreamLaw stream(0.001);
  rig.loop->use_law(&stream);
  rig.run(0.01);
  const JointArray q0 = rig.snap().q_rad;
  std::vector<double> times(16);
  std::vector<JointArray> q(16, q0);
  std::vector<JointArray> dq(16, JointArray{});
  int failures = 0;
  const auto allocations = jtac::test::count_allocations([&] {
    for (int i = 0; i < 1500; ++i) {
      const double now = rig.snap().time_s;
      if (i < 1000 && i % 100 == 0) {
        const double observed = now - (i == 500 ? 0.5 : 0.1);  // the sixth chunk is stale
        for (int k = 0; k < 16; ++k) {
          times[k] = observed + 0.02 * k;
          q[k][3] = q0[3] + 0.1 * std::sin(times[k]);
          dq[k][3] = 0.1 * std::cos(times[k]);
        }
        failures +=
            stream.set_chunk(times, q,
                             i % 200 == 0 ? std::span<const JointArray>(dq) : std::span<const JointArray>())
                ? 0
                : 1;
      } else if (i >= 1000 && i % 8 == 0) {
        JointArray target = q0;
        target[3] += 0.1 * std::sin(now);
        failures += stream.set_target(target, now) ? 0 : 1;
      }
      failures += rig.loop->step() == jtac::hw::DeviceStatus::kOk ? 0 : 1;
    }
  });
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(stream.chunks_taken(), 10U);
  EXPECT_EQ(stream.stale_chunks(), 1U);
  EXPECT_GT(stream.targets_taken(), 60U);
  rig.loop->use_law(nullptr);
  rig.run(0.01);
}

// A compliant stream (the JTAC controller's external-reference mode under the chunk stream): chunks,
// a push on the tool the admittance yields to, the switches in and out of the law — no allocation.
TEST(ControlLoopNoAlloc, LockstepStepAllocatesNothingThroughACompliantStream) {
  Rig rig(1000);
  rig.run(0.05);
  jtac::JtacGoal admittance;
  admittance.tips.resize(1);
  admittance.tips[0].mass.assign(6, 2.0);
  admittance.tips[0].stiffness.assign(6, 400.0);
  admittance.tips[0].damping.assign(6, 2.0 * std::sqrt(2.0 * 400.0));
  admittance.tips[0].selected_axes = {true, true, true, false, false, false};
  jtac::loop::StreamLaw stream(jtac::loop::ChunkStreamConfig{}, *rig.loop->jtac_law(), admittance);
  const JointArray q0 = rig.snap().q_rad;
  std::vector<double> times(16);
  std::vector<JointArray> q(16, q0);
  rig.device->push("fr3_tcp", {0.0, 10.0, 0.0, 0.0, 0.0, 0.0}, 0.8);  // allocates: before arming
  int failures = 0;
  double max_offset_rad = 0.0;
  const auto allocations = jtac::test::count_allocations([&] {
    rig.loop->use_law(&stream);
    for (int i = 0; i < 1500; ++i) {
      LoopSnapshot s;
      failures += rig.loop->snapshot(s) ? 0 : 1;
      if (i % 100 == 0) {  // chunks holding still, from an observation 50 ms old
        for (int k = 0; k < 16; ++k) {
          times[k] = s.time_s - 0.05 + 0.02 * k;
        }
        failures += stream.set_chunk(times, q, std::span<const JointArray>()) ? 0 : 1;
      }
      for (const double x : s.joint_offset_rad) {
        max_offset_rad = std::max(max_offset_rad, std::abs(x));
      }
      failures += rig.loop->step() == jtac::hw::DeviceStatus::kOk ? 0 : 1;
    }
    rig.loop->use_law(nullptr);
    for (int i = 0; i < 20; ++i) {
      failures += rig.loop->step() == jtac::hw::DeviceStatus::kOk ? 0 : 1;
    }
  });
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(stream.chunks_taken(), 15U);
  EXPECT_EQ(stream.stop_code(), jtac::ResultCode::kSuccessful);
  EXPECT_GT(max_offset_rad, 1e-3);  // the push moved the joints through the admittance
  EXPECT_FALSE(rig.controller.external_active());
}

// A callback law through its switch in, new parameters every 100 ms, a failure (the minimum-time stop
// and the error message) and the switch back: neither the writer side nor the cycle allocates.
TEST(ControlLoopNoAlloc, LockstepStepAllocatesNothingThroughACallbackLaw) {
  Rig rig(1000);
  rig.run(0.05);
  jtac::loop::CallbackLawConfig config = sine_law_config(0.1, 3.0, 3);
  config.name = "failing_sine";
  config.function = &failing_sine_law;
  config.num_params = 4;
  config.params.push_back(1.0);  // NaN 1 s after the start
  jtac::loop::CallbackLaw law(config);
  std::vector<double> params = config.params;
  int failures = 0;
  const auto allocations = jtac::test::count_allocations([&] {
    rig.loop->use_law(&law);
    for (int i = 0; i < 2000; ++i) {
      if (i % 100 == 50) {
        params[0] = 0.1 + 1e-4 * i;
        failures += law.set_params(params).empty() ? 0 : 1;
      }
      failures += rig.loop->step() == jtac::hw::DeviceStatus::kOk ? 0 : 1;
    }
    rig.loop->use_law(nullptr);
    for (int i = 0; i < 20; ++i) {
      failures += rig.loop->step() == jtac::hw::DeviceStatus::kOk ? 0 : 1;
    }
  });
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(failures, 0);
  EXPECT_TRUE(law.calls() > 900U && law.calls() < 1100U) << law.calls();
  EXPECT_GE(law.params_taken(), 9U);
  EXPECT_TRUE(law.failed());  // the failure (stop and message) ran under the counter too
}

#endif

}  // namespace
