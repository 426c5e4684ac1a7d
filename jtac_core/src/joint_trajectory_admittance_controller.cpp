// The composed controller (trajectory engine + F/T pipeline + admittance): configuration, parameters,
// goal intake with the goal's admittance staged under its id, tare requests and activation. The
// checks are in joint_trajectory_admittance_controller_validation.cpp, the cycle in
// joint_trajectory_admittance_controller_update.cpp.
#include "jtac_core/joint_trajectory_admittance_controller.hpp"

#include <cmath>
#include <stdexcept>

#include "message_text.hpp"

namespace jtac {

using detail::num;

void JointTrajectoryAdmittanceController::configure(const JtacConfig& config,
                                                    const JtacParameters& parameters) {
  if (std::string e = validate_force_torque(parameters); !e.empty()) {
    throw std::invalid_argument(e);
  }
  if (!(std::isfinite(config.update_rate_hz) && config.update_rate_hz > 0.0)) {
    throw std::invalid_argument("update_rate = " + num(config.update_rate_hz) +
                                " Hz: must be finite and > 0");
  }
  trajectory_.configure(config.trajectory, parameters.trajectory);
  has_sensor_ = config.has_force_torque_sensor;
  period_s_ = 1.0 / config.update_rate_hz;
  check_stability_ = config.check_admittance_stability;
  num_tips_ = static_cast<int>(config.tips.size());
  if (num_tips_ > kMaxTips) {
    throw std::invalid_argument("ee_frames: " + std::to_string(num_tips_) + " tips; at most " +
                                std::to_string(kMaxTips));
  }
  if (has_sensor_ && num_tips_ == 0) {
    throw std::invalid_argument("ft_sensor_name is set but no sensor_frames / ee_frames are configured");
  }
  ee_frame_names_.clear();
  sensor_frame_names_.clear();
  for (const auto& tip : config.tips) {
    ee_frame_names_.push_back(tip.ee_frame);
    sensor_frame_names_.push_back(tip.sensor_frame);
  }
  if (has_sensor_) {
    kinematics_.configure(config.urdf_xml, config.base_frame, config.trajectory.joint_names);
    const JointVector q_zero = JointVector::Zero(kinematics_.num_joints());
    for (int k = 0; k < num_tips_; ++k) {
      const auto i = static_cast<std::size_t>(k);
      sensor_frames_[i] = kinematics_.frame_index(config.tips[i].sensor_frame);
      ee_frames_[i] = kinematics_.frame_index(config.tips[i].ee_frame);
      // The sensor and the end effector sit on the same rigid link: their relative pose is fixed.
      Eigen::Isometry3d T_base_sensor;
      Eigen::Isometry3d T_base_ee;
      kinematics_.forward(q_zero, sensor_frames_[i], T_base_sensor);
      kinematics_.forward(q_zero, ee_frames_[i], T_base_ee);
      T_sensor_ee_[i] = T_base_sensor.inverse() * T_base_ee;
    }
    admittance_.configure(&kinematics_, ee_frames_, num_tips_);
  }
  for (auto& p : parameters_.buffers()) {
    p = parameters;
  }
  params_nonrt_ = parameters;
  params_ = parameters;
  for (auto& flag : tare_requested_) {
    flag.store(false);
  }
  previous_reference_rad_.setZero(static_cast<int>(config.trajectory.joint_names.size()));
  have_reference_ = false;
  last_goal_id_ = 0;
  if (staged_admittance_.peek() != nullptr) {
    staged_admittance_.decline();  // a reconfigure starts without the old goals (no thread runs yet)
  }
  apply_goal(nullptr);
  for (auto& pipeline : pipelines_) {
    pipeline = ForceTorquePipeline{};  // a reconfigure starts without the old tare or filter state
  }
  apply_force_torque_parameters();
  for (int k = 0; k < num_tips_; ++k) {
    pipelines_[static_cast<std::size_t>(k)].reset(Vector6::Zero());
  }
  goal_active_.store(false, std::memory_order_release);
  last_mode_ = ControllerMode::kInactive;
}

std::string JointTrajectoryAdmittanceController::set_parameters(const JtacParameters& parameters) {
  if (std::string e = validate_force_torque(parameters); !e.empty()) {
    return e;
  }
  if (std::string e = trajectory_.set_parameters(parameters.trajectory); !e.empty()) {
    return e;
  }
  params_nonrt_ = parameters;
  parameters_.write_buffer() = parameters;
  parameters_.publish();
  return "";
}

SubmitResult JointTrajectoryAdmittanceController::submit_goal(const JtacGoal& goal, double now_s) {
  AdmittanceGoal admittance;
  std::string warning;
  if (std::string e = validate_admittance(goal, admittance, warning); !e.empty()) {
    SubmitResult r;
    r.code = ResultCode::kInvalidGoal;
    r.message = std::move(e);
    return r;
  }
  // Staged before the engine publishes the trajectory, so the control thread never sees the goal
  // without its admittance; busy while the previous goal's set has not been taken or dropped.
  const auto stage = [&](std::uint64_t goal_id) {
    StagedAdmittance& staged = staged_admittance_.write_buffer();
    staged.goal_id = goal_id;
    staged.admittance = admittance;
    return staged_admittance_.publish();
  };
  SubmitResult r = trajectory_.submit_goal(goal.trajectory, now_s, stage);
  if (r.code == ResultCode::kSuccessful && !r.busy) {
    r.warning = std::move(warning);
  }
  return r;
}

std::string JointTrajectoryAdmittanceController::request_zero_fts(int tip) {
  if (!has_sensor_) {
    return "no force/torque sensor is configured (ft_sensor_name is empty)";
  }
  if (tip < 0 || tip >= num_tips_) {
    return "no sensor for tip " + std::to_string(tip);
  }
  if (goal_active_.load(std::memory_order_acquire)) {
    return "tare refused: a goal is executing; zero the sensor while the arm is idle and unloaded";
  }
  if (external_active_.load(std::memory_order_acquire)) {
    return "tare refused: a stream with admittance is open; zero the sensor before opening it, with the "
           "arm idle and unloaded";
  }
  if (!trajectory_.is_active()) {
    // Nobody would serve it: the loop runs another control law, or the controller is stopped.
    return "tare refused: the trajectory controller is not running (another control law holds the arm, "
           "or the controller is stopped); zero the sensor while it runs, with the arm idle and unloaded";
  }
  tare_requested_[static_cast<std::size_t>(tip)].store(true, std::memory_order_release);
  return "";
}

void JointTrajectoryAdmittanceController::deactivate(double time_s) noexcept {
  // A tare asked for or being collected will not complete: say so rather than leave it unanswered.
  for (int k = 0; k < num_tips_; ++k) {
    const auto i = static_cast<std::size_t>(k);
    const bool asked = tare_requested_[i].exchange(false, std::memory_order_acq_rel);
    const bool collecting = has_sensor_ && pipelines_[i].tare().collecting();
    if (asked || collecting) {
      if (collecting) {
        pipelines_[i].cancel_tare();
      }
      report_tare(k, EventType::kTareFailed, EventDetail::kDeactivated, 0.0, time_s);
    }
  }
  trajectory_.deactivate(time_s);
  (void)take_staged_admittance();  // the engine refuses a queued goal: its set goes too
  external_active_.store(false, std::memory_order_release);
  last_goal_id_ = 0;
  last_mode_ = ControllerMode::kInactive;
  goal_active_.store(false, std::memory_order_release);
}

void JointTrajectoryAdmittanceController::activate(const JointVector& command_position_rad) noexcept {
  trajectory_.activate(command_position_rad);
  (void)take_staged_admittance();  // a goal queued across a deactivation is refused
  on_activation();
}

void JointTrajectoryAdmittanceController::activate() noexcept {
  trajectory_.activate();
  (void)take_staged_admittance();
  on_activation();
}

void JointTrajectoryAdmittanceController::on_activation() noexcept {
  handover_stop_ = false;
  peer_stop_ = false;
  external_active_.store(false, std::memory_order_release);
  last_mode_ = ControllerMode::kIdle;
  if (has_sensor_) {
    admittance_.clear();
  }
  have_reference_ = false;
  last_goal_id_ = 0;
  apply_goal(nullptr);
}

void JointTrajectoryAdmittanceController::apply_goal(const AdmittanceGoal* goal) noexcept {
  if (goal != nullptr) {
    current_goal_ = *goal;
  } else {
    current_goal_ = AdmittanceGoal{};
    current_goal_.num_tips = num_tips_;
    for (auto& tip : current_goal_.tips) {
      tip.threshold = params_.default_absolute_force_torque_threshold;
    }
  }
  if (has_sensor_) {
    admittance_.reset(current_goal_);
  }
  apply_force_torque_parameters();
}

void JointTrajectoryAdmittanceController::apply_force_torque_parameters() noexcept {
  for (int k = 0; k < num_tips_; ++k) {
    const auto i = static_cast<std::size_t>(k);
    const TipAdmittance& tip = current_goal_.tips[i];
    ForceTorqueParameters p;
    p.cutoff_ratio = params_.ft_cutoff_frequency_ratio;
    p.force_deadband_N = params_.ft_force_deadband_N;
    p.torque_deadband_Nm = params_.ft_torque_deadband_Nm;
    p.threshold = tip.threshold;
    p.payload_mass_kg = tip.payload_mass_kg;
    p.payload_cog_ee_m = tip.payload_cog_ee_m;
    p.gravity_base_m_s2 = current_goal_.gravity_base_m_s2;
    p.T_sensor_ee = T_sensor_ee_[i];
    p.T_sensor_control = T_sensor_ee_[i] * tip.T_ee_control;
    pipelines_[i].configure(p);
  }
}

}  // namespace jtac
