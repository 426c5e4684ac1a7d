// Generated from params/jtac_parameters.yaml by `python -m jtac_py.parameters --write`: do not edit.
// Change the schema and regenerate; `make lint` fails while this file is stale.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace jtac {

namespace params_detail {

inline constexpr const char* kFiniteDetail = "doubles must be finite (no NaN or Inf)";

/// A double as Python's repr() writes it: shortest round-trip digits, fixed notation for decimal
/// exponents in [-4, 16), else scientific with a two-digit exponent (the Python side's messages).
inline std::string repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  std::array<char, 64> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x, std::chars_format::scientific);
  std::string sci(buf.data(), end);
  const bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  const auto e_pos = sci.find('e');
  const int exponent = std::stoi(sci.substr(e_pos + 1));
  std::string digits = sci.substr(0, e_pos);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out = digits + std::string(static_cast<std::size_t>(exponent + 1) - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<std::size_t>(exponent) + 1) + "." +
            digits.substr(static_cast<std::size_t>(exponent) + 1);
    }
  } else {
    const int magnitude = std::abs(exponent);
    out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
          (exponent < 0 ? "-" : "+") + (magnitude < 10 ? "0" : "") + std::to_string(magnitude);
  }
  return negative ? "-" + out : out;
}
inline std::string repr(std::int64_t x) { return std::to_string(x); }
inline std::string repr(bool x) { return x ? "True" : "False"; }
/// A string as Python's repr() writes it (single quotes unless it holds one and no double quote).
inline std::string repr(const std::string& s) {
  const char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    if (c == '\\' || c == quote) out += '\\';
    out += c;
  }
  return out + quote;
}
template <class T>
std::string repr(const std::vector<T>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + repr(static_cast<T>(v[i]));
  return out + "]";
}

/// "parameter 'name'[index] = value violates rule: detail", as the Python side words it.
inline std::string violation(const std::string& name, const std::string& value, const std::string& rule,
                             const std::string& detail, std::ptrdiff_t index = -1) {
  const std::string where =
      "parameter '" + name + "'" + (index >= 0 ? "[" + std::to_string(index) + "]" : std::string());
  return where + " = " + value + " violates " + rule + ": " + detail;
}

template <class T, class Bad>
std::ptrdiff_t first_index(const std::vector<T>& v, Bad bad) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (bad(static_cast<T>(v[i]))) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}
template <class T>
std::ptrdiff_t first_repeat(const std::vector<T>& v) {
  for (std::size_t i = 1; i < v.size(); ++i) {
    const auto end = v.begin() + static_cast<std::ptrdiff_t>(i);
    if (std::find(v.begin(), end, v[i]) != end) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}
/// " (has n)": the size a size rule found.
template <class C>
std::string has(const C& c) {
  return " (has " + std::to_string(c.size()) + ")";
}
template <class T>
bool one_of(const T& x, std::initializer_list<T> allowed) {
  return std::find(allowed.begin(), allowed.end(), x) != allowed.end();
}
template <class T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace params_detail

/// jtac's parameters under the schema's names, types and defaults (params/jtac_parameters.yaml;
/// docs/parameters.md). Configure-time data, never touched by a real-time thread: fill it,
/// validate() it, then map it onto the core's structures (params_mapping.hpp).
struct Params {
  /// Names of the controlled joints, as in the robot model. Their order is the order of every
  /// per-joint array (stop_accelerations, the state topic); a goal may list the same joints in any
  /// order.
  std::vector<std::string> joints = {"fr3_joint1", "fr3_joint2", "fr3_joint3", "fr3_joint4",
                                     "fr3_joint5", "fr3_joint6", "fr3_joint7"};
  /// MoveIt planning group this controller serves, reported to clients; empty = none. The joint
  /// list always comes from `joints`.
  std::string planning_group_name = "";
  /// Root of the controlled kinematic chain (the arm's base link). Jacobians, the admittance state
  /// and gravity_vector are expressed in the robot model's root frame, which this frame is fixed
  /// to.
  std::string base_frame = "fr3_link0";
  /// Measurement frame of each tip's force/torque sensor, one per tip, in tip order. The sensed
  /// wrench is expressed in it, and the service `~/zero_fts/<sensor_frame>` tares that sensor. Must
  /// not be empty when ft_sensor_name is set.
  std::vector<std::string> sensor_frames = {"fr3_ft_sensor"};
  /// End-effector frame of each tip, in the order of sensor_frames. A goal gives the payload's
  /// centre of gravity (end_effector_cog) in it, and the control frame's pose relative to it.
  std::vector<std::string> ee_frames = {"fr3_ee"};
  /// Force/torque sensor in the hardware interface for a single-tip setup; with several tips it
  /// serves every tip whose `ft_sensors.<sensor_frame>.name` is empty. Empty everywhere = no
  /// admittance: the controller is a plain joint trajectory controller and F/T thresholds are not
  /// checked. A tip whose sensor is the arm's own (simulated: `<robot>_ft`; Franka:
  /// `<robot>_estimated_wrench`; tip 0 when no tip names it) reads the arm's reading; any other
  /// sensor is external, its readings arriving on `~/wrench/<sensor_frame>/input` (Python:
  /// `Controller.feed_wrench`).
  std::string ft_sensor_name = "";
  /// The schema's `ft_sensors` group.
  struct FtSensors {
    /// One entry per element of `sensor_frames`, keyed by it (schema: `__map_sensor_frames`); an element
    /// without an entry takes the defaults.
    struct MapSensorFrames {
      /// Force/torque sensor in the hardware interface that measures the wrench in this sensor
      /// frame; empty = ft_sensor_name. Needed only when several tips have their own sensors; a
      /// name other than the arm's own sensor makes it external (readings on
      /// `~/wrench/<sensor_frame>/input`).
      std::string name = "";
    };
    std::map<std::string, MapSensorFrames> sensor_frames_map;
  } ft_sensors;
  /// Joints without a physical travel limit, a subset of joints. Their start, path and goal
  /// tolerances and the published position error use the shortest angular difference. Declare a
  /// joint here only if it has no travel limit: modulo feedback cannot establish an absolute turn
  /// count.
  std::vector<std::string> continuous_joints = {};
  /// Rate of the controller thread [Hz]. The hardware thread runs at 1000 Hz and rate-matches a
  /// slower controller, so the controller period is a whole number of hardware periods.
  std::int64_t update_rate = 1000;
  /// Rate of the `~/controller_state` messages (reference, feedback, error, output) [Hz].
  std::int64_t state_publish_rate = 100;
  /// Hardware backend: `sim` (the simulated arm, MuJoCo, real time or lockstep) or `franka` (a real
  /// arm through libfranka at robot_ip).
  std::string hardware = "sim";
  /// Arm model: `fr3` (Franka Research 3) or `panda` (Franka Emika Panda). Selects the built-in
  /// description and limits when robot_description and urdf_path are empty.
  std::string robot = "fr3";
  /// Host name or IPv4 address of the arm's control unit (FCI); used when hardware is `franka`.
  std::string robot_ip = "172.16.0.2";
  /// What the robot does with a command that reaches it after its 1 ms cycle (the hardware thread
  /// was woken late), which decides how the reference continues after skipped ticks: `dropped`
  /// (Franka's control: the command is lost and the robot extrapolated the missed waypoints) or
  /// `applied` (franka-sim: the late command is still applied in the cycle it lands in). Used when
  /// hardware is `franka`; the wrong choice risks a discontinuity reflex after a skipped tick.
  std::string late_commands = "dropped";
  /// The arm carries a Franka Hand: the simulated arm gets the hand in its model (fingers
  /// `<robot>_finger_joint1/2` in joint_states and robot_description), a Franka arm connects to its
  /// hand at robot_ip. The ROS node then serves `~/gripper_cmd` (control_msgs/GripperCommand) and
  /// the per-command gripper actions, and publishes the hand's limits as the read-only parameters
  /// `hand_limits.max_width_m`, `hand_limits.max_speed_m_s`, `hand_limits.max_force_n` and
  /// `hand_limits.continuous_force_n`.
  bool hand = false;
  /// URDF of the robot as an XML string (the ROS convention); empty = load urdf_path, or the
  /// built-in description of robot when urdf_path is empty too.
  std::string robot_description = "";
  /// Path of a URDF file, used when robot_description is empty; empty = the built-in description of
  /// robot.
  std::string urdf_path = "";
  /// SCHED_FIFO priority of the real-time threads (hardware and controller) [1-99]; 0 = normal
  /// scheduling. Needs an rtprio limit (ulimit -r) at least this high; if it cannot be raised the
  /// threads run at normal priority and a warning says so.
  std::int64_t realtime_priority = 80;
  /// CPUs the real-time threads are pinned to [CPU index]; empty = the CPUs of the thread that
  /// starts them. Give them CPUs of their own: another SCHED_FIFO thread of the same priority on
  /// the same CPU holds them off until it yields.
  std::vector<std::int64_t> cpu_affinity = {};
  /// Points each preallocated trajectory buffer holds, claimed at configure so that accepting a
  /// goal allocates nothing in the control loop; a goal with more points is rejected with
  /// INVALID_GOAL [points].
  std::int64_t max_trajectory_points = 10000;
  /// Control cycles the record ring holds until Python drains it (60 s at 1 kHz by default); rows
  /// that find it full are dropped and counted, never waited for. Allocated when the controller is
  /// built, about 1 kB per row (every tip's wrenches) [cycles].
  std::int64_t record_buffer_cycles = 60000;
  /// Deceleration of each joint, in joints order, for every stop the controller initiates (path or
  /// goal tolerance, F/T threshold, non-finite value, cancel, stitch abort): a minimum-time stop
  /// from the last command within these limits [rad/s²]. Only the stop trajectory is bounded by
  /// them.
  std::vector<double> stop_accelerations = {5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0};
  /// Largest deviation of a joint's measured position from the commanded one while executing, for
  /// goals that give no path_tolerance; beyond it the goal aborts with PATH_TOLERANCE_VIOLATED and
  /// the arm brakes to a stop [rad].
  double default_path_tolerance = 0.05;
  /// Largest distance of a joint from its final target at the end of the trajectory (and of the
  /// settling time), for goals that give no goal_tolerance; beyond it the goal aborts with
  /// GOAL_TOLERANCE_VIOLATED [rad].
  double default_goal_tolerance = 0.05;
  /// Settling time after the trajectory's end time, for goals that give none: the controller keeps
  /// commanding the final point and checking the path tolerance, and succeeds as soon as every
  /// joint is within its goal tolerance. Scaled like the trajectory by time_scale_percentage; 0 =
  /// check the goal tolerance once, at the end time [s].
  double default_goal_time_tolerance = 0.0;
  /// The schema's `constraints` group.
  struct Constraints {
    /// One entry per element of `joints`, keyed by it (schema: `__map_joints`); an element without an entry
    /// takes the defaults.
    struct MapJoints {
      /// Path tolerance of this joint for goals that give none; 0 = default_path_tolerance [rad].
      double path_tolerance = 0.0;
      /// Goal tolerance of this joint for goals that give none; 0 = default_goal_tolerance [rad].
      double goal_tolerance = 0.0;
    };
    std::map<std::string, MapJoints> joints_map;
  } constraints;
  /// Largest difference between the position the controller holds (its last command) and a goal's
  /// trajectory at the goal's start time, for a goal that starts while no trajectory runs; a larger
  /// one is rejected with INVALID_GOAL, since the command would jump [rad].
  double start_position_tolerance = 0.05;
  /// Largest difference between the commanded velocity and a goal's trajectory velocity at the
  /// goal's start time, for a goal that starts while no trajectory runs (a goal whose first point
  /// is at time_from_start 0, or whose start stamp lies in the past); a larger one is rejected with
  /// INVALID_GOAL [rad/s].
  double start_velocity_tolerance = 0.05;
  /// Largest position difference between the active trajectory and a replacement goal at the actual
  /// stitch time (after skipping the replacement's elapsed prefix); a larger one rejects the
  /// replacement with INVALID_GOAL and the active goal continues [rad].
  double stitch_position_tolerance = 0.01;
  /// Largest velocity difference between the active trajectory and a replacement goal at the stitch
  /// time; a larger one rejects the replacement with INVALID_GOAL and the active goal continues
  /// [rad/s].
  double stitch_velocity_tolerance = 0.05;
  /// Per-axis limit [Fx, Fy, Fz, Tx, Ty, Tz] on the filtered measured wrench (before gravity
  /// compensation), for goals and tips that give none; exceeding it on any axis aborts with
  /// FORCE_TORQUE_THRESHOLD_EXCEEDED and brakes to a stop [N, N, N, N·m, N·m, N·m].
  std::vector<double> default_absolute_force_torque_threshold = {45.0, 45.0, 45.0, 10.0, 10.0, 10.0};
  /// Cutoff frequency of the second-order Butterworth low-pass filter on the sensed wrench divided
  /// by the sample rate (update_rate), in (0, 1]; 1.0 = no filtering, and a ratio at or above the
  /// Nyquist limit (0.5) also passes the signal through unfiltered [-].
  double ft_cutoff_frequency_ratio = 1.0;
  /// Deadband on each filtered force component: magnitudes up to it read as zero, which keeps
  /// sensor noise from driving the admittance [N].
  double ft_force_deadband = 0.0;
  /// Deadband on each filtered torque component, like ft_force_deadband [N·m].
  double ft_torque_deadband = 0.0;
  /// Consecutive sensor readings, one per control cycle, that `~/zero_fts/<sensor_frame>` averages
  /// into the tare offset; keep the sensor idle and unloaded while they are taken [samples].
  std::int64_t zero_fts_num_samples = 10;
  /// Gravity in the robot model's root frame, used with each goal's end_effector_mass and
  /// end_effector_cog to remove the payload's weight from the wrench; captured when a goal is
  /// accepted. [0, 0, 0] disables payload gravity compensation [m/s²].
  std::vector<double> gravity_vector = {0.0, 0.0, -9.81};
  /// Damping λ of the damped least-squares inverse that maps the admittance's Cartesian
  /// acceleration to joint space; larger values trade accuracy for robustness near singularities
  /// [-].
  double jacobian_damping = 0.01;
  /// Speed of trajectory execution: 100 = as planned, 50 = half speed, 0 = halt along the path.
  /// Also scales the settling time [%].
  double time_scale_percentage = 100.0;
  /// Time constant of the first-order lag that smooths changes of time_scale_percentage; the
  /// filtered scale also changes by at most 180 percentage points per second [s].
  double time_scale_filter_constant = 0.1;

  /// "" when every value satisfies the schema, else the first violation, naming the parameter,
  /// the value and the rule in the words of jtac_py.parameters. Not real-time (builds strings).
  [[nodiscard]] std::string validate() const;
};

inline std::string Params::validate() const {
  namespace d = params_detail;
  if (auto i = d::first_repeat(sensor_frames); i >= 0)
    return d::violation("sensor_frames", d::repr(sensor_frames[static_cast<std::size_t>(i)]), "unique<>: []",
                        "elements must be unique (this one repeats an earlier one)", i);
  if (auto i = d::first_index(sensor_frames, [&](const auto& e) { return e == ""; }); i >= 0)
    return d::violation("sensor_frames", d::repr(sensor_frames[static_cast<std::size_t>(i)]),
                        "jtac::elements_not_empty: []", "elements must not be empty strings", i);
  if (joints.empty()) return d::violation("joints", d::repr(joints), "not_empty<>: []", "must not be empty");
  if (auto i = d::first_repeat(joints); i >= 0)
    return d::violation("joints", d::repr(joints[static_cast<std::size_t>(i)]), "unique<>: []",
                        "elements must be unique (this one repeats an earlier one)", i);
  if (auto i = d::first_index(joints, [&](const auto& e) { return e == ""; }); i >= 0)
    return d::violation("joints", d::repr(joints[static_cast<std::size_t>(i)]),
                        "jtac::elements_not_empty: []", "elements must not be empty strings", i);
  for (const auto& entry : ft_sensors.sensor_frames_map)
    if (!d::contains(sensor_frames, entry.first))
      return "unknown parameter 'ft_sensors." + entry.first + ".name': '" + entry.first +
             "' is not an element of 'sensor_frames'";
  for (const auto& entry : constraints.joints_map)
    if (!d::contains(joints, entry.first))
      return "unknown parameter 'constraints." + entry.first + ".path_tolerance': '" + entry.first +
             "' is not an element of 'joints'";
  if (auto i = d::first_index(stop_accelerations, [](double e) { return !std::isfinite(e); }); i >= 0)
    return d::violation("stop_accelerations", d::repr(stop_accelerations[static_cast<std::size_t>(i)]),
                        "finite", d::kFiniteDetail, i);
  if (!std::isfinite(default_path_tolerance))
    return d::violation("default_path_tolerance", d::repr(default_path_tolerance), "finite",
                        d::kFiniteDetail);
  if (!std::isfinite(default_goal_tolerance))
    return d::violation("default_goal_tolerance", d::repr(default_goal_tolerance), "finite",
                        d::kFiniteDetail);
  if (!std::isfinite(default_goal_time_tolerance))
    return d::violation("default_goal_time_tolerance", d::repr(default_goal_time_tolerance), "finite",
                        d::kFiniteDetail);
  for (const auto& k : joints) {
    if (auto it = constraints.joints_map.find(k); it != constraints.joints_map.end()) {
      if (!std::isfinite(it->second.path_tolerance))
        return d::violation("constraints." + k + ".path_tolerance", d::repr(it->second.path_tolerance),
                            "finite", d::kFiniteDetail);
    }
  }
  for (const auto& k : joints) {
    if (auto it = constraints.joints_map.find(k); it != constraints.joints_map.end()) {
      if (!std::isfinite(it->second.goal_tolerance))
        return d::violation("constraints." + k + ".goal_tolerance", d::repr(it->second.goal_tolerance),
                            "finite", d::kFiniteDetail);
    }
  }
  if (!std::isfinite(start_position_tolerance))
    return d::violation("start_position_tolerance", d::repr(start_position_tolerance), "finite",
                        d::kFiniteDetail);
  if (!std::isfinite(start_velocity_tolerance))
    return d::violation("start_velocity_tolerance", d::repr(start_velocity_tolerance), "finite",
                        d::kFiniteDetail);
  if (!std::isfinite(stitch_position_tolerance))
    return d::violation("stitch_position_tolerance", d::repr(stitch_position_tolerance), "finite",
                        d::kFiniteDetail);
  if (!std::isfinite(stitch_velocity_tolerance))
    return d::violation("stitch_velocity_tolerance", d::repr(stitch_velocity_tolerance), "finite",
                        d::kFiniteDetail);
  if (auto i =
          d::first_index(default_absolute_force_torque_threshold, [](double e) { return !std::isfinite(e); });
      i >= 0)
    return d::violation("default_absolute_force_torque_threshold",
                        d::repr(default_absolute_force_torque_threshold[static_cast<std::size_t>(i)]),
                        "finite", d::kFiniteDetail, i);
  if (std::ssize(default_absolute_force_torque_threshold) > 6)
    return d::violation(
        "default_absolute_force_torque_threshold", d::repr(default_absolute_force_torque_threshold),
        "type double_array_fixed_6",
        "holds at most 6, has " + std::to_string(default_absolute_force_torque_threshold.size()));
  if (!std::isfinite(ft_cutoff_frequency_ratio))
    return d::violation("ft_cutoff_frequency_ratio", d::repr(ft_cutoff_frequency_ratio), "finite",
                        d::kFiniteDetail);
  if (!std::isfinite(ft_force_deadband))
    return d::violation("ft_force_deadband", d::repr(ft_force_deadband), "finite", d::kFiniteDetail);
  if (!std::isfinite(ft_torque_deadband))
    return d::violation("ft_torque_deadband", d::repr(ft_torque_deadband), "finite", d::kFiniteDetail);
  if (auto i = d::first_index(gravity_vector, [](double e) { return !std::isfinite(e); }); i >= 0)
    return d::violation("gravity_vector", d::repr(gravity_vector[static_cast<std::size_t>(i)]), "finite",
                        d::kFiniteDetail, i);
  if (std::ssize(gravity_vector) > 3)
    return d::violation("gravity_vector", d::repr(gravity_vector), "type double_array_fixed_3",
                        "holds at most 3, has " + std::to_string(gravity_vector.size()));
  if (!std::isfinite(jacobian_damping))
    return d::violation("jacobian_damping", d::repr(jacobian_damping), "finite", d::kFiniteDetail);
  if (!std::isfinite(time_scale_percentage))
    return d::violation("time_scale_percentage", d::repr(time_scale_percentage), "finite", d::kFiniteDetail);
  if (!std::isfinite(time_scale_filter_constant))
    return d::violation("time_scale_filter_constant", d::repr(time_scale_filter_constant), "finite",
                        d::kFiniteDetail);
  if (joints.empty()) return d::violation("joints", d::repr(joints), "not_empty<>: []", "must not be empty");
  if (auto i = d::first_repeat(joints); i >= 0)
    return d::violation("joints", d::repr(joints[static_cast<std::size_t>(i)]), "unique<>: []",
                        "elements must be unique (this one repeats an earlier one)", i);
  if (auto i = d::first_index(joints, [&](const auto& e) { return e == ""; }); i >= 0)
    return d::violation("joints", d::repr(joints[static_cast<std::size_t>(i)]),
                        "jtac::elements_not_empty: []", "elements must not be empty strings", i);
  if (base_frame.empty())
    return d::violation("base_frame", d::repr(base_frame), "not_empty<>: []", "must not be empty");
  if (auto i = d::first_repeat(sensor_frames); i >= 0)
    return d::violation("sensor_frames", d::repr(sensor_frames[static_cast<std::size_t>(i)]), "unique<>: []",
                        "elements must be unique (this one repeats an earlier one)", i);
  if (auto i = d::first_index(sensor_frames, [&](const auto& e) { return e == ""; }); i >= 0)
    return d::violation("sensor_frames", d::repr(sensor_frames[static_cast<std::size_t>(i)]),
                        "jtac::elements_not_empty: []", "elements must not be empty strings", i);
  if (sensor_frames.empty() && !ft_sensor_name.empty())
    return d::violation("sensor_frames", d::repr(sensor_frames), "jtac::not_empty_if: [ft_sensor_name]",
                        "must not be empty while 'ft_sensor_name' is set (" + d::repr(ft_sensor_name) + ")");
  if (auto i = d::first_repeat(ee_frames); i >= 0)
    return d::violation("ee_frames", d::repr(ee_frames[static_cast<std::size_t>(i)]), "unique<>: []",
                        "elements must be unique (this one repeats an earlier one)", i);
  if (auto i = d::first_index(ee_frames, [&](const auto& e) { return e == ""; }); i >= 0)
    return d::violation("ee_frames", d::repr(ee_frames[static_cast<std::size_t>(i)]),
                        "jtac::elements_not_empty: []", "elements must not be empty strings", i);
  if (ee_frames.size() != sensor_frames.size())
    return d::violation("ee_frames", d::repr(ee_frames), "jtac::size_eq_param: [sensor_frames]",
                        "must have as many elements as 'sensor_frames' (" +
                            std::to_string(sensor_frames.size()) + "), has " +
                            std::to_string(ee_frames.size()));
  if (auto i = d::first_repeat(continuous_joints); i >= 0)
    return d::violation("continuous_joints", d::repr(continuous_joints[static_cast<std::size_t>(i)]),
                        "unique<>: []", "elements must be unique (this one repeats an earlier one)", i);
  if (auto i = d::first_index(continuous_joints, [&](const auto& e) { return !d::contains(joints, e); });
      i >= 0)
    return d::violation("continuous_joints", d::repr(continuous_joints[static_cast<std::size_t>(i)]),
                        "jtac::subset_of_param: [joints]", "every element must be an element of 'joints'", i);
  if (!d::one_of<std::int64_t>(update_rate, {1000, 500, 250, 200, 125, 100}))
    return d::violation("update_rate", d::repr(update_rate), "one_of<>: [[1000, 500, 250, 200, 125, 100]]",
                        "must be one of {1000, 500, 250, 200, 125, 100}");
  if (!(state_publish_rate >= 1 && state_publish_rate <= 1000))
    return d::violation("state_publish_rate", d::repr(state_publish_rate), "bounds<>: [1, 1000]",
                        "must be within [1, 1000]");
  if (!d::one_of<std::string>(hardware, {"sim", "franka"}))
    return d::violation("hardware", d::repr(hardware), "one_of<>: [[sim, franka]]",
                        "must be one of {sim, franka}");
  if (!d::one_of<std::string>(robot, {"fr3", "panda"}))
    return d::violation("robot", d::repr(robot), "one_of<>: [[fr3, panda]]", "must be one of {fr3, panda}");
  if (!d::one_of<std::string>(late_commands, {"dropped", "applied"}))
    return d::violation("late_commands", d::repr(late_commands), "one_of<>: [[dropped, applied]]",
                        "must be one of {dropped, applied}");
  if (!(realtime_priority >= 0 && realtime_priority <= 99))
    return d::violation("realtime_priority", d::repr(realtime_priority), "bounds<>: [0, 99]",
                        "must be within [0, 99]");
  if (auto i = d::first_repeat(cpu_affinity); i >= 0)
    return d::violation("cpu_affinity", d::repr(cpu_affinity[static_cast<std::size_t>(i)]), "unique<>: []",
                        "elements must be unique (this one repeats an earlier one)", i);
  if (auto i = d::first_index(cpu_affinity, [&](const auto& e) { return e < 0; }); i >= 0)
    return d::violation("cpu_affinity", d::repr(cpu_affinity[static_cast<std::size_t>(i)]),
                        "lower_element_bounds<>: [0]", "every element must be ≥ 0", i);
  if (!(max_trajectory_points >= 1 && max_trajectory_points <= 1000000))
    return d::violation("max_trajectory_points", d::repr(max_trajectory_points), "bounds<>: [1, 1000000]",
                        "must be within [1, 1000000]");
  if (!(record_buffer_cycles >= 1 && record_buffer_cycles <= 10000000))
    return d::violation("record_buffer_cycles", d::repr(record_buffer_cycles), "bounds<>: [1, 10000000]",
                        "must be within [1, 10000000]");
  if (stop_accelerations.empty())
    return d::violation("stop_accelerations", d::repr(stop_accelerations), "not_empty<>: []",
                        "must not be empty");
  if (auto i = d::first_index(stop_accelerations, [&](const auto& e) { return e <= 0.0; }); i >= 0)
    return d::violation("stop_accelerations", d::repr(stop_accelerations[static_cast<std::size_t>(i)]),
                        "jtac::element_gt: [0.0]", "every element must be greater than 0.0", i);
  if (stop_accelerations.size() != joints.size())
    return d::violation("stop_accelerations", d::repr(stop_accelerations), "jtac::size_eq_param: [joints]",
                        "must have as many elements as 'joints' (" + std::to_string(joints.size()) +
                            "), has " + std::to_string(stop_accelerations.size()));
  if (!(default_path_tolerance > 0.0))
    return d::violation("default_path_tolerance", d::repr(default_path_tolerance), "gt<>: [0.0]",
                        "must be greater than 0.0");
  if (!(default_goal_tolerance > 0.0))
    return d::violation("default_goal_tolerance", d::repr(default_goal_tolerance), "gt<>: [0.0]",
                        "must be greater than 0.0");
  if (!(default_goal_time_tolerance >= 0.0))
    return d::violation("default_goal_time_tolerance", d::repr(default_goal_time_tolerance), "gt_eq<>: [0.0]",
                        "must be greater than or equal to 0.0");
  for (const auto& k : joints) {
    if (auto it = constraints.joints_map.find(k); it != constraints.joints_map.end()) {
      if (!(it->second.path_tolerance >= 0.0))
        return d::violation("constraints." + k + ".path_tolerance", d::repr(it->second.path_tolerance),
                            "gt_eq<>: [0.0]", "must be greater than or equal to 0.0");
    }
  }
  for (const auto& k : joints) {
    if (auto it = constraints.joints_map.find(k); it != constraints.joints_map.end()) {
      if (!(it->second.goal_tolerance >= 0.0))
        return d::violation("constraints." + k + ".goal_tolerance", d::repr(it->second.goal_tolerance),
                            "gt_eq<>: [0.0]", "must be greater than or equal to 0.0");
    }
  }
  if (!(start_position_tolerance > 0.0))
    return d::violation("start_position_tolerance", d::repr(start_position_tolerance), "gt<>: [0.0]",
                        "must be greater than 0.0");
  if (!(start_velocity_tolerance > 0.0))
    return d::violation("start_velocity_tolerance", d::repr(start_velocity_tolerance), "gt<>: [0.0]",
                        "must be greater than 0.0");
  if (!(stitch_position_tolerance > 0.0))
    return d::violation("stitch_position_tolerance", d::repr(stitch_position_tolerance), "gt<>: [0.0]",
                        "must be greater than 0.0");
  if (!(stitch_velocity_tolerance > 0.0))
    return d::violation("stitch_velocity_tolerance", d::repr(stitch_velocity_tolerance), "gt<>: [0.0]",
                        "must be greater than 0.0");
  if (!(std::ssize(default_absolute_force_torque_threshold) == 6))
    return d::violation("default_absolute_force_torque_threshold",
                        d::repr(default_absolute_force_torque_threshold), "fixed_size<>: [6]",
                        "must have exactly 6 elements" + d::has(default_absolute_force_torque_threshold));
  if (auto i =
          d::first_index(default_absolute_force_torque_threshold, [&](const auto& e) { return e <= 0.0; });
      i >= 0)
    return d::violation("default_absolute_force_torque_threshold",
                        d::repr(default_absolute_force_torque_threshold[static_cast<std::size_t>(i)]),
                        "jtac::element_gt: [0.0]", "every element must be greater than 0.0", i);
  if (!(ft_cutoff_frequency_ratio > 0.0))
    return d::violation("ft_cutoff_frequency_ratio", d::repr(ft_cutoff_frequency_ratio), "gt<>: [0.0]",
                        "must be greater than 0.0");
  if (!(ft_cutoff_frequency_ratio <= 1.0))
    return d::violation("ft_cutoff_frequency_ratio", d::repr(ft_cutoff_frequency_ratio), "lt_eq<>: [1.0]",
                        "must be less than or equal to 1.0");
  if (!(ft_force_deadband >= 0.0))
    return d::violation("ft_force_deadband", d::repr(ft_force_deadband), "gt_eq<>: [0.0]",
                        "must be greater than or equal to 0.0");
  if (!(ft_torque_deadband >= 0.0))
    return d::violation("ft_torque_deadband", d::repr(ft_torque_deadband), "gt_eq<>: [0.0]",
                        "must be greater than or equal to 0.0");
  if (!(zero_fts_num_samples >= 1))
    return d::violation("zero_fts_num_samples", d::repr(zero_fts_num_samples), "gt_eq<>: [1]",
                        "must be greater than or equal to 1");
  if (!(std::ssize(gravity_vector) == 3))
    return d::violation("gravity_vector", d::repr(gravity_vector), "fixed_size<>: [3]",
                        "must have exactly 3 elements" + d::has(gravity_vector));
  if (!(jacobian_damping >= 0.0))
    return d::violation("jacobian_damping", d::repr(jacobian_damping), "gt_eq<>: [0.0]",
                        "must be greater than or equal to 0.0");
  if (!(time_scale_percentage >= 0.0 && time_scale_percentage <= 100.0))
    return d::violation("time_scale_percentage", d::repr(time_scale_percentage), "bounds<>: [0.0, 100.0]",
                        "must be within [0.0, 100.0]");
  if (!(time_scale_filter_constant > 0.0))
    return d::violation("time_scale_filter_constant", d::repr(time_scale_filter_constant), "gt<>: [0.0]",
                        "must be greater than 0.0");
  return "";
}

}  // namespace jtac
