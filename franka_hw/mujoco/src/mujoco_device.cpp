// The simulated Franka arm on MuJoCo's C API. Design and semantics: franka_hw/mujoco_device.hpp.
#include "franka_hw/mujoco_device.hpp"
#include "jtac_rt/numeric.hpp"

#include <mujoco/mujoco.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace jtac::hw {
namespace {

using jtac::all_finite;

constexpr double kInf = std::numeric_limits<double>::infinity();

// MuJoCo warnings that mean the simulation diverged: a huge or non-finite control (MuJoCo zeroes it
// for the step) or state (MuJoCo then resets mjData itself).
int divergence_warnings(const mjData* d) noexcept {
  return d->warning[mjWARN_BADCTRL].number + d->warning[mjWARN_BADQACC].number +
         d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number;
}

std::string joint_name(const std::string& prefix, int index) {
  return prefix + "_joint" + std::to_string(index + 1);
}

}  // namespace

MujocoDevice::MujocoDevice(const MujocoDeviceConfig& config) { configure(config); }

MujocoDevice::~MujocoDevice() { release(); }

void MujocoDevice::release() noexcept {
  hand_actuator_ = -1;
  if (data_ != nullptr) {
    mj_deleteData(data_);
    data_ = nullptr;
  }
  if (model_ != nullptr) {
    mj_deleteModel(model_);
    model_ = nullptr;
  }
}

void MujocoDevice::configure(const MujocoDeviceConfig& config) {
  release();
  if (!all_finite(config.q_init_rad)) {
    throw std::invalid_argument("MujocoDevice: q_init_rad must be finite");
  }
  for (int j = 0; j < kNumJoints; ++j) {
    if (!(std::isfinite(config.stiffness_Nm_rad[j]) && config.stiffness_Nm_rad[j] >= 0.0 &&
          std::isfinite(config.damping_Nm_s_rad[j]) && config.damping_Nm_s_rad[j] >= 0.0)) {
      throw std::invalid_argument("MujocoDevice: stiffness and damping must be finite and >= 0");
    }
  }

  char error[1024] = "";
  mjSpec* spec = mj_parseXMLString(config.mjcf_xml.c_str(), nullptr, error, sizeof(error));
  if (spec == nullptr) {
    throw std::runtime_error(std::string("MujocoDevice: MJCF does not parse: ") + error);
  }
  mjModel* model = mj_compile(spec, nullptr);
  if (model == nullptr) {
    std::string message = std::string("MujocoDevice: MJCF does not compile: ") + mjs_getError(spec);
    mj_deleteSpec(spec);
    throw std::runtime_error(message);
  }
  mj_deleteSpec(spec);
  model_ = model;
  data_ = mj_makeData(model_);
  if (data_ == nullptr) {
    release();
    throw std::runtime_error("MujocoDevice: mj_makeData failed (out of memory?)");
  }

  try {
    const mjModel* m = model_;
    if (!(m->opt.timestep > 0.0)) {
      throw std::runtime_error("MujocoDevice: the model's timestep must be > 0");
    }
    period_s_ = m->opt.timestep;
    period_ns_ = std::llround(period_s_ * 1e9);
    if (m->opt.integrator == mjINT_RK4) {
      throw std::runtime_error("MujocoDevice: the RK4 integrator cannot be stepped in two parts");
    }
    for (int j = 0; j < kNumJoints; ++j) {
      const std::string name = joint_name(config.name_prefix, j);
      const int joint = mj_name2id(m, mjOBJ_JOINT, name.c_str());
      if (joint < 0 || m->jnt_type[joint] != mjJNT_HINGE) {
        throw std::runtime_error("MujocoDevice: the model has no hinge joint '" + name + "'");
      }
      const int act = mj_name2id(m, mjOBJ_ACTUATOR, name.c_str());
      if (act < 0 || m->actuator_trntype[act] != mjTRN_JOINT || m->actuator_trnid[2 * act] != joint ||
          m->actuator_dyntype[act] != mjDYN_NONE || m->actuator_gaintype[act] != mjGAIN_FIXED ||
          m->actuator_biastype[act] != mjBIAS_NONE) {
        throw std::runtime_error("MujocoDevice: the model has no motor actuator '" + name +
                                 "' on the joint of that name");
      }
      // Generalized force of a motor = gear · gain · ctrl.
      const double gain = m->actuator_gear[6 * act] * m->actuator_gainprm[mjNGAIN * act];
      if (!(std::abs(gain) > 0.0)) {
        throw std::runtime_error("MujocoDevice: actuator '" + name + "' has zero gear or gain");
      }
      double lo = -kInf;
      double hi = kInf;
      if (m->actuator_ctrllimited[act]) {
        lo = std::min(gain * m->actuator_ctrlrange[2 * act], gain * m->actuator_ctrlrange[2 * act + 1]);
        hi = std::max(gain * m->actuator_ctrlrange[2 * act], gain * m->actuator_ctrlrange[2 * act + 1]);
      }
      if (m->actuator_forcelimited[act]) {
        const double gear = m->actuator_gear[6 * act];
        const double f_lo =
            std::min(gear * m->actuator_forcerange[2 * act], gear * m->actuator_forcerange[2 * act + 1]);
        const double f_hi =
            std::max(gear * m->actuator_forcerange[2 * act], gear * m->actuator_forcerange[2 * act + 1]);
        lo = std::max(lo, f_lo);
        hi = std::min(hi, f_hi);
      }
      qpos_adr_[j] = m->jnt_qposadr[joint];
      dof_adr_[j] = m->jnt_dofadr[joint];
      actuator_[j] = act;
      torque_per_ctrl_[j] = gain;
      tau_min_Nm_[j] = lo;
      tau_max_Nm_[j] = hi;
    }
    const std::string force_name = config.name_prefix + "_ft_force";
    const std::string torque_name = config.name_prefix + "_ft_torque";
    const int force = mj_name2id(m, mjOBJ_SENSOR, force_name.c_str());
    const int torque = mj_name2id(m, mjOBJ_SENSOR, torque_name.c_str());
    if ((force < 0) != (torque < 0)) {
      throw std::runtime_error("MujocoDevice: the model has only one of the sensors '" + force_name + "', '" +
                               torque_name + "'");
    }
    force_sensor_adr_ = -1;
    torque_sensor_adr_ = -1;
    if (force >= 0) {
      if (m->sensor_type[force] != mjSENS_FORCE || m->sensor_type[torque] != mjSENS_TORQUE ||
          m->sensor_objid[force] != m->sensor_objid[torque]) {
        throw std::runtime_error("MujocoDevice: '" + force_name + "' and '" + torque_name +
                                 "' must be a force and a torque sensor on one site");
      }
      force_sensor_adr_ = m->sensor_adr[force];
      torque_sensor_adr_ = m->sensor_adr[torque];
    }
    find_hand(config.name_prefix);
    stiffness_Nm_rad_ = config.stiffness_Nm_rad;
    damping_Nm_s_rad_ = config.damping_Nm_s_rad;
    clock_ = config.clock;
    qfrc_ext_.assign(static_cast<std::size_t>(m->nv), 0.0);
  } catch (...) {
    release();
    throw;
  }
  reset(config.q_init_rad);
}

void MujocoDevice::reset_counters() noexcept {
  tick_ = 0;
  ticks_missed_by_reader_ = 0;
  ticks_without_new_command_ = 0;
  clock_started_ = false;
  clock_zero_ns_ = 0;
  pending_ = false;
  pending_from_tick_ = 0;
  motion_finished_written_ = false;
  fault_ticks_requested_.store(0, std::memory_order_relaxed);
  fault_ticks_left_ = 0;
}

void MujocoDevice::reset(const JointArray& q_rad) {
  if (model_ == nullptr) {
    throw std::logic_error("MujocoDevice::reset: not configured");
  }
  if (!all_finite(q_rad)) {
    throw std::invalid_argument("MujocoDevice::reset: q_rad must be finite");
  }
  mj_resetData(model_, data_);  // also every free body (the grasp object) back to its model pose
  for (int j = 0; j < kNumJoints; ++j) {
    data_->qpos[qpos_adr_[j]] = q_rad[j];
  }
  if (has_hand()) {  // open
    data_->qpos[finger_qpos_adr_[0]] = 0.5 * kHandMaxWidthM;
    data_->qpos[finger_qpos_adr_[1]] = 0.5 * kHandMaxWidthM;
    hand_.reset(kHandMaxWidthM);
  }
  mj_forward(model_, data_);  // kinematics and bias at q_rad for the first tick
  bad_qacc_warnings_ = divergence_warnings(data_);

  reset_counters();
  command_in_force_ = DeviceCommand{};
  command_in_force_.q_d_rad = q_rad;
  command_pending_ = command_in_force_;
  ddq_d_rad_s2_.fill(0.0);
  tau_applied_Nm_.fill(0.0);
  tau_ext_Nm_.fill(0.0);
  std::fill(qfrc_ext_.begin(), qfrc_ext_.end(), 0.0);
  {
    std::lock_guard<std::mutex> lock(push_mutex_);
    num_pending_pushes_ = 0;
    pushes_waiting_.store(false, std::memory_order_relaxed);
    num_active_ = 0;
    pushes_in_force_.store(0, std::memory_order_relaxed);
    pushes_dropped_.store(0, std::memory_order_relaxed);
  }
}

std::int64_t MujocoDevice::now_ns() const noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

DeviceStatus MujocoDevice::write_once(const DeviceCommand& command) noexcept {
  if (model_ == nullptr) {
    return DeviceStatus::kNotConfigured;
  }
  if (motion_finished_written_) {
    return DeviceStatus::kMotionFinished;
  }
  if (!all_finite(command.q_d_rad) || !all_finite(command.dq_d_rad_s)) {
    return DeviceStatus::kInvalidCommand;
  }
  std::uint64_t from_tick = tick_ + 1;
  if (clock_ == ClockMode::kRealTime && clock_started_) {
    // A command that arrives after its tick was due applies from the next tick due after arrival.
    const std::int64_t now = now_ns();
    const std::int64_t due = clock_zero_ns_ + static_cast<std::int64_t>(tick_ + 1) * period_ns_;
    if (now > due) {
      from_tick = static_cast<std::uint64_t>((now - clock_zero_ns_) / period_ns_) + 1;
    }
  }
  command_pending_ = command;
  pending_ = true;
  pending_from_tick_ = from_tick;
  motion_finished_written_ = command.motion_finished;
  return DeviceStatus::kOk;
}

DeviceStatus MujocoDevice::read_once(DeviceState& state) noexcept {
  if (model_ == nullptr) {
    return DeviceStatus::kNotConfigured;
  }
  if (faulted_.load(std::memory_order_acquire)) {
    hold_for_fault();
    fill_state(state);
    return DeviceStatus::kDeviceError;
  }
  std::uint64_t steps = 1;
  if (clock_ == ClockMode::kRealTime) {
    std::int64_t now = now_ns();
    if (!clock_started_) {
      clock_zero_ns_ = now - static_cast<std::int64_t>(tick_ + 1) * period_ns_;  // next tick due now
      clock_started_ = true;
    }
    const std::int64_t due = clock_zero_ns_ + static_cast<std::int64_t>(tick_ + 1) * period_ns_;
    if (now < due) {
      timespec ts{};
      ts.tv_sec = static_cast<time_t>(due / 1'000'000'000);
      ts.tv_nsec = static_cast<long>(due % 1'000'000'000);
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
      }
      now = std::max(now_ns(), due);
    }
    const auto ticks_due = static_cast<std::uint64_t>((now - clock_zero_ns_) / period_ns_);
    steps = ticks_due > tick_ ? ticks_due - tick_ : 1;
    ticks_missed_by_reader_ += steps - 1;
  }
  for (std::uint64_t i = 0; i < steps; ++i) {
    step_one_tick();
  }
  fill_state(state);
  const int warnings = divergence_warnings(data_);
  if (warnings != bad_qacc_warnings_) {
    bad_qacc_warnings_ = warnings;
    return DeviceStatus::kDeviceError;
  }
  return DeviceStatus::kOk;
}

void MujocoDevice::step_one_tick() noexcept {
  const std::uint64_t tick = tick_ + 1;
  const JointArray dq_d_before = command_in_force_.dq_d_rad_s;
  if (pending_ && tick >= pending_from_tick_) {
    command_in_force_ = command_pending_;
    pending_ = false;
  } else {
    ++ticks_without_new_command_;
  }
  for (int j = 0; j < kNumJoints; ++j) {  // the echo's backward difference, as Franka reports ddq_d
    ddq_d_rad_s2_[j] = (command_in_force_.dq_d_rad_s[j] - dq_d_before[j]) / period_s_;
  }
  take_pending_pushes();
  apply_pushes();
  if (const std::int64_t requested = fault_ticks_requested_.exchange(0, std::memory_order_acq_rel);
      requested > 0) {
    fault_value_ = fault_value_requested_.load(std::memory_order_acquire);
    fault_ticks_left_ = requested;
  } else if (fault_ticks_left_ > 0) {
    --fault_ticks_left_;
  }

  // The robot's joint impedance, from the state at the start of the tick (mj_step1 computed the
  // kinematics and qfrc_bias there).
  const mjModel* m = model_;
  mjData* d = data_;
  for (int j = 0; j < kNumJoints; ++j) {
    const double q = d->qpos[qpos_adr_[j]];
    const double dq = d->qvel[dof_adr_[j]];
    double tau = stiffness_Nm_rad_[j] * (command_in_force_.q_d_rad[j] - q) +
                 damping_Nm_s_rad_[j] * (command_in_force_.dq_d_rad_s[j] - dq) + d->qfrc_bias[dof_adr_[j]];
    tau = std::clamp(tau, tau_min_Nm_[j], tau_max_Nm_[j]);
    tau_applied_Nm_[j] = tau;
    d->ctrl[actuator_[j]] = tau / torque_per_ctrl_[j];
  }
  step_hand();
  mj_step2(m, d);

  // Expire pushes; order is kept so that sums stay bit-identical from run to run.
  int kept = 0;
  for (int i = 0; i < num_active_; ++i) {
    if (--active_[i].ticks_left > 0) {
      active_[kept++] = active_[i];
    } else {
      pushes_in_force_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  num_active_ = kept;

  mj_step1(m, d);
  tick_ = tick;
}

void MujocoDevice::take_pending_pushes() noexcept {
  if (!pushes_waiting_.load(std::memory_order_acquire)) {
    return;
  }
  std::unique_lock<std::mutex> lock(push_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) {
    return;  // push() is writing: take them at the next tick
  }
  for (int i = 0; i < num_pending_pushes_; ++i) {
    if (num_active_ < kMaxPushes) {
      active_[num_active_++] = pending_pushes_[i];
    } else {
      pushes_dropped_.fetch_add(1, std::memory_order_relaxed);
      pushes_in_force_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  num_pending_pushes_ = 0;
  pushes_waiting_.store(false, std::memory_order_relaxed);
}

void MujocoDevice::apply_pushes() noexcept {
  const mjModel* m = model_;
  mjData* d = data_;
  std::fill(d->xfrc_applied, d->xfrc_applied + 6 * m->nbody, 0.0);
  if (num_active_ == 0) {
    tau_ext_Nm_.fill(0.0);
    return;
  }
  std::fill(qfrc_ext_.begin(), qfrc_ext_.end(), 0.0);
  for (int i = 0; i < num_active_; ++i) {
    const Push& p = active_[i];
    const double* point = p.site >= 0 ? d->site_xpos + 3 * p.site : d->xpos + 3 * p.body;
    const double* com = d->xipos + 3 * p.body;
    const double* force = p.wrench_world.data();
    const double* torque = p.wrench_world.data() + 3;
    // Moment of the force about the centre of mass: (p_point − p_com) × F.
    const double r[3] = {point[0] - com[0], point[1] - com[1], point[2] - com[2]};
    double* xfrc = d->xfrc_applied + 6 * p.body;
    xfrc[0] += force[0];
    xfrc[1] += force[1];
    xfrc[2] += force[2];
    xfrc[3] += torque[0] + r[1] * force[2] - r[2] * force[1];
    xfrc[4] += torque[1] + r[2] * force[0] - r[0] * force[2];
    xfrc[5] += torque[2] + r[0] * force[1] - r[1] * force[0];
    mj_applyFT(m, d, force, torque, point, p.body, qfrc_ext_.data());
  }
  for (int j = 0; j < kNumJoints; ++j) {
    tau_ext_Nm_[j] = qfrc_ext_[static_cast<std::size_t>(dof_adr_[j])];
  }
}

void MujocoDevice::hold_for_fault() noexcept {
  for (int j = 0; j < kNumJoints; ++j) {
    data_->qvel[dof_adr_[j]] = 0.0;
    command_in_force_.q_d_rad[j] = data_->qpos[qpos_adr_[j]];
    command_in_force_.dq_d_rad_s[j] = 0.0;
    ddq_d_rad_s2_[j] = 0.0;
  }
  pending_ = false;
  clock_started_ = false;
}

void MujocoDevice::fill_state(DeviceState& state) const noexcept {
  const mjData* d = data_;
  state.tick = tick_;
  state.time_s = static_cast<double>(tick_) * period_s_;
  state.ticks_missed_by_reader = ticks_missed_by_reader_;
  state.ticks_without_new_command = ticks_without_new_command_;
  for (int j = 0; j < kNumJoints; ++j) {
    state.q_rad[j] = d->qpos[qpos_adr_[j]];
    state.dq_rad_s[j] = d->qvel[dof_adr_[j]];
  }
  state.q_d_rad = command_in_force_.q_d_rad;
  state.dq_d_rad_s = command_in_force_.dq_d_rad_s;
  state.ddq_d_rad_s2 = ddq_d_rad_s2_;
  state.tau_J_Nm = tau_applied_Nm_;
  state.tau_ext_Nm = tau_ext_Nm_;
  state.has_wrench = force_sensor_adr_ >= 0;
  if (state.has_wrench) {
    // MuJoCo gives the wrench the flange side exerts on the subtree beyond the sensor; the sensor
    // convention is the wrench the tool side exerts on the sensor: the negative.
    for (int i = 0; i < 3; ++i) {
      state.wrench_sensor_N_Nm[i] = -d->sensordata[force_sensor_adr_ + i];
      state.wrench_sensor_N_Nm[3 + i] = -d->sensordata[torque_sensor_adr_ + i];
    }
    if (fault_ticks_left_ > 0) {
      state.wrench_sensor_N_Nm.fill(fault_value_);
    }
  } else {
    state.wrench_sensor_N_Nm.fill(0.0);
  }
  state.motion_finished = command_in_force_.motion_finished;
}

void MujocoDevice::inject_sensor_fault(double value, double duration_s) {
  if (model_ == nullptr) {
    throw std::logic_error("MujocoDevice::inject_sensor_fault: not configured");
  }
  if (force_sensor_adr_ < 0) {
    throw std::logic_error("MujocoDevice::inject_sensor_fault: the model has no force/torque sensor");
  }
  if (!std::isfinite(duration_s) || !(duration_s > 0.0)) {
    throw std::invalid_argument("MujocoDevice::inject_sensor_fault: duration_s must be finite and > 0, got " +
                                std::to_string(duration_s));
  }
  const auto ticks = std::max<std::int64_t>(1, std::llround(duration_s / period_s_));
  fault_value_requested_.store(value, std::memory_order_release);
  fault_ticks_requested_.store(ticks, std::memory_order_release);
}

void MujocoDevice::find_hand(const std::string& prefix) {
  const mjModel* m = model_;
  hand_actuator_ = -1;
  const std::string finger_names[2] = {prefix + "_finger_joint1", prefix + "_finger_joint2"};
  const std::string actuator_name = prefix + "_hand";
  const int fingers[2] = {mj_name2id(m, mjOBJ_JOINT, finger_names[0].c_str()),
                          mj_name2id(m, mjOBJ_JOINT, finger_names[1].c_str())};
  const int act = mj_name2id(m, mjOBJ_ACTUATOR, actuator_name.c_str());
  if (fingers[0] < 0 && fingers[1] < 0 && act < 0) {
    return;  // no hand
  }
  for (int i = 0; i < 2; ++i) {
    if (fingers[i] < 0 || m->jnt_type[fingers[i]] != mjJNT_SLIDE) {
      throw std::runtime_error("MujocoDevice: the hand's finger joint '" + finger_names[i] +
                               "' is missing or not a slide joint");
    }
    finger_qpos_adr_[static_cast<std::size_t>(i)] = m->jnt_qposadr[fingers[i]];
    finger_dof_adr_[static_cast<std::size_t>(i)] = m->jnt_dofadr[fingers[i]];
  }
  if (act < 0 || m->actuator_dyntype[act] != mjDYN_NONE || m->actuator_gaintype[act] != mjGAIN_FIXED ||
      m->actuator_biastype[act] != mjBIAS_NONE) {
    throw std::runtime_error("MujocoDevice: the model has finger joints but no motor actuator '" +
                             actuator_name + "'");
  }
  hand_force_per_ctrl_N_ = m->actuator_gear[6 * act] * m->actuator_gainprm[mjNGAIN * act];
  if (!(std::abs(hand_force_per_ctrl_N_) > 0.0)) {
    throw std::runtime_error("MujocoDevice: actuator '" + actuator_name + "' has zero gear or gain");
  }
  hand_actuator_ = act;
}

// The hand's controller on the width at the tick's start (the state of tick_), its force for the step.
void MujocoDevice::step_hand() noexcept {
  if (hand_actuator_ < 0) {
    return;
  }
  const mjData* d = data_;
  const double width_m = d->qpos[finger_qpos_adr_[0]] + d->qpos[finger_qpos_adr_[1]];
  const double width_velocity_m_s = d->qvel[finger_dof_adr_[0]] + d->qvel[finger_dof_adr_[1]];
  const double force_N = hand_.update(width_m, width_velocity_m_s, period_s_, tick_);
  data_->ctrl[hand_actuator_] = force_N / hand_force_per_ctrl_N_;
}

std::uint64_t MujocoDevice::hand_command(const HandCommand& command) {
  if (model_ == nullptr) {
    throw std::logic_error("MujocoDevice::hand_command: not configured");
  }
  if (!has_hand()) {
    throw std::logic_error("MujocoDevice::hand_command: the model has no hand");
  }
  return hand_.command(command);
}

HandState MujocoDevice::hand_state() const noexcept {
  if (!has_hand()) {
    HandState none;
    none.width_m = std::numeric_limits<double>::quiet_NaN();
    none.width_velocity_m_s = std::numeric_limits<double>::quiet_NaN();
    return none;
  }
  return hand_.state();
}

int MujocoDevice::find_frame(const std::string& frame, int& site) const {
  site = mj_name2id(model_, mjOBJ_SITE, frame.c_str());
  if (site >= 0) {
    return model_->site_bodyid[site];
  }
  const int body = mj_name2id(model_, mjOBJ_BODY, frame.c_str());
  if (body < 0) {
    throw std::invalid_argument("MujocoDevice: no site or body named '" + frame + "'");
  }
  return body;
}

void MujocoDevice::push(const std::string& frame, const WrenchArray& wrench_world_N_Nm, double duration_s) {
  if (model_ == nullptr) {
    throw std::logic_error("MujocoDevice::push: not configured");
  }
  if (!all_finite(wrench_world_N_Nm)) {
    throw std::invalid_argument("MujocoDevice::push: the wrench must be finite");
  }
  if (!(std::isfinite(duration_s) && duration_s > 0.0)) {
    throw std::invalid_argument("MujocoDevice::push: duration_s must be finite and > 0");
  }
  Push p;
  p.body = find_frame(frame, p.site);
  p.wrench_world = wrench_world_N_Nm;
  p.ticks_left = std::max<std::int64_t>(1, std::llround(duration_s / period_s_));
  std::lock_guard<std::mutex> lock(push_mutex_);
  if (num_pending_pushes_ >= kMaxPushes) {
    throw std::length_error("MujocoDevice::push: too many pushes waiting for the next tick");
  }
  pending_pushes_[num_pending_pushes_++] = p;
  pushes_in_force_.fetch_add(1, std::memory_order_relaxed);
  pushes_waiting_.store(true, std::memory_order_release);
}

int MujocoDevice::pushes_active() const noexcept { return pushes_in_force_.load(std::memory_order_relaxed); }

std::uint64_t MujocoDevice::pushes_dropped() const noexcept {
  return pushes_dropped_.load(std::memory_order_relaxed);
}

void MujocoDevice::frame_pose(const std::string& frame, double p_world_m[3], double R_world_frame[9]) const {
  if (model_ == nullptr) {
    throw std::logic_error("MujocoDevice::frame_pose: not configured");
  }
  int site = -1;
  const int body = find_frame(frame, site);
  const double* p = site >= 0 ? data_->site_xpos + 3 * site : data_->xpos + 3 * body;
  const double* R = site >= 0 ? data_->site_xmat + 9 * site : data_->xmat + 9 * body;
  std::copy(p, p + 3, p_world_m);
  std::copy(R, R + 9, R_world_frame);
}

}  // namespace jtac::hw
