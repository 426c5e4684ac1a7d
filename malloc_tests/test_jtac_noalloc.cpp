// The composed controller's real-time calls (update, activate, deactivate, request_cancel) allocate
// nothing after configure(), with a force/torque sensor, one tip on the FR3 and two tips on a
// dual-arm model (FR3 + Panda under one world link, 14 joints), over 10^5 cycles each.
//
// The counter is armed around those calls only; submit_goal, set_parameters, request_zero_fts and
// poll_event are the non-real-time side and run unarmed (a tare is requested unarmed, and the
// cycles that collect it run armed). Every round goes through: a tare while idle, admittance
// tracking with a varying push and a payload compensated for its weight, the Butterworth filter
// (ratio 0.05) and a deadband, a parameter change mid-motion (new cutoff and deadband), a tare
// refused while executing, a stitch with admittance, a force-threshold stop, a non-finite wrench
// stop, a cancel, and a deactivation while executing. The events drained after every cycle prove that
// each of those paths was really taken: a zero count over a path never taken proves nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "jtac_core/events.hpp"
#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "jtac_test_support.hpp"
#include "malloc_counter.hpp"

using jtac::ControllerMode;
using jtac::EventDetail;
using jtac::EventType;
using jtac::JointVector;
using jtac::ResultCode;
using jtac::UpdateStatus;
using jtac::Vector6;
using jtac::test::count_allocations;
using jtac::test::ScopedAllocationCount;

namespace {

constexpr double kPeriodS = 0.001;  // 1 kHz
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kGoalPoints = 200;
constexpr double kPayloadKg = 1.0;
const Eigen::Vector3d kPayloadCogEe(0.0, 0.01, 0.05);  // [m], ee frame
const Eigen::Vector3d kGravity(0.0, 0.0, -9.81);       // [m/s²], base frame
constexpr double kCutoffRatio = 0.05;                  // 50 Hz at 1 kHz
constexpr double kForceDeadbandN = 0.5;
constexpr double kTorqueDeadbandNm = 0.05;

// ------------------------------------------------------------------------------------ robots

/// One robot model with its tips, start pose and swing amplitudes.
struct Setup {
  std::string urdf;
  std::string base_frame;
  std::vector<std::string> joints;
  std::vector<jtac::TipFrames> tips;
  JointVector q_start_rad;
  JointVector amplitude_rad;  // of the swing goals
};

Setup fr3_setup() {
  Setup s;
  s.urdf = jtac::test::read_text_file(JTAC_FR3_URDF);
  s.base_frame = "fr3_link0";
  s.joints = jtac::test::arm_joint_names("fr3");
  s.tips = {{"fr3_ft_sensor", "fr3_ee"}};
  s.q_start_rad.resize(7);
  s.q_start_rad << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785;
  s.amplitude_rad.resize(7);
  s.amplitude_rad << 0.3, -0.25, 0.2, -0.3, 0.3, 0.25, 0.4;
  return s;
}

// The FR3 and the Panda descriptions under one world link (as in jtac_core/test/test_admittance.cpp).
Setup dual_arm_setup() {
  Setup s;
  s.urdf = jtac::test::dual_arm_urdf(JTAC_FR3_URDF, JTAC_PANDA_URDF);
  s.base_frame = "world";
  s.joints = jtac::test::arm_joint_names("fr3");
  for (const auto& name : jtac::test::arm_joint_names("panda")) {
    s.joints.push_back(name);
  }
  s.tips = {{"fr3_ft_sensor", "fr3_ee"}, {"panda_ft_sensor", "panda_ee"}};
  s.q_start_rad.resize(14);
  s.q_start_rad << 0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.3, -0.5, 0.0, -2.0, 0.0, 1.6, 0.785;
  s.amplitude_rad.resize(14);
  s.amplitude_rad << 0.3, -0.25, 0.2, -0.3, 0.3, 0.25, 0.4, -0.2, 0.25, -0.3, 0.3, 0.2, -0.25, 0.3;
  return s;
}

jtac::JtacParameters parameters(int n, double cutoff_ratio, double force_deadband_N,
                                double torque_deadband_Nm) {
  jtac::JtacParameters p;
  p.trajectory.stop_accelerations_rad_s2 = JointVector::Constant(n, 3.0);
  p.trajectory.default_path_tolerance_rad = JointVector::Constant(n, 0.5);
  p.trajectory.default_goal_tolerance_rad = JointVector::Constant(n, 0.05);
  p.ft_cutoff_frequency_ratio = cutoff_ratio;
  p.ft_force_deadband_N = force_deadband_N;
  p.ft_torque_deadband_Nm = torque_deadband_Nm;
  p.gravity_base_m_s2 = kGravity;
  p.zero_fts_num_samples = 20;
  return p;
}

// ------------------------------------------------------------------------------------ goals

void append_point(jtac::TrajectoryGoal& goal, double t_s, const JointVector& q, const JointVector& v,
                  const JointVector& a) {
  jtac::GoalPoint point;
  point.time_from_start_s = t_s;
  point.positions_rad.assign(q.data(), q.data() + q.size());
  point.velocities_rad_s.assign(v.data(), v.data() + v.size());
  point.accelerations_rad_s2.assign(a.data(), a.data() + a.size());
  goal.points.push_back(std::move(point));
}

// Rest-to-rest swing q = q0 + scale·A·sin²(π t / D) over [t0_s, t0_s + duration_s] (quintic).
void append_swing(jtac::TrajectoryGoal& goal, const JointVector& q0, const JointVector& amplitude,
                  double t0_s, double duration_s, int points, double scale) {
  const double w = std::numbers::pi / duration_s;
  const auto n = q0.size();
  for (int i = 0; i < points; ++i) {
    const double t = duration_s * i / (points - 1);
    JointVector q(n), v(n), a(n);
    for (Eigen::Index j = 0; j < n; ++j) {
      const double amp = scale * amplitude[j];
      q[j] = q0[j] + amp * std::sin(w * t) * std::sin(w * t);
      v[j] = amp * w * std::sin(2.0 * w * t);
      a[j] = 2.0 * amp * w * w * std::cos(2.0 * w * t);
    }
    append_point(goal, t0_s + t, q, v, a);
  }
}

// A goal planned from the moving reference (stitching), as in test_trajectory_controller_noalloc.cpp.
jtac::TrajectoryGoal stitch_trajectory(const std::vector<std::string>& joints,
                                       const jtac::JointTrajectoryState& ref, const JointVector& amplitude,
                                       double duration_s) {
  constexpr double kBlendS = 0.3;
  jtac::TrajectoryGoal goal;
  goal.joint_names = joints;
  append_point(goal, 0.0, ref.position_rad, ref.velocity_rad_s, ref.acceleration_rad_s2);
  const JointVector q1 = ref.position_rad + ref.velocity_rad_s * (0.5 * kBlendS);
  append_swing(goal, q1, amplitude, kBlendS, duration_s - kBlendS, kGoalPoints - 1, -0.5);
  return goal;
}

// ------------------------------------------------------------------------------------ harness

struct ExpectedEvent {
  EventType type;
  EventDetail detail;
  ResultCode code;
  std::uint64_t goal_id;
  int joint = -2;  // -2: any
};

std::string to_text(const jtac::Event& e, const std::vector<std::string>& joints) {
  return "{type " + std::to_string(static_cast<int>(e.type)) + ", detail " +
         std::to_string(static_cast<int>(e.detail)) + ", code " + std::string(jtac::to_string(e.code)) +
         ", goal " + std::to_string(e.goal_id) + ", joint " + std::to_string(e.joint) + ": " +
         jtac::describe(e, joints) + "}";
}

std::string to_text(const ExpectedEvent& e) {
  return "{type " + std::to_string(static_cast<int>(e.type)) + ", detail " +
         std::to_string(static_cast<int>(e.detail)) + ", code " + std::string(jtac::to_string(e.code)) +
         ", goal " + std::to_string(e.goal_id) + ", joint " + std::to_string(e.joint) + "}";
}

// One composed controller on a perfect arm (measured = last command) with a simulated sensor per
// tip: bias + payload weight (once attached) + a push, in sensor axes.
class Harness {
 public:
  explicit Harness(Setup setup) : setup_(std::move(setup)) {
    n_ = static_cast<int>(setup_.joints.size());
    num_tips_ = static_cast<int>(setup_.tips.size());
    jtac::JtacConfig config;
    config.trajectory.joint_names = setup_.joints;
    config.trajectory.max_trajectory_points = kGoalPoints;
    config.urdf_xml = setup_.urdf;
    config.base_frame = setup_.base_frame;
    config.tips = setup_.tips;
    config.has_force_torque_sensor = true;
    params_ = parameters(n_, kCutoffRatio, kForceDeadbandN, kTorqueDeadbandNm);
    controller_.configure(config, params_);
    kin_.configure(setup_.urdf, setup_.base_frame, setup_.joints);
    for (int k = 0; k < num_tips_; ++k) {
      const auto i = static_cast<std::size_t>(k);
      sensor_frames_[i] = kin_.frame_index(setup_.tips[i].sensor_frame);
      const int ee = kin_.frame_index(setup_.tips[i].ee_frame);
      Eigen::Isometry3d T_base_sensor, T_base_ee;
      kin_.forward(setup_.q_start_rad, sensor_frames_[i], T_base_sensor);
      kin_.forward(setup_.q_start_rad, ee, T_base_ee);
      T_sensor_ee_[i] = T_base_sensor.inverse() * T_base_ee;
      bias_[i] << 2.0 + k, -1.5, 4.0, 0.1, -0.2, 0.05;
      spike_[i].setZero();
    }
    q_ = setup_.q_start_rad;
    v_.setZero(n_);
  }

  // ---- real-time calls (armed)
  void activate() {
    allocations_ += count_allocations([&] { controller_.activate(); });
  }
  void deactivate() {
    allocations_ += count_allocations([&] { controller_.deactivate(time_s_); });
  }
  void cancel(std::uint64_t goal_id) {
    allocations_ += count_allocations([&] { controller_.request_cancel(goal_id); });
  }

  // The sensor of tip k at the measured pose [N, N·m], sensor axes.
  Vector6 reading(int k) const {
    const auto i = static_cast<std::size_t>(k);
    Vector6 w = bias_[i];
    if (payload_attached_) {
      Eigen::Isometry3d T_base_sensor;
      kin_.forward(q_, sensor_frames_[i], T_base_sensor);
      const Eigen::Vector3d weight = T_base_sensor.linear().transpose() * (kPayloadKg * kGravity);
      w.head<3>() += weight;
      w.tail<3>() += (T_sensor_ee_[i] * kPayloadCogEe).cross(weight);
    }
    const double t = time_s_;
    Vector6 push;
    push << std::sin(2.0 * std::numbers::pi * 0.7 * t + k), 0.6 * std::cos(2.0 * std::numbers::pi * 1.1 * t),
        0.8 * std::sin(2.0 * std::numbers::pi * 0.5 * t + 1.0),
        0.05 * std::sin(2.0 * std::numbers::pi * 0.9 * t), 0.03 * std::cos(2.0 * std::numbers::pi * 0.3 * t),
        0.0;
    return w + push_amplitude_N_ * push + spike_[i];
  }

  // One control cycle: readings → update() (armed) → the arm follows the command; events drained.
  void cycle() {
    time_s_ += kPeriodS;
    for (int k = 0; k < num_tips_; ++k) {
      wrenches_[static_cast<std::size_t>(k)] = reading(k);
    }
    if (nan_tip_ >= 0) {
      wrenches_[static_cast<std::size_t>(nan_tip_)][nan_axis_] = kNaN;
      nan_tip_ = -1;  // one cycle
    }
    UpdateStatus status = UpdateStatus::kOk;
    {
      ScopedAllocationCount armed;
      status = controller_.update(time_s_, kPeriodS, q_, v_, wrenches_, out_);
      allocations_ += armed.allocations();
    }
    ++cycles_;
    ++status_cycles_[static_cast<std::size_t>(status)];
    ++mode_cycles_[static_cast<std::size_t>(out_.trajectory.mode)];
    const auto& c = out_.trajectory.command;
    if (c.position_rad.size() != n_ || !c.position_rad.allFinite() || !c.velocity_rad_s.allFinite()) {
      ++bad_commands_;
    }
    if (out_.trajectory.mode == ControllerMode::kExecuting) {
      max_offset_rad_ = std::max(max_offset_rad_, out_.joint_offset_rad.cwiseAbs().maxCoeff());
      for (int k = 0; k < num_tips_; ++k) {
        const double w = out_.wrench_control[static_cast<std::size_t>(k)].cwiseAbs().maxCoeff();
        max_wrench_control_ = std::max(max_wrench_control_, w);
        if (quiet_) {
          max_quiet_wrench_control_ = std::max(max_quiet_wrench_control_, w);
        }
      }
    }
    q_ = c.position_rad;  // a perfect arm
    v_ = c.velocity_rad_s;
    jtac::Event e;
    while (controller_.poll_event(e)) {
      events_.push_back(e);
      all_events_.push_back(e);
    }
  }

  void run(int cycles) {
    for (int i = 0; i < cycles; ++i) {
      cycle();
    }
  }

  bool run_until(const std::function<bool()>& done, int max_cycles) {
    for (int i = 0; i < max_cycles; ++i) {
      cycle();
      if (done()) {
        return true;
      }
    }
    return false;
  }

  ControllerMode mode() const { return out_.trajectory.mode; }

  // ---- non-real-time calls (not armed)
  std::uint64_t submit(const jtac::JtacGoal& goal) {
    const jtac::SubmitResult r = controller_.submit_goal(goal, time_s_);
    EXPECT_EQ(r.code, ResultCode::kSuccessful) << r.message;
    EXPECT_FALSE(r.busy) << r.message;
    return r.goal_id;
  }

  void set_force_torque(double cutoff_ratio, double force_deadband_N, double torque_deadband_Nm) {
    params_ = parameters(n_, cutoff_ratio, force_deadband_N, torque_deadband_Nm);
    EXPECT_EQ(controller_.set_parameters(params_), "");
  }

  // Every tip compliant along x, y, z (tip 1's control frame yawed 30° in its ee frame), carrying
  // the payload when `payload`.
  jtac::JtacGoal compliant(jtac::TrajectoryGoal trajectory, bool payload,
                           std::vector<double> threshold = {}) const {
    jtac::JtacGoal goal;
    goal.trajectory = std::move(trajectory);
    goal.absolute_force_torque_threshold = std::move(threshold);
    goal.joint_damping_per_s = 0.5;
    for (int k = 0; k < num_tips_; ++k) {
      jtac::TipGoal tip;
      tip.mass.assign(6, 3.0);
      tip.stiffness.assign(6, 600.0);
      tip.damping.assign(6, 2.0 * std::sqrt(3.0 * 600.0));
      tip.selected_axes = {true, true, true, false, false, false};
      if (k == 1) {
        tip.T_ee_control = Eigen::AngleAxisd(std::numbers::pi / 6.0, Eigen::Vector3d::UnitZ());
      }
      if (payload) {
        tip.end_effector_mass_kg = kPayloadKg;
        tip.end_effector_cog_m = {kPayloadCogEe.x(), kPayloadCogEe.y(), kPayloadCogEe.z()};
      }
      goal.tips.push_back(std::move(tip));
    }
    return goal;
  }

  jtac::TrajectoryGoal swing(double duration_s) const {
    jtac::TrajectoryGoal goal;
    goal.joint_names = setup_.joints;
    append_swing(goal, out_.trajectory.reference.position_rad, setup_.amplitude_rad, 0.0, duration_s,
                 kGoalPoints, 1.0);
    return goal;
  }

  // Back to the start pose from wherever a stop left the arm (quintic, rest to rest), so that the
  // rounds do not wander towards the joint limits and singular configurations.
  jtac::TrajectoryGoal home(double duration_s) const {
    jtac::TrajectoryGoal goal;
    goal.joint_names = setup_.joints;
    const JointVector q0 = out_.trajectory.reference.position_rad;
    // q = q0 + A·sin²(π t / 2D): from q0 at rest to q0 + A at rest.
    const double w = 0.5 * std::numbers::pi / duration_s;
    const JointVector a = setup_.q_start_rad - q0;
    for (int i = 0; i < kGoalPoints / 2; ++i) {
      const double t = duration_s * i / (kGoalPoints / 2 - 1);
      append_point(goal, t, q0 + a * std::sin(w * t) * std::sin(w * t), a * (w * std::sin(2.0 * w * t)),
                   a * (2.0 * w * w * std::cos(2.0 * w * t)));
    }
    return goal;
  }

  jtac::TrajectoryGoal stitch(double duration_s) const {
    return stitch_trajectory(setup_.joints, out_.trajectory.reference, setup_.amplitude_rad, duration_s);
  }

  // The events since the last call must be exactly `expected`, in order.
  void expect_events(const std::vector<ExpectedEvent>& expected, const std::string& what) {
    std::string seen;
    for (const auto& e : events_) {
      seen += "\n  " + to_text(e, setup_.joints);
    }
    std::string wanted;
    for (const auto& e : expected) {
      wanted += "\n  " + to_text(e);
    }
    bool same = events_.size() == expected.size();
    for (std::size_t i = 0; same && i < expected.size(); ++i) {
      const auto& a = events_[i];
      const auto& b = expected[i];
      same = a.type == b.type && a.detail == b.detail && a.code == b.code && a.goal_id == b.goal_id &&
             (b.joint == -2 || a.joint == b.joint);
    }
    EXPECT_TRUE(same) << what << ": events seen:" << seen << "\nexpected:" << wanted;
    events_.clear();
  }

  Setup setup_;
  int n_ = 0;
  int num_tips_ = 0;
  jtac::JointTrajectoryAdmittanceController controller_;
  jtac::JtacParameters params_;
  jtac::JtacOutput out_;
  jtac::Kinematics kin_;  // the simulated sensor's own kinematics (not armed)
  std::array<int, jtac::kMaxTips> sensor_frames_{};
  std::array<Eigen::Isometry3d, jtac::kMaxTips> T_sensor_ee_{};
  std::array<Vector6, jtac::kMaxTips> bias_{};
  std::array<Vector6, jtac::kMaxTips> spike_{};
  jtac::TipWrenches wrenches_{};
  JointVector q_;
  JointVector v_;
  bool payload_attached_ = false;
  double push_amplitude_N_ = 0.0;
  int nan_tip_ = -1;
  int nan_axis_ = 0;
  bool quiet_ = false;  // no push, payload attached: the compensated wrench must be deadbanded to 0
  double time_s_ = 100.0;

  std::int64_t allocations_ = 0;
  std::int64_t cycles_ = 0;
  std::int64_t bad_commands_ = 0;
  std::array<std::int64_t, 6> mode_cycles_{};
  std::array<std::int64_t, 4> status_cycles_{};
  double max_offset_rad_ = 0.0;
  double max_wrench_control_ = 0.0;
  double max_quiet_wrench_control_ = 0.0;
  std::vector<jtac::Event> events_;
  std::vector<jtac::Event> all_events_;
};

// One round through every path (~13,000 cycles).
void run_round(Harness& h) {
  constexpr int kLong = 20000;
  const auto idle = [&] { return h.mode() == ControllerMode::kIdle; };
  const int last_tip = h.num_tips_ - 1;
  const auto go_home = [&](const std::string& after, bool payload) {
    const std::uint64_t id = h.submit(h.compliant(h.home(1.5), payload));
    EXPECT_TRUE(h.run_until(idle, kLong));
    h.expect_events({{EventType::kGoalStarted, EventDetail::kNone, ResultCode::kSuccessful, id},
                     {EventType::kGoalSucceeded, EventDetail::kNone, ResultCode::kSuccessful, id}},
                    "home after " + after);
  };

  // ---- idle, unloaded: tare every sensor (requested unarmed, collected in armed cycles)
  h.payload_attached_ = false;
  h.push_amplitude_N_ = 0.0;
  h.run(100);
  h.expect_events({}, "idle");
  for (int k = 0; k < h.num_tips_; ++k) {
    EXPECT_EQ(h.controller_.request_zero_fts(k), "");
  }
  h.run(h.params_.zero_fts_num_samples + 5);
  std::vector<ExpectedEvent> tared;
  for (int k = 0; k < h.num_tips_; ++k) {
    tared.push_back({EventType::kTareSucceeded, EventDetail::kNone, ResultCode::kSuccessful, 0, k});
  }
  h.expect_events(tared, "tare while idle");
  h.run(50);
  for (int k = 0; k < h.num_tips_; ++k) {  // the bias is gone
    EXPECT_LT(h.out_.wrench_filtered_sensor[static_cast<std::size_t>(k)].norm(), 1e-9) << "tip " << k;
  }

  // ---- the tool is picked up; admittance tracking with a varying push, a tare refused while
  // executing, a new cutoff and deadband mid-motion, then the push ends and the arm returns
  h.payload_attached_ = true;
  h.run(100);
  const std::uint64_t g1 = h.submit(h.compliant(h.swing(2.0), true));
  h.push_amplitude_N_ = 8.0;
  h.run(500);
  EXPECT_EQ(h.controller_.request_zero_fts(0),
            "tare refused: a goal is executing; zero the sensor while the arm is idle and unloaded");
  h.run(400);
  h.set_force_torque(0.1, 1.0, 0.1);
  h.run(300);
  h.push_amplitude_N_ = 0.0;
  h.run(400);
  h.quiet_ = true;
  EXPECT_TRUE(h.run_until(idle, kLong));
  h.quiet_ = false;
  h.expect_events({{EventType::kGoalStarted, EventDetail::kNone, ResultCode::kSuccessful, g1},
                   {EventType::kGoalSucceeded, EventDetail::kNone, ResultCode::kSuccessful, g1}},
                  "admittance tracking with a payload");

  // ---- stitching with admittance (same payload on both goals)
  const std::uint64_t g2 = h.submit(h.compliant(h.swing(4.0), true));
  h.push_amplitude_N_ = 6.0;
  h.run(1000);
  const std::uint64_t g3 = h.submit(h.compliant(h.stitch(3.0), true));
  h.run(1500);
  h.push_amplitude_N_ = 0.0;
  EXPECT_TRUE(h.run_until(idle, kLong));
  h.expect_events({{EventType::kGoalStarted, EventDetail::kNone, ResultCode::kSuccessful, g2},
                   {EventType::kGoalAborted, EventDetail::kReplacedByStitching,
                    ResultCode::kGoalAbortedDueToStitching, g2},
                   {EventType::kGoalStarted, EventDetail::kNone, ResultCode::kSuccessful, g3},
                   {EventType::kGoalSucceeded, EventDetail::kNone, ResultCode::kSuccessful, g3}},
                  "stitch with admittance");
  go_home("the stitch", true);

  // ---- a force-threshold stop: 40 N along z of the last tip's sensor, threshold 25 N
  const std::uint64_t g4 = h.submit(h.compliant(h.swing(2.0), true, {25, 25, 25, 5, 5, 5}));
  h.push_amplitude_N_ = 4.0;
  h.run(500);
  h.spike_[static_cast<std::size_t>(last_tip)][2] = 40.0;
  EXPECT_TRUE(h.run_until([&] { return h.mode() == ControllerMode::kStopping; }, 50));
  EXPECT_TRUE(h.run_until(idle, kLong));
  h.spike_[static_cast<std::size_t>(last_tip)].setZero();
  h.push_amplitude_N_ = 0.0;
  h.run(100);
  h.expect_events({{EventType::kGoalStarted, EventDetail::kNone, ResultCode::kSuccessful, g4},
                   {EventType::kStopStarted, EventDetail::kForceTorqueThreshold,
                    ResultCode::kForceTorqueThresholdExceeded, g4, 6 * last_tip + 2},
                   {EventType::kGoalAborted, EventDetail::kForceTorqueThreshold,
                    ResultCode::kForceTorqueThresholdExceeded, g4, 6 * last_tip + 2}},
                  "force-threshold stop");
  go_home("the threshold stop", true);

  // ---- a non-finite wrench (tip 0, Ty, one cycle)
  const std::uint64_t g5 = h.submit(h.compliant(h.swing(2.0), true));
  h.push_amplitude_N_ = 4.0;
  h.run(500);
  h.nan_tip_ = 0;
  h.nan_axis_ = 4;
  h.cycle();
  EXPECT_EQ(h.mode(), ControllerMode::kStopping);
  EXPECT_TRUE(h.run_until(idle, kLong));
  h.push_amplitude_N_ = 0.0;
  h.run(100);
  h.expect_events(
      {{EventType::kGoalStarted, EventDetail::kNone, ResultCode::kSuccessful, g5},
       {EventType::kStopStarted, EventDetail::kNonFiniteWrench, ResultCode::kAdmittanceError, g5, 4},
       {EventType::kGoalAborted, EventDetail::kNonFiniteWrench, ResultCode::kAdmittanceError, g5, 4}},
      "non-finite wrench stop");
  go_home("the non-finite wrench", true);

  // ---- a cancel (armed) while pushed
  const std::uint64_t g6 = h.submit(h.compliant(h.swing(2.0), true));
  h.push_amplitude_N_ = 5.0;
  h.run(500);
  h.cancel(g6);
  EXPECT_TRUE(h.run_until(idle, kLong));
  h.push_amplitude_N_ = 0.0;
  h.run(100);
  h.expect_events({{EventType::kGoalStarted, EventDetail::kNone, ResultCode::kSuccessful, g6},
                   {EventType::kStopStarted, EventDetail::kCanceled, ResultCode::kSuccessful, g6},
                   {EventType::kGoalCanceled, EventDetail::kCanceled, ResultCode::kSuccessful, g6}},
                  "cancel");
  go_home("the cancel", true);

  // ---- deactivation while executing (armed), re-activation; the parameters go back
  const std::uint64_t g7 = h.submit(h.compliant(h.swing(2.0), true));
  h.push_amplitude_N_ = 5.0;
  h.run(500);
  h.deactivate();
  h.run(50);
  EXPECT_EQ(h.mode(), ControllerMode::kInactive);
  h.push_amplitude_N_ = 0.0;
  h.activate();
  h.set_force_torque(kCutoffRatio, kForceDeadbandN, kTorqueDeadbandNm);
  h.run(200);
  EXPECT_EQ(h.mode(), ControllerMode::kIdle);
  h.expect_events({{EventType::kGoalStarted, EventDetail::kNone, ResultCode::kSuccessful, g7},
                   {EventType::kGoalAborted, EventDetail::kDeactivated, ResultCode::kInvalidState, g7}},
                  "deactivation while executing");
  go_home("the deactivation", false);
}

void run_hundred_thousand_cycles(Setup setup) {
  Harness h(std::move(setup));
  h.activate();
  int rounds = 0;
  while (h.cycles_ < 100000) {
    ++rounds;
    run_round(h);
    if (::testing::Test::HasFailure()) {
      break;
    }
  }
  EXPECT_EQ(h.allocations_, 0) << "allocations in " << h.cycles_ << " update() cycles and their "
                               << "activate/deactivate/request_cancel calls";
  EXPECT_GE(h.cycles_, 100000);
  EXPECT_EQ(h.bad_commands_, 0);
  for (const auto mode : {ControllerMode::kInactive, ControllerMode::kIdle, ControllerMode::kExecuting,
                          ControllerMode::kStopping}) {
    EXPECT_GT(h.mode_cycles_[static_cast<std::size_t>(mode)], 0) << "mode " << static_cast<int>(mode);
  }
  EXPECT_EQ(h.status_cycles_[static_cast<std::size_t>(UpdateStatus::kHoldingCommand)], 0);
  EXPECT_EQ(h.status_cycles_[static_cast<std::size_t>(UpdateStatus::kBadInput)], 0);
  EXPECT_EQ(h.controller_.trajectory().dropped_events(), 0U);
  // The admittance really moved the joints, the push really reached the admittance, and with the
  // payload attached and no push the compensated wrench was inside the deadband (exactly zero).
  EXPECT_GT(h.max_offset_rad_, 5e-3);
  EXPECT_GT(h.max_wrench_control_, 3.0);
  EXPECT_EQ(h.max_quiet_wrench_control_, 0.0);
  int kinds = 0;
  for (const auto detail :
       {EventDetail::kForceTorqueThreshold, EventDetail::kNonFiniteWrench, EventDetail::kReplacedByStitching,
        EventDetail::kCanceled, EventDetail::kDeactivated}) {
    bool seen = false;
    for (const auto& e : h.all_events_) {
      seen = seen || e.detail == detail;
    }
    EXPECT_TRUE(seen) << "event detail " << static_cast<int>(detail) << " never happened";
    kinds += seen ? 1 : 0;
  }
  std::int64_t tares = 0;
  for (const auto& e : h.all_events_) {
    tares += e.type == EventType::kTareSucceeded ? 1 : 0;
  }
  EXPECT_EQ(tares, static_cast<std::int64_t>(rounds) * h.num_tips_);
  std::printf(
      "%d tips, %d joints: %d rounds, %lld cycles, %lld allocations, %zu events (%d kinds of stop, %lld "
      "tares), "
      "max joint offset %.4f rad, max control wrench %.2f; cycles inactive %lld, idle %lld, executing %lld, "
      "stopping %lld\n",
      h.num_tips_, h.n_, rounds, static_cast<long long>(h.cycles_), static_cast<long long>(h.allocations_),
      h.all_events_.size(), kinds, static_cast<long long>(tares), h.max_offset_rad_, h.max_wrench_control_,
      static_cast<long long>(h.mode_cycles_[0]), static_cast<long long>(h.mode_cycles_[1]),
      static_cast<long long>(h.mode_cycles_[3]), static_cast<long long>(h.mode_cycles_[5]));
}

// ------------------------------------------------------------------------------------ tests

TEST(JtacNoAlloc, FirstCallsAfterConfigureAllocateNothing) {
  Harness h(fr3_setup());
  EXPECT_EQ(count_allocations([&] { h.controller_.activate(); }), 0);
  jtac::JtacOutput out;  // default-constructed: the first update sizes it
  UpdateStatus status = UpdateStatus::kBadInput;
  for (int k = 0; k < h.num_tips_; ++k) {
    h.wrenches_[static_cast<std::size_t>(k)] = h.reading(k);
  }
  EXPECT_EQ(
      count_allocations([&] { status = h.controller_.update(1.0, kPeriodS, h.q_, h.v_, h.wrenches_, out); }),
      0);
  EXPECT_EQ(status, UpdateStatus::kOk);
  h.out_ = out;
  const jtac::SubmitResult r = h.controller_.submit_goal(h.compliant(h.swing(2.0), true), 1.0);
  ASSERT_EQ(r.code, ResultCode::kSuccessful) << r.message;
  EXPECT_EQ(count_allocations(
                [&] { status = h.controller_.update(1.001, kPeriodS, h.q_, h.v_, h.wrenches_, out); }),
            0);
  EXPECT_EQ(out.trajectory.mode, ControllerMode::kExecuting);
  EXPECT_EQ(count_allocations(
                [&] { status = h.controller_.update(1.002, kPeriodS, h.q_, h.v_, h.wrenches_, out); }),
            0);  // the first admittance step
  EXPECT_EQ(count_allocations([&] { h.controller_.request_cancel(r.goal_id); }), 0);
  EXPECT_EQ(count_allocations(
                [&] { status = h.controller_.update(1.003, kPeriodS, h.q_, h.v_, h.wrenches_, out); }),
            0);
  EXPECT_EQ(count_allocations([&] { h.controller_.deactivate(1.004); }), 0);
  EXPECT_EQ(count_allocations(
                [&] { status = h.controller_.update(1.004, kPeriodS, h.q_, h.v_, h.wrenches_, out); }),
            0);
  EXPECT_EQ(status, UpdateStatus::kInactive);
  // Positive control: the non-real-time side allocates (a rejection message), and the counter sees it.
  EXPECT_GT(count_allocations([&] { (void)h.controller_.request_zero_fts(7); }), 0);
}

TEST(JtacNoAlloc, OneTipOverHundredThousandCyclesAllocatesNothing) {
  run_hundred_thousand_cycles(fr3_setup());
}

TEST(JtacNoAlloc, TwoTipsOnADualArmOverHundredThousandCyclesAllocateNothing) {
  run_hundred_thousand_cycles(dual_arm_setup());
}

// The external-reference mode (a streamed reference in place of the trajectory engine): switching
// into it, cycles that follow a moving reference under a varying push with the payload compensated,
// cycles that do not track (the offset frozen), a threshold stop latched while the push goes on, a
// non-finite reading after it, and the switch back to goal mode — every real-time call armed.
void run_external_reference(Setup setup) {
  Harness h(std::move(setup));
  h.activate();
  h.run(50);
  h.payload_attached_ = true;
  jtac::JtacGoal admittance = h.compliant(jtac::TrajectoryGoal{}, true, {25, 25, 25, 5, 5, 5});
  jtac::AdmittanceGoal prepared;
  std::string warning;
  ASSERT_EQ(h.controller_.prepare_admittance(admittance, prepared, warning), "");
  const JointVector q0 = h.q_;
  jtac::JointTrajectoryState reference;
  reference.set_zero(h.n_);
  reference.position_rad = q0;
  std::int64_t allocations = count_allocations([&] {
    h.controller_.deactivate(h.time_s_);
    h.controller_.activate_external(q0, prepared);
  });
  const int last_tip = h.num_tips_ - 1;
  double max_offset_rad = 0.0;
  std::int64_t stopped_cycles = 0;
  const double w = 2.0 * std::numbers::pi / 4.0;  // one swing in 4 s [rad/s]
  for (int i = 0; i < 20000; ++i) {
    h.time_s_ += kPeriodS;
    const double s = 0.001 * i;
    for (int j = 0; j < h.n_; ++j) {
      const double a = 0.5 * h.setup_.amplitude_rad[j];
      reference.position_rad[j] = q0[j] + a * std::sin(w * s) * std::sin(w * s);
      reference.velocity_rad_s[j] = a * w * std::sin(2.0 * w * s);
      reference.acceleration_rad_s2[j] = 2.0 * a * w * w * std::cos(2.0 * w * s);
    }
    h.push_amplitude_N_ = i < 14000 ? 6.0 : 0.0;
    if (i == 12000) {
      h.spike_[static_cast<std::size_t>(last_tip)][2] = 40.0;  // over the 25 N threshold
    }
    if (i == 13000) {
      h.spike_[static_cast<std::size_t>(last_tip)].setZero();
      h.nan_tip_ = 0;
      h.nan_axis_ = 4;
    }
    for (int k = 0; k < h.num_tips_; ++k) {
      h.wrenches_[static_cast<std::size_t>(k)] = h.reading(k);
    }
    if (h.nan_tip_ >= 0) {
      h.wrenches_[static_cast<std::size_t>(h.nan_tip_)][h.nan_axis_] = kNaN;
      h.nan_tip_ = -1;
    }
    const bool tracking = i < 8000 || i >= 9000;  // a second of a reference at rest in between
    UpdateStatus status = UpdateStatus::kOk;
    allocations += count_allocations([&] {
      status =
          h.controller_.update_external(h.time_s_, kPeriodS, h.q_, reference, h.wrenches_, tracking, h.out_);
    });
    EXPECT_EQ(status, UpdateStatus::kOk);
    h.q_ = h.out_.trajectory.command.position_rad;
    h.v_ = h.out_.trajectory.command.velocity_rad_s;
    max_offset_rad = std::max(max_offset_rad, h.out_.joint_offset_rad.cwiseAbs().maxCoeff());
    stopped_cycles += h.out_.external_stop != ResultCode::kSuccessful ? 1 : 0;
    jtac::Event e;
    while (h.controller_.poll_event(e)) {
      h.events_.push_back(e);
    }
  }
  h.expect_events({{EventType::kGoalAborted, EventDetail::kForceTorqueThreshold,
                    ResultCode::kForceTorqueThresholdExceeded, 0, 6 * last_tip + 2}},
                  "threshold stop of the external reference");
  allocations += count_allocations([&] {
    h.controller_.deactivate(h.time_s_);
    h.controller_.activate(h.q_);
  });
  h.run(100);
  EXPECT_EQ(h.mode(), ControllerMode::kIdle);
  EXPECT_EQ(allocations + h.allocations_, 0);
  EXPECT_GT(max_offset_rad, 1e-3);
  // Latched from the spike (a few cycles later: the Butterworth at ratio 0.05) to the end.
  EXPECT_GT(stopped_cycles, 7990);
  EXPECT_LE(stopped_cycles, 8000);
  std::printf("%d tips, external reference: 20000 cycles, %lld allocations, max joint offset %.4f rad\n",
              h.num_tips_, static_cast<long long>(allocations), max_offset_rad);
}

TEST(JtacNoAlloc, TheExternalReferenceModeAllocatesNothing) {
  run_external_reference(fr3_setup());
  run_external_reference(dual_arm_setup());
}

// ------------------------------------------------------------------------------------ regressions
//
// The composed controller used to read "the previous cycle's mode" from the caller's output struct:
// a caller that passes a fresh JtacOutput every cycle (a local variable in its loop) never got any
// compliance. It now keeps that state itself.
TEST(JtacRegression, AFreshOutputEveryCycleStillGetsTheAdmittance) {
  Harness h(fr3_setup());
  h.activate();
  h.run(10);
  jtac::TrajectoryGoal hold;
  hold.joint_names = h.setup_.joints;
  const JointVector q0 = h.out_.trajectory.reference.position_rad;
  append_point(hold, 3.0, q0, JointVector::Zero(h.n_), JointVector::Zero(h.n_));
  ASSERT_EQ(h.controller_.submit_goal(h.compliant(hold, false), h.time_s_).code, ResultCode::kSuccessful);
  JointVector q = h.q_;
  JointVector v = h.v_;
  jtac::TipWrenches wrenches{};
  wrenches[0] << 10.0, 0.0, 0.0, 0.0, 0.0, 0.0;
  double max_offset = 0.0;
  for (int i = 0; i < 2000; ++i) {
    jtac::JtacOutput out;  // a fresh output every cycle
    h.controller_.update(h.time_s_ + kPeriodS * (i + 1), kPeriodS, q, v, wrenches, out);
    q = out.trajectory.command.position_rad;
    v = out.trajectory.command.velocity_rad_s;
    max_offset = std::max(max_offset, out.joint_offset_rad.cwiseAbs().maxCoeff());
  }
  EXPECT_GT(max_offset, 1e-3) << "a 10 N push on a 600 N/m tip moved no joint: the admittance never stepped";
}

}  // namespace
