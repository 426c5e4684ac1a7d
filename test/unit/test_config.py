"""Tests of jtac_py.config: schema values -> native JtacConfig / JtacParameters / a configured controller."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from jtac_py import _native, config, robots
from jtac_py.parameters import ParameterError, default_schema

FR3_JOINTS = [f"fr3_joint{i}" for i in range(1, 8)]
PANDA_JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
DT_S = 0.001  # [s], one 1 kHz cycle


def _write(tmp_path: Path, text: str, name: str = "params.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _trajectory_fields(parameters: _native.JtacParameters) -> dict:
    t = parameters.trajectory
    return {
        "stop": list(t.stop_accelerations_rad_s2),
        "path": list(t.default_path_tolerance_rad),
        "goal": list(t.default_goal_tolerance_rad),
        "goal_time": t.default_goal_time_tolerance_s,
        "scale": t.time_scale_percentage,
        "filter": t.time_scale_filter_constant_s,
        "start_pos": t.start_position_tolerance_rad,
        "start_vel": t.start_velocity_tolerance_rad_s,
        "stitch_pos": t.stitch_position_tolerance_rad,
        "stitch_vel": t.stitch_velocity_tolerance_rad_s,
        "cutoff": parameters.ft_cutoff_frequency_ratio,
        "force_db": parameters.ft_force_deadband_N,
        "torque_db": parameters.ft_torque_deadband_Nm,
        "threshold": list(parameters.default_absolute_force_torque_threshold),
        "gravity": list(parameters.gravity_base_m_s2),
        "lambda": parameters.jacobian_damping,
        "tare": parameters.zero_fts_num_samples,
    }


# ---------------------------------------------------------------------------------------------- defaults
def test_defaults_map_to_the_expected_native_parameters():
    fields = _trajectory_fields(config.native_parameters(config.resolve()))
    assert fields == {
        "stop": [5.0] * 7,  # [rad/s²]
        "path": [0.05] * 7,  # [rad]
        "goal": [0.05] * 7,  # [rad]
        "goal_time": 0.0,
        "scale": 100.0,
        "filter": 0.1,  # [s]
        "start_pos": 0.05,
        "start_vel": 0.05,
        "stitch_pos": 0.01,
        "stitch_vel": 0.05,
        "cutoff": 1.0,
        "force_db": 0.0,
        "torque_db": 0.0,
        "threshold": [45.0, 45.0, 45.0, 10.0, 10.0, 10.0],  # [N, N·m]
        "gravity": [0.0, 0.0, -9.81],  # [m/s²]
        "lambda": 0.01,
        "tare": 10,
    }


def test_defaults_map_to_the_expected_native_config():
    native = config.native_config(config.resolve())
    assert native.joint_names == FR3_JOINTS
    assert native.continuous_joints == []
    assert native.max_trajectory_points == 10000
    assert native.base_frame == "fr3_link0"
    assert [(t.sensor_frame, t.ee_frame) for t in native.tips] == [("fr3_ft_sensor", "fr3_ee")]
    assert native.has_force_torque_sensor is False  # ft_sensor_name "" = no admittance
    assert native.urdf_xml == robots.urdf_xml("fr3")


def test_resolve_without_config_equals_the_schema_defaults():
    assert config.resolve() == default_schema().defaults()
    assert config.resolve({}) == default_schema().defaults()


def test_every_run_time_value_lands_in_its_own_native_field():
    # Distinct numbers everywhere, so a swapped pair of fields cannot pass.
    values = config.resolve(
        stop_accelerations=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
        default_path_tolerance=0.11,
        default_goal_tolerance=0.12,
        default_goal_time_tolerance=0.5,
        time_scale_percentage=40.0,
        time_scale_filter_constant=0.25,
        start_position_tolerance=0.021,
        start_velocity_tolerance=0.022,
        stitch_position_tolerance=0.023,
        stitch_velocity_tolerance=0.024,
        ft_cutoff_frequency_ratio=0.05,
        ft_force_deadband=0.3,
        ft_torque_deadband=0.04,
        default_absolute_force_torque_threshold=[11.0, 12.0, 13.0, 1.1, 1.2, 1.3],
        gravity_vector=[0.0, -9.81, 0.0],
        jacobian_damping=0.2,
        zero_fts_num_samples=25,
    )
    assert _trajectory_fields(config.native_parameters(values)) == {
        "stop": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
        "path": [0.11] * 7,
        "goal": [0.12] * 7,
        "goal_time": 0.5,
        "scale": 40.0,
        "filter": 0.25,
        "start_pos": 0.021,
        "start_vel": 0.022,
        "stitch_pos": 0.023,
        "stitch_vel": 0.024,
        "cutoff": 0.05,
        "force_db": 0.3,
        "torque_db": 0.04,
        "threshold": [11.0, 12.0, 13.0, 1.1, 1.2, 1.3],
        "gravity": [0.0, -9.81, 0.0],
        "lambda": 0.2,
        "tare": 25,
    }


def test_structure_values_land_in_the_native_config():
    values = config.resolve(
        continuous_joints=["fr3_joint7"],
        max_trajectory_points=64,
        ft_sensor_name="ft_sensor",
        robot_description="<robot name='x'/>",
    )
    native = config.native_config(values)
    assert native.continuous_joints == ["fr3_joint7"]
    assert native.max_trajectory_points == 64
    assert native.has_force_torque_sensor is True
    assert native.urdf_xml == "<robot name='x'/>"
    assert config.native_config(values, urdf_xml="<robot name='y'/>").urdf_xml == "<robot name='y'/>"


def test_a_sensor_on_any_tip_turns_admittance_on():
    values = config.resolve({"ft_sensors": {"fr3_ft_sensor": {"name": "ati"}}})
    assert config.native_config(values).has_force_torque_sensor is True


def test_no_tips_gives_an_empty_tip_list():
    native = config.native_config(config.resolve(sensor_frames=[], ee_frames=[]))
    assert native.tips == []
    assert native.has_force_torque_sensor is False


# ---------------------------------------------------------------------------------------------- per joint
def test_a_per_joint_constraint_lands_at_that_joints_index():
    values = config.resolve(
        {
            "constraints.fr3_joint3.goal_tolerance": 0.01,
            "constraints.fr3_joint7.path_tolerance": 0.2,
        }
    )
    parameters = config.native_parameters(values).trajectory
    assert list(parameters.default_goal_tolerance_rad) == [0.05, 0.05, 0.01, 0.05, 0.05, 0.05, 0.05]
    assert list(parameters.default_path_tolerance_rad) == [0.05] * 6 + [0.2]


def test_a_per_joint_constraint_follows_the_joint_order():
    # joints in another order: the per-joint vector follows `joints`, not the joint number.
    joints = list(reversed(FR3_JOINTS))
    values = config.resolve(joints=joints, **{"constraints.fr3_joint1.goal_tolerance": 0.03})
    goal = list(config.native_parameters(values).trajectory.default_goal_tolerance_rad)
    assert goal == [0.05] * 6 + [0.03]


# ---------------------------------------------------------------------------------------------- sources
FLAT = {
    "update_rate": 500,
    "stop_accelerations": [4.0, 4.0, 4.0, 4.0, 6.0, 6.0, 6.0],
    "constraints.fr3_joint2.goal_tolerance": 0.02,
    "constraints.fr3_joint5.path_tolerance": 0.3,
    "ft_sensor_name": "ft",
    "gravity_vector": [0.0, 0.0, -9.8],
}
NESTED = {
    "update_rate": 500,
    "stop_accelerations": [4.0, 4.0, 4.0, 4.0, 6.0, 6.0, 6.0],
    "constraints": {
        "fr3_joint2": {"goal_tolerance": 0.02},
        "fr3_joint5": {"path_tolerance": 0.3},
    },
    "ft_sensor_name": "ft",
    "gravity_vector": [0.0, 0.0, -9.8],
}
FILE_TEXT = """\
jtac_controller:
  ros__parameters:
    update_rate: 500
    stop_accelerations: [4.0, 4.0, 4.0, 4.0, 6.0, 6.0, 6.0]
    constraints:
      fr3_joint2:
        goal_tolerance: 0.02
      fr3_joint5:
        path_tolerance: 0.3
    ft_sensor_name: ft
    gravity_vector: [0.0, 0.0, -9.8]
"""


def test_nested_mapping_file_and_flat_mapping_agree(tmp_path):
    flat = config.resolve(FLAT)
    assert flat["update_rate"] == 500
    assert flat["constraints.fr3_joint2.goal_tolerance"] == 0.02
    assert config.resolve(NESTED) == flat
    assert config.resolve(_write(tmp_path, FILE_TEXT)) == flat
    assert config.resolve(str(_write(tmp_path, FILE_TEXT))) == flat
    parameters = config.native_parameters(flat).trajectory
    assert list(parameters.default_goal_tolerance_rad)[1] == 0.02
    assert list(parameters.default_path_tolerance_rad)[4] == 0.3


def test_resolve_is_idempotent_on_its_own_result():
    values = config.resolve(FLAT)
    assert config.resolve(values) == values


def test_overrides_are_merged_on_top_per_dotted_name(tmp_path):
    path = _write(tmp_path, FILE_TEXT)
    values = config.resolve(
        path,
        update_rate=250,
        constraints={"fr3_joint3": {"goal_tolerance": 0.04}},
        **{"constraints.fr3_joint2.goal_tolerance": 0.07},
    )
    assert values["update_rate"] == 250
    assert values["constraints.fr3_joint2.goal_tolerance"] == 0.07  # override replaces the file's
    assert values["constraints.fr3_joint3.goal_tolerance"] == 0.04  # nested override, added
    assert values["constraints.fr3_joint5.path_tolerance"] == 0.3  # the file's, kept
    assert values["ft_sensor_name"] == "ft"


def test_a_file_with_several_nodes_needs_node_name(tmp_path):
    text = FILE_TEXT + "other_controller:\n  ros__parameters:\n    update_rate: 100\n"
    path = _write(tmp_path, text)
    with pytest.raises(ParameterError, match="pass node_name"):
        config.resolve(path)
    assert config.resolve(path, node_name="other_controller")["update_rate"] == 100
    assert config.resolve(path, node_name="jtac_controller")["update_rate"] == 500


def test_numpy_arrays_are_accepted():
    values = config.resolve(gravity_vector=np.array([0.0, 0.0, -9.7]), stop_accelerations=np.full(7, 3.0))
    assert values["gravity_vector"] == [0.0, 0.0, -9.7]
    assert list(config.native_parameters(values).trajectory.stop_accelerations_rad_s2) == [3.0] * 7


def test_a_name_given_twice_is_rejected():
    with pytest.raises(ParameterError, match=r"'constraints\.fr3_joint1\.goal_tolerance' is given twice"):
        config.resolve(
            {
                "constraints.fr3_joint1.goal_tolerance": 0.1,
                "constraints": {"fr3_joint1": {"goal_tolerance": 0.2}},
            }
        )


def test_a_config_of_another_type_is_a_type_error():
    with pytest.raises(TypeError, match="config must be"):
        config.resolve(42)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("given", "name", "value_text"),
    [
        ({"update_rate": 333}, "update_rate", "333"),
        ({"constraints.fr3_joint2.path_tolerance": -0.1}, "constraints.fr3_joint2.path_tolerance", "-0.1"),
        ({"default_goal_tolerance": -0.5}, "default_goal_tolerance", "-0.5"),
        ({"stop_accelerations": [5.0] * 6}, "stop_accelerations", str([5.0] * 6)),
        ({"stop_accelerations": [5.0, 5.0, 0.0, 5.0, 5.0, 5.0, 5.0]}, "stop_accelerations", "0.0"),
        ({"time_scale_percentage": 150.0}, "time_scale_percentage", "150.0"),
        ({"gravity_vector": [0.0, float("nan"), -9.81]}, "gravity_vector", "nan"),
    ],
)
def test_an_invalid_value_raises_a_parameter_error_naming_parameter_and_value(given, name, value_text):
    with pytest.raises(ParameterError) as info:
        config.resolve(given)
    assert type(info.value) is ParameterError  # not wrapped in another type
    assert info.value.name == name
    assert f"'{name}'" in str(info.value)
    assert value_text in str(info.value)
    assert "violates" in str(info.value)  # the rule


def test_an_unknown_parameter_is_named():
    with pytest.raises(ParameterError, match="unknown parameter 'update_rat'"):
        config.resolve(update_rat=500)


def test_an_invalid_value_from_a_file_is_located_at_its_line(tmp_path):
    path = _write(tmp_path, FILE_TEXT.replace("update_rate: 500", "update_rate: 333"))
    with pytest.raises(ParameterError) as info:
        config.resolve(path)
    assert str(info.value).startswith(f"{path}:3: parameter 'update_rate' = 333")
    # The same bad value as an override is not the file's: no file location.
    with pytest.raises(ParameterError) as info:
        config.resolve(_write(tmp_path, FILE_TEXT, "good.yaml"), update_rate=333)
    assert str(info.value).startswith("parameter 'update_rate' = 333")


# ---------------------------------------------------------------------------------------------- robots
def test_fr3_names_equal_the_schema_defaults():
    spec = robots.robot_spec("fr3")
    defaults = default_schema().defaults()
    assert defaults["joints"] == list(spec.joint_names) == FR3_JOINTS
    assert defaults["base_frame"] == spec.base_frame
    assert defaults["sensor_frames"] == [spec.sensor_frame]
    assert defaults["ee_frames"] == [spec.ee_frame]


def test_panda_selects_panda_joints_and_frames():
    values = config.resolve(robot="panda")
    assert values["joints"] == PANDA_JOINTS
    assert values["base_frame"] == "panda_link0"
    assert values["sensor_frames"] == ["panda_ft_sensor"]
    assert values["ee_frames"] == ["panda_ee"]
    assert "constraints.panda_joint1.goal_tolerance" in values
    assert "constraints.fr3_joint1.goal_tolerance" not in values
    native = config.native_config(values)
    assert native.joint_names == PANDA_JOINTS
    assert native.base_frame == "panda_link0"
    assert [(t.sensor_frame, t.ee_frame) for t in native.tips] == [("panda_ft_sensor", "panda_ee")]
    assert native.urdf_xml == robots.urdf_xml("panda")


def test_panda_from_a_file_with_panda_constraints(tmp_path):
    text = """\
jtac_controller:
  ros__parameters:
    robot: panda
    constraints:
      panda_joint4:
        goal_tolerance: 0.015
    ft_sensors:
      panda_ft_sensor:
        name: ati
"""
    values = config.resolve(_write(tmp_path, text))
    assert values["joints"] == PANDA_JOINTS
    goal = list(config.native_parameters(values).trajectory.default_goal_tolerance_rad)
    assert goal == [0.05, 0.05, 0.05, 0.015, 0.05, 0.05, 0.05]
    assert config.native_config(values).has_force_torque_sensor is True


def test_given_names_win_over_the_robots():
    values = config.resolve(robot="panda", base_frame="panda_link1", ee_frames=["panda_tcp"])
    assert values["base_frame"] == "panda_link1"
    assert values["ee_frames"] == ["panda_tcp"]
    assert values["joints"] == PANDA_JOINTS  # not given: still the panda's
    assert values["sensor_frames"] == ["panda_ft_sensor"]


def test_an_unknown_robot_is_a_parameter_error():
    with pytest.raises(ParameterError, match=r"parameter 'robot' = 'ur5' violates one_of"):
        config.resolve(robot="ur5")


# ---------------------------------------------------------------------------------------------- URDF
def test_robot_description_precedence(tmp_path):
    urdf_file = _write(tmp_path, "<robot name='from_file'/>", "arm.urdf")
    inline = "<robot name='inline'/>"
    assert (
        config.robot_description(config.resolve(robot_description=inline, urdf_path=str(urdf_file))) == inline
    )
    assert config.robot_description(config.resolve(urdf_path=str(urdf_file))) == "<robot name='from_file'/>"
    assert config.robot_description(config.resolve()) == robots.urdf_xml("fr3")
    assert config.robot_description(config.resolve(robot="panda")) == robots.urdf_xml("panda")


@pytest.mark.parametrize("kind", ["missing", "directory", "empty"])
def test_an_unreadable_urdf_path_is_a_parameter_error_naming_it(tmp_path, kind):
    path = {
        "missing": tmp_path / "nope.urdf",
        "directory": tmp_path,
        "empty": _write(tmp_path, "  \n", "empty.urdf"),
    }[kind]
    values = config.resolve(urdf_path=str(path))
    with pytest.raises(ParameterError) as info:
        config.robot_description(values)
    assert info.value.name == "urdf_path"
    assert str(info.value).startswith(f"parameter 'urdf_path' = {str(path)!r}")
    with pytest.raises(ParameterError, match="urdf_path"):
        config.make_controller(values)


# ---------------------------------------------------------------------------------------------- controller
def _two_point_goal(joints: list[str], start: np.ndarray, end: np.ndarray, duration_s: float) -> object:
    points = [
        _native.GoalPoint(0.0, list(start), [0.0] * 7),
        _native.GoalPoint(duration_s, list(end), [0.0] * 7),
    ]
    return _native.JtacGoal(_native.TrajectoryGoal(joints, points))


@pytest.mark.parametrize("robot", ["fr3", "panda"])
def test_make_controller_runs_a_two_point_goal(robot):
    values = config.resolve(robot=robot, max_trajectory_points=16)
    ctrl = config.make_controller(values)
    assert ctrl.joint_names == values["joints"]
    assert ctrl.num_joints == 7
    assert ctrl.num_tips == 1
    assert ctrl.has_force_torque_sensor is False
    assert ctrl.is_active is False  # configured, not activated

    ctrl.activate()
    q = np.array(robots.robot_spec(robot).q_home_rad)
    dq = np.zeros(7)
    t = 1.0
    ctrl.update(t, DT_S, q, dq)
    target = q + np.array([0.1, -0.1, 0.05, 0.1, 0.0, 0.1, -0.2])  # [rad]
    result = ctrl.submit_goal(_two_point_goal(values["joints"], q, target, 0.5), t)
    assert result.code == _native.ResultCode.SUCCESSFUL, result.message
    events = []
    for _ in range(700):  # 0.7 s: the 0.5 s trajectory and some margin
        t += DT_S
        out = ctrl.update(t, DT_S, q, dq)
        q, dq = out.command_position_rad, out.command_velocity_rad_s  # the arm follows exactly
        events += ctrl.poll_events()
    assert np.allclose(q, target, atol=1e-9)
    assert [e.type for e in events][-1] == _native.EventType.GOAL_SUCCEEDED


def test_make_controller_uses_the_stop_accelerations_and_tolerances_it_was_given():
    values = config.resolve(max_trajectory_points=16, **{"constraints.fr3_joint1.goal_tolerance": 0.01})
    ctrl = config.make_controller(values)
    ctrl.activate()
    q = np.array(robots.robot_spec("fr3").q_home_rad)
    ctrl.update(1.0, DT_S, q, np.zeros(7))
    # A goal with more points than max_trajectory_points (16) is refused: the capacity arrived.
    points = [_native.GoalPoint(0.1 * (i + 1), list(q)) for i in range(17)]
    goal = _native.JtacGoal(_native.TrajectoryGoal(FR3_JOINTS, points))
    result = ctrl.submit_goal(goal, 1.0)
    assert result.code == _native.ResultCode.INVALID_GOAL
    assert "17" in result.message and "16" in result.message


def test_make_controller_with_a_sensor_loads_the_urdf_frames():
    values = config.resolve(robot="panda", ft_sensor_name="ati")
    ctrl = config.make_controller(values)
    assert ctrl.has_force_torque_sensor is True
    assert ctrl.ee_frames == ["panda_ee"]
    assert ctrl.sensor_frames == ["panda_ft_sensor"]
    # With a sensor the core parses the URDF: the FR3 description lacks the panda frames.
    with pytest.raises(ValueError, match=re.escape("panda")):
        config.make_controller(values, urdf_xml=robots.urdf_xml("fr3"))


def test_native_parameters_of_a_runtime_update_are_accepted_by_set_parameters():
    values = config.resolve()
    ctrl = config.make_controller(values)
    updated = default_schema().validate_update(values, {"time_scale_percentage": 50.0})
    assert ctrl.set_parameters(config.native_parameters(updated)) == ""
    with pytest.raises(ParameterError, match="read_only"):
        default_schema().validate_update(values, {"update_rate": 500})


# ------------------------------------------------------------------------------------- external wrench
FRAMES = ["fr3_ft_sensor", "left_ft", "right_ft"]
SOURCES = ["device", "external", "none"]


def test_external_tip_gives_the_tip_and_the_reading_as_six_floats():
    tip, wrench = config.external_tip(FRAMES, SOURCES, "left_ft", [1, 2, 3, 0.1, 0.2, 0.3])
    assert tip == 1
    assert wrench.dtype == np.float64 and wrench.tolist() == [1.0, 2.0, 3.0, 0.1, 0.2, 0.3]


@pytest.mark.parametrize(
    ("frame", "wrench", "message"),
    [
        ("elbow", [0.0] * 6, r"sensor_frame 'elbow' is not a sensor frame of this controller"),
        ("fr3_ft_sensor", [0.0] * 6, r"tip 0 reads the arm's own sensor"),
        ("right_ft", [0.0] * 6, r"tip 2 has no force/torque sensor"),
        ("left_ft", [0.0] * 5, r"feed_wrench\(left_ft\): wrench has 5 values, expected 6"),
    ],
)
def test_external_tip_refuses_what_no_external_sensor_reads(frame, wrench, message):
    with pytest.raises(ValueError, match=message):
        config.external_tip(FRAMES, SOURCES, frame, wrench)
