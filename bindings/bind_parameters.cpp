// Generated from params/jtac_parameters.yaml by `python -m jtac_py.parameters --write`: do not edit.
// Change the schema and regenerate; `make lint` fails while this file is stale.
// jtac::Params as a class (ruckig's def_readwrite model), validate(), and the one mapping onto the
// core's structures (params_mapping.hpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "jtac_core/jtac_parameters.hpp"
#include "jtac_core/params_mapping.hpp"

namespace py = pybind11;

void bind_parameters(py::module_& m) {
  py::class_<jtac::Params> params(m, "Params",
                                  "jtac's parameters under the schema's names (params/jtac_parameters.yaml)");
  params.def(py::init<>());
  params.def_readwrite(
      "joints", &jtac::Params::joints,
      "Names of the controlled joints, as in the robot model. Their order is the order of every per-joint "
      "array (stop_accelerations, the state topic); a goal may list the same joints in any order.");
  params.def_readwrite("planning_group_name", &jtac::Params::planning_group_name,
                       "MoveIt planning group this controller serves, reported to clients; empty = none. The "
                       "joint list always comes from `joints`.");
  params.def_readwrite(
      "base_frame", &jtac::Params::base_frame,
      "Root of the controlled kinematic chain (the arm's base link). Jacobians, the admittance state and "
      "gravity_vector are expressed in the robot model's root frame, which this frame is fixed to.");
  params.def_readwrite("sensor_frames", &jtac::Params::sensor_frames,
                       "Measurement frame of each tip's force/torque sensor, one per tip, in tip order. The "
                       "sensed wrench is expressed in it, and the service `~/zero_fts/<sensor_frame>` tares "
                       "that sensor. Must not be empty when ft_sensor_name is set.");
  params.def_readwrite(
      "ee_frames", &jtac::Params::ee_frames,
      "End-effector frame of each tip, in the order of sensor_frames. A goal gives the payload's centre of "
      "gravity (end_effector_cog) in it, and the control frame's pose relative to it.");
  params.def_readwrite(
      "ft_sensor_name", &jtac::Params::ft_sensor_name,
      "Force/torque sensor in the hardware interface for a single-tip setup; with several tips it serves "
      "every tip whose `ft_sensors.<sensor_frame>.name` is empty. Empty everywhere = no admittance: the "
      "controller is a plain joint trajectory controller and F/T thresholds are not checked. A tip whose "
      "sensor is the arm's own (simulated: `<robot>_ft`; Franka: `<robot>_estimated_wrench`; tip 0 when no "
      "tip names it) reads the arm's reading; any other sensor is external, its readings arriving on "
      "`~/wrench/<sensor_frame>/input` (Python: `Controller.feed_wrench`).");
  py::class_<jtac::Params::FtSensors> params_ft_sensors(params, "FtSensors",
                                                        "The schema's `ft_sensors` group");
  params_ft_sensors.def(py::init<>());
  py::class_<jtac::Params::FtSensors::MapSensorFrames> params_ft_sensors_sensor_frames_map(
      params_ft_sensors, "MapSensorFrames",
      "One entry of `__map_sensor_frames`, per element of `sensor_frames`");
  params_ft_sensors_sensor_frames_map.def(py::init<>());
  params_ft_sensors_sensor_frames_map.def_readwrite(
      "name", &jtac::Params::FtSensors::MapSensorFrames::name,
      "Force/torque sensor in the hardware interface that measures the wrench in this sensor frame; empty = "
      "ft_sensor_name. Needed only when several tips have their own sensors; a name other than the arm's own "
      "sensor makes it external (readings on `~/wrench/<sensor_frame>/input`).");
  params_ft_sensors.def_readwrite("sensor_frames_map", &jtac::Params::FtSensors::sensor_frames_map,
                                  "Entries by element of `sensor_frames` (a copy: assign a whole dict)");
  params.def_readwrite("ft_sensors", &jtac::Params::ft_sensors);
  params.def_readwrite(
      "continuous_joints", &jtac::Params::continuous_joints,
      "Joints without a physical travel limit, a subset of joints. Their start, path and goal tolerances and "
      "the published position error use the shortest angular difference. Declare a joint here only if it has "
      "no travel limit: modulo feedback cannot establish an absolute turn count.");
  params.def_readwrite(
      "update_rate", &jtac::Params::update_rate,
      "Rate of the controller thread [Hz]. The hardware thread runs at 1000 Hz and rate-matches a slower "
      "controller, so the controller period is a whole number of hardware periods.");
  params.def_readwrite(
      "state_publish_rate", &jtac::Params::state_publish_rate,
      "Rate of the `~/controller_state` messages (reference, feedback, error, output) [Hz].");
  params.def_readwrite("hardware", &jtac::Params::hardware,
                       "Hardware backend: `sim` (the simulated arm, MuJoCo, real time or lockstep) or "
                       "`franka` (a real arm through libfranka at robot_ip).");
  params.def_readwrite("robot", &jtac::Params::robot,
                       "Arm model: `fr3` (Franka Research 3) or `panda` (Franka Emika Panda). Selects the "
                       "built-in description and limits when robot_description and urdf_path are empty.");
  params.def_readwrite(
      "robot_ip", &jtac::Params::robot_ip,
      "Host name or IPv4 address of the arm's control unit (FCI); used when hardware is `franka`.");
  params.def_readwrite(
      "late_commands", &jtac::Params::late_commands,
      "What the robot does with a command that reaches it after its 1 ms cycle (the hardware thread was "
      "woken late), which decides how the reference continues after skipped ticks: `dropped` (Franka's "
      "control: the command is lost and the robot extrapolated the missed waypoints) or `applied` "
      "(franka-sim: the late command is still applied in the cycle it lands in). Used when hardware is "
      "`franka`; the wrong choice risks a discontinuity reflex after a skipped tick.");
  params.def_readwrite(
      "hand", &jtac::Params::hand,
      "The arm carries a Franka Hand: the simulated arm gets the hand in its model (fingers "
      "`<robot>_finger_joint1/2` in joint_states and robot_description), a Franka arm connects to its hand "
      "at robot_ip. The ROS node then serves `~/gripper_cmd` (control_msgs/GripperCommand) and the "
      "per-command gripper actions, and publishes the hand's limits as the read-only parameters "
      "`hand_limits.max_width_m`, `hand_limits.max_speed_m_s`, `hand_limits.max_force_n` and "
      "`hand_limits.continuous_force_n`.");
  params.def_readwrite("robot_description", &jtac::Params::robot_description,
                       "URDF of the robot as an XML string (the ROS convention); empty = load urdf_path, or "
                       "the built-in description of robot when urdf_path is empty too.");
  params.def_readwrite("urdf_path", &jtac::Params::urdf_path,
                       "Path of a URDF file, used when robot_description is empty; empty = the built-in "
                       "description of robot.");
  params.def_readwrite("realtime_priority", &jtac::Params::realtime_priority,
                       "SCHED_FIFO priority of the real-time threads (hardware and controller) [1-99]; 0 = "
                       "normal scheduling. Needs an rtprio limit (ulimit -r) at least this high; if it "
                       "cannot be raised the threads run at normal priority and a warning says so.");
  params.def_readwrite("cpu_affinity", &jtac::Params::cpu_affinity,
                       "CPUs the real-time threads are pinned to [CPU index]; empty = the CPUs of the thread "
                       "that starts them. Give them CPUs of their own: another SCHED_FIFO thread of the same "
                       "priority on the same CPU holds them off until it yields.");
  params.def_readwrite("max_trajectory_points", &jtac::Params::max_trajectory_points,
                       "Points each preallocated trajectory buffer holds, claimed at configure so that "
                       "accepting a goal allocates nothing in the control loop; a goal with more points is "
                       "rejected with INVALID_GOAL [points].");
  params.def_readwrite(
      "record_buffer_cycles", &jtac::Params::record_buffer_cycles,
      "Control cycles the record ring holds until Python drains it (60 s at 1 kHz by default); rows that "
      "find it full are dropped and counted, never waited for. Allocated when the controller is built, about "
      "1 kB per row (every tip's wrenches) [cycles].");
  params.def_readwrite(
      "stop_accelerations", &jtac::Params::stop_accelerations,
      "Deceleration of each joint, in joints order, for every stop the controller initiates (path or goal "
      "tolerance, F/T threshold, non-finite value, cancel, stitch abort): a minimum-time stop from the last "
      "command within these limits [rad/s²]. Only the stop trajectory is bounded by them.");
  params.def_readwrite("default_path_tolerance", &jtac::Params::default_path_tolerance,
                       "Largest deviation of a joint's measured position from the commanded one while "
                       "executing, for goals that give no path_tolerance; beyond it the goal aborts with "
                       "PATH_TOLERANCE_VIOLATED and the arm brakes to a stop [rad].");
  params.def_readwrite("default_goal_tolerance", &jtac::Params::default_goal_tolerance,
                       "Largest distance of a joint from its final target at the end of the trajectory (and "
                       "of the settling time), for goals that give no goal_tolerance; beyond it the goal "
                       "aborts with GOAL_TOLERANCE_VIOLATED [rad].");
  params.def_readwrite(
      "default_goal_time_tolerance", &jtac::Params::default_goal_time_tolerance,
      "Settling time after the trajectory's end time, for goals that give none: the controller keeps "
      "commanding the final point and checking the path tolerance, and succeeds as soon as every joint is "
      "within its goal tolerance. Scaled like the trajectory by time_scale_percentage; 0 = check the goal "
      "tolerance once, at the end time [s].");
  py::class_<jtac::Params::Constraints> params_constraints(params, "Constraints",
                                                           "The schema's `constraints` group");
  params_constraints.def(py::init<>());
  py::class_<jtac::Params::Constraints::MapJoints> params_constraints_joints_map(
      params_constraints, "MapJoints", "One entry of `__map_joints`, per element of `joints`");
  params_constraints_joints_map.def(py::init<>());
  params_constraints_joints_map.def_readwrite(
      "path_tolerance", &jtac::Params::Constraints::MapJoints::path_tolerance,
      "Path tolerance of this joint for goals that give none; 0 = default_path_tolerance [rad].");
  params_constraints_joints_map.def_readwrite(
      "goal_tolerance", &jtac::Params::Constraints::MapJoints::goal_tolerance,
      "Goal tolerance of this joint for goals that give none; 0 = default_goal_tolerance [rad].");
  params_constraints.def_readwrite("joints_map", &jtac::Params::Constraints::joints_map,
                                   "Entries by element of `joints` (a copy: assign a whole dict)");
  params.def_readwrite("constraints", &jtac::Params::constraints);
  params.def_readwrite(
      "start_position_tolerance", &jtac::Params::start_position_tolerance,
      "Largest difference between the position the controller holds (its last command) and a goal's "
      "trajectory at the goal's start time, for a goal that starts while no trajectory runs; a larger one is "
      "rejected with INVALID_GOAL, since the command would jump [rad].");
  params.def_readwrite("start_velocity_tolerance", &jtac::Params::start_velocity_tolerance,
                       "Largest difference between the commanded velocity and a goal's trajectory velocity "
                       "at the goal's start time, for a goal that starts while no trajectory runs (a goal "
                       "whose first point is at time_from_start 0, or whose start stamp lies in the past); a "
                       "larger one is rejected with INVALID_GOAL [rad/s].");
  params.def_readwrite("stitch_position_tolerance", &jtac::Params::stitch_position_tolerance,
                       "Largest position difference between the active trajectory and a replacement goal at "
                       "the actual stitch time (after skipping the replacement's elapsed prefix); a larger "
                       "one rejects the replacement with INVALID_GOAL and the active goal continues [rad].");
  params.def_readwrite(
      "stitch_velocity_tolerance", &jtac::Params::stitch_velocity_tolerance,
      "Largest velocity difference between the active trajectory and a replacement goal at the stitch time; "
      "a larger one rejects the replacement with INVALID_GOAL and the active goal continues [rad/s].");
  params.def_readwrite(
      "default_absolute_force_torque_threshold", &jtac::Params::default_absolute_force_torque_threshold,
      "Per-axis limit [Fx, Fy, Fz, Tx, Ty, Tz] on the filtered measured wrench (before gravity "
      "compensation), for goals and tips that give none; exceeding it on any axis aborts with "
      "FORCE_TORQUE_THRESHOLD_EXCEEDED and brakes to a stop [N, N, N, N·m, N·m, N·m].");
  params.def_readwrite(
      "ft_cutoff_frequency_ratio", &jtac::Params::ft_cutoff_frequency_ratio,
      "Cutoff frequency of the second-order Butterworth low-pass filter on the sensed wrench divided by the "
      "sample rate (update_rate), in (0, 1]; 1.0 = no filtering, and a ratio at or above the Nyquist limit "
      "(0.5) also passes the signal through unfiltered [-].");
  params.def_readwrite("ft_force_deadband", &jtac::Params::ft_force_deadband,
                       "Deadband on each filtered force component: magnitudes up to it read as zero, which "
                       "keeps sensor noise from driving the admittance [N].");
  params.def_readwrite("ft_torque_deadband", &jtac::Params::ft_torque_deadband,
                       "Deadband on each filtered torque component, like ft_force_deadband [N·m].");
  params.def_readwrite(
      "zero_fts_num_samples", &jtac::Params::zero_fts_num_samples,
      "Consecutive sensor readings, one per control cycle, that `~/zero_fts/<sensor_frame>` averages into "
      "the tare offset; keep the sensor idle and unloaded while they are taken [samples].");
  params.def_readwrite("gravity_vector", &jtac::Params::gravity_vector,
                       "Gravity in the robot model's root frame, used with each goal's end_effector_mass and "
                       "end_effector_cog to remove the payload's weight from the wrench; captured when a "
                       "goal is accepted. [0, 0, 0] disables payload gravity compensation [m/s²].");
  params.def_readwrite(
      "jacobian_damping", &jtac::Params::jacobian_damping,
      "Damping λ of the damped least-squares inverse that maps the admittance's Cartesian acceleration to "
      "joint space; larger values trade accuracy for robustness near singularities [-].");
  params.def_readwrite("time_scale_percentage", &jtac::Params::time_scale_percentage,
                       "Speed of trajectory execution: 100 = as planned, 50 = half speed, 0 = halt along the "
                       "path. Also scales the settling time [%].");
  params.def_readwrite("time_scale_filter_constant", &jtac::Params::time_scale_filter_constant,
                       "Time constant of the first-order lag that smooths changes of time_scale_percentage; "
                       "the filtered scale also changes by at most 180 percentage points per second [s].");
  params.def("validate", &jtac::Params::validate,
             "'' when valid, else the first violation (parameter, value, rule)");
  m.def("jtac_config", &jtac::make_jtac_config, py::arg("params"), py::arg("urdf_xml"),
        py::arg("max_velocity_rad_s") = std::vector<double>{},
        py::arg("max_acceleration_rad_s2") = std::vector<double>{},
        "The core's JtacConfig from Params (params_mapping.hpp)");
  m.def("jtac_parameters", &jtac::make_jtac_parameters, py::arg("params"),
        "The core's JtacParameters from Params (params_mapping.hpp)");
  m.def("tip_ft_sensor_names", py::overload_cast<const jtac::Params&>(&jtac::tip_ft_sensor_names),
        py::arg("params"), "Each tip's force/torque sensor name, in sensor_frames order (\"\" = none)");
}
