"""jtac_py.goals: the typed goals of the Python API and their defaults (no controller, no ROS)."""

import math

import numpy as np
import pytest

from jtac_py import _native, goals
from jtac_py.controller import Trajectory

JOINTS = ["j1", "j2"]


def test_trajectory_to_goal_is_the_bound_type():
    goal = Trajectory(times_s=[0.5, 1.0], positions_rad=[[0.1, 0.2], [0.3, 0.4]]).to_goal(JOINTS)
    assert isinstance(goal, _native.TrajectoryGoal)
    assert goal.joint_names == JOINTS
    assert [(p.time_from_start_s, p.positions_rad, p.velocities_rad_s) for p in goal.points] == [
        (0.5, [0.1, 0.2], []),
        (1.0, [0.3, 0.4], []),
    ]
    with pytest.raises(ValueError, match=r"trajectory.positions_rad must have shape \(2, 2\)"):
        Trajectory(times_s=[0.5, 1.0], positions_rad=[0.1, 0.2]).to_goal(JOINTS)


def test_a_dict_trajectory_takes_the_core_names_or_a_ros_points():
    core = goals.trajectory_goal(
        {"points": [{"time_from_start_s": 1.0, "positions_rad": [0.1, 0.2]}], "start_time_s": 3.0}, JOINTS
    )
    ros = goals.trajectory_goal(
        {"joint_names": JOINTS, "points": [{"time_from_start": 1.0, "positions": [0.1, 0.2]}]}, ["x"]
    )
    for goal in (core, ros):
        assert goal.joint_names == JOINTS
        assert (goal.points[0].time_from_start_s, goal.points[0].positions_rad) == (1.0, [0.1, 0.2])
    assert core.start_time_s == 3.0
    with pytest.raises(ValueError, match=r"trajectory.points\[0\]: unknown key 'position'"):
        goals.trajectory_goal({"points": [{"position": [0.1, 0.2]}]}, JOINTS)
    with pytest.raises(ValueError, match="trajectory: unknown key 'tolerance'"):
        goals.trajectory_goal({"points": [], "tolerance": 0.1}, JOINTS)
    with pytest.raises(TypeError, match="must be a Trajectory or a dict"):
        goals.trajectory_goal([0.1, 0.2], JOINTS)


def test_critical_damping_is_two_sqrt_m_k_times_the_ratio():
    assert goals.critical_damping([4.0, 1.0], [400.0, 50.0]) == pytest.approx([80.0, 2.0 * math.sqrt(50.0)])
    assert goals.critical_damping([4.0], [400.0], 0.5) == pytest.approx([40.0])
    assert goals.critical_damping([4.0], [-1.0]) == [0.0]  # no real root: zero, not NaN
    assert math.isnan(goals.critical_damping([math.nan], [1.0])[0])  # for the core to refuse


def test_tip_defaults():
    tip = goals.tip_goal({"mass": 4.0, "stiffness": 400.0})
    assert isinstance(tip, _native.TipGoal)
    assert tip.mass == [4.0] * 6 and tip.stiffness == [400.0] * 6  # a number stands for six axes
    assert tip.damping == pytest.approx([80.0] * 6)  # critical
    assert tip.selected_axes == [True] * 6  # every axis, when mass and stiffness are given
    # Empty damping is "not given" (a ROS message's empty array); empty selected_axes is kept.
    tip = goals.tip_goal({"mass": [1.0] * 6, "stiffness": [100.0] * 6, "damping": [], "selected_axes": []})
    assert tip.damping == pytest.approx([20.0] * 6) and tip.selected_axes == []
    # Given values are kept.
    tip = goals.tip_goal({"mass": 1.0, "stiffness": 100.0, "damping": 3.0, "selected_axes": [False] * 6})
    assert tip.damping == [3.0] * 6 and tip.selected_axes == [False] * 6
    # Without stiffness nothing is defaulted.
    tip = goals.tip_goal({"mass": 1.0})
    assert tip.damping == [] and tip.selected_axes == []
    # A TipGoal goes through as it is.
    given = _native.TipGoal(mass=[1.0] * 6)
    assert goals.tip_goal(given).damping == []


def test_tip_errors_name_the_tip_and_the_field():
    with pytest.raises(ValueError, match=r"tips\[1\]: unknown key 'stifness'"):
        goals.tip_goals([{"mass": 1.0}, {"stifness": 1.0}])
    with pytest.raises(ValueError, match=r"tips\[0\].ee_pose_control must have shape \(4, 4\)"):
        goals.tip_goal({"ee_pose_control": np.eye(3)})


def test_jtac_goal_assembles_the_follow_arguments():
    given = Trajectory(times_s=[1.0], positions_rad=[[0.1, 0.2]]).to_goal(JOINTS)
    goal = goals.jtac_goal(
        given,
        JOINTS,
        admittance=[{"mass": 1.0, "stiffness": 100.0}, {"mass": 2.0, "stiffness": 200.0}],
        tolerances={"path": 0.1, "goal": [0.01, 0.02], "goal_time": 0.5},
        thresholds=[10.0] * 6,
        joint_damping_per_s=2.0,
    )
    assert isinstance(goal, _native.JtacGoal)
    assert goal.trajectory.path_tolerance_rad == [0.1, 0.1]
    assert goal.trajectory.goal_tolerance_rad == [0.01, 0.02]
    assert goal.trajectory.goal_time_tolerance_s == 0.5
    assert given.path_tolerance_rad == []  # the caller's TrajectoryGoal is not changed
    assert [t.damping for t in goal.tips] == [pytest.approx([20.0] * 6), pytest.approx([40.0] * 6)]
    assert goal.absolute_force_torque_threshold == [10.0] * 6 and goal.joint_damping_per_s == 2.0
    # No tolerances, no thresholds: empty fields, for the core's parameter defaults.
    plain = goals.jtac_goal(given, JOINTS)
    assert plain.tips == [] and plain.trajectory.path_tolerance_rad == []
    assert plain.absolute_force_torque_threshold == []
    with pytest.raises(ValueError, match=r"tolerances: unknown key\(s\) \['paths'\]"):
        goals.jtac_goal(given, JOINTS, tolerances={"paths": 0.1})
    with pytest.raises(ValueError, match=r"tolerances\.goal must be a number or 2 numbers"):
        goals.jtac_goal(given, JOINTS, tolerances={"goal": [0.1, 0.2, 0.3]})


def test_the_typed_tip_builder_holds_the_defaults_a_dict_gets():
    typed = goals.build_tip_goal(mass=4.0, stiffness=400.0, index=2)
    from_dict = goals.tip_goal({"mass": 4.0, "stiffness": 400.0}, 2)
    assert typed.damping == from_dict.damping == pytest.approx([80.0] * 6)
    assert typed.selected_axes == from_dict.selected_axes == [True] * 6
    # None = not given (the TipGoal's default); an empty list is given (a ROS message's "none").
    assert goals.build_tip_goal(mass=[1.0] * 6, stiffness=[100.0] * 6, selected_axes=[]).selected_axes == []
    with pytest.raises(ValueError, match=r"tips\[2\].ee_pose_control must have shape \(4, 4\)"):
        goals.build_tip_goal(ee_pose_control=np.eye(3), index=2)


# ------------------------------------------------------------------ Controller.submit's mapping


def _trajectory_fields(points=None, **fields):
    if points is None:
        points = [{"time_from_start_s": 0.5, "positions_rad": [0.0, 0.0]}]
    return {"joint_names": JOINTS, "points": points, **fields}


def test_a_goal_mapping_becomes_the_typed_goal_with_its_fields_as_given():
    goal = goals.as_jtac_goal(
        {
            "trajectory": _trajectory_fields(start_time_s=2.0, goal_tolerance_rad=[0.1, 0.2]),
            "tips": [{"mass": [1.0] * 6, "stiffness": [100.0] * 6}, _native.TipGoal(end_effector_frame="ee")],
            "joint_damping_per_s": 0.5,
            "absolute_force_torque_threshold": [30.0] * 6,
        }
    )
    assert isinstance(goal, _native.JtacGoal)
    assert goal.trajectory.joint_names == JOINTS and goal.trajectory.start_time_s == 2.0
    assert goal.trajectory.goal_tolerance_rad == [0.1, 0.2]
    assert [(p.time_from_start_s, p.positions_rad) for p in goal.trajectory.points] == [(0.5, [0.0, 0.0])]
    # No defaults of follow(): no critical damping, no selected axes.
    assert goal.tips[0].damping == [] and goal.tips[0].selected_axes == []
    assert goal.tips[1].end_effector_frame == "ee"
    assert goal.joint_damping_per_s == 0.5 and goal.absolute_force_torque_threshold == [30.0] * 6
    # Absent fields are the core struct's; a typed goal goes through as it is.
    plain = goals.as_jtac_goal({"trajectory": _native.TrajectoryGoal(JOINTS, [])})
    assert plain.tips == [] and plain.absolute_force_torque_threshold == []
    assert goals.as_jtac_goal(plain) is plain


def test_a_goal_mapping_is_checked_strictly():
    with pytest.raises(ValueError, match=r"points\[0\]: unknown key 'position'"):
        goals.as_jtac_goal(
            {"trajectory": _trajectory_fields([{"time_from_start_s": 1.0, "position": [0, 0]}])}
        )
    with pytest.raises(ValueError, match=r"goal\.trajectory: unknown key 'tolerance'"):
        goals.as_jtac_goal({"trajectory": _trajectory_fields(tolerance=[1.0])})
    with pytest.raises(ValueError, match="goal: unknown key 'tolerance'"):
        goals.as_jtac_goal({"trajectory": _trajectory_fields(), "tolerance": [1.0]})
    with pytest.raises(ValueError, match=r"points\[0\]\.positions_rad must be a sequence of numbers"):
        goals.as_jtac_goal(
            {"trajectory": _trajectory_fields([{"time_from_start_s": 1.0, "positions_rad": "abc"}])}
        )
    with pytest.raises(ValueError, match=r"tips\[0\]: unknown key 'stifness'"):
        goals.as_jtac_goal({"trajectory": _trajectory_fields([]), "tips": [{"stifness": [1] * 6}]})
    with pytest.raises(ValueError, match="goal: 'trajectory' is missing"):
        goals.as_jtac_goal({"tips": []})
    with pytest.raises(TypeError, match=r"tips\[0\] must be a TipGoal or a dict, got str"):
        goals.as_jtac_goal({"trajectory": _trajectory_fields([]), "tips": ["stiff"]})
    with pytest.raises(TypeError, match="goal must be a JtacGoal or a dict, got list"):
        goals.as_jtac_goal([1, 2, 3])
