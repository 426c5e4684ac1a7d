"""Goal defaults over real DDS: an admittance goal sent without damping gets the critical damping
the Python API gives (jtac_py.goals), and the core runs it with that damping.

The node runs in this process, so the goal the node hands to its Controller is observed directly
(test/ros/node_rig.py: the node and the client on separate DDS participants).
"""

from __future__ import annotations

import math

import pytest

rclpy = pytest.importorskip("rclpy")

from jtac.action import FollowJointTrajectoryWithAdmittance as Fjta  # noqa: E402
from node_rig import DELTA, _goal  # noqa: E402

pytestmark = pytest.mark.ros


def _spy_on_submit(rig, monkeypatch):
    """The goals the node hands to its controller, in order."""
    controller = rig.node._controller
    submitted = []
    submit = controller.submit

    def spy(goal):
        submitted.append(goal)
        return submit(goal)

    monkeypatch.setattr(controller, "submit", spy)
    return submitted


def test_an_admittance_goal_without_damping_runs_with_the_critical_damping(rig, monkeypatch):
    submitted = _spy_on_submit(rig, monkeypatch)
    q0 = rig.q_cmd()
    goal = _goal(q0, q0 + 0.5 * DELTA, 1.0, compliant=True)
    params = goal.admittance_parameters
    mass, stiffness = list(params.mass), list(params.stiffness)
    params.damping = []  # not given
    result = rig.run(goal)
    assert result.error_code == Fjta.Result.SUCCESSFUL, result.error_message
    (core_goal,) = submitted
    (tip,) = core_goal.tips
    critical = [2.0 * math.sqrt(m * k) for m, k in zip(mass, stiffness, strict=True)]
    assert tip.damping == pytest.approx(critical, rel=1e-15)
    # A well-damped axis set: the core's intake has nothing to warn about.
    assert "warning" not in result.error_message

    # A damping of zero given is kept as given, and the core refuses the undamped axes, naming the
    # damping it was handed: the goal above, accepted, ran with the critical damping instead.
    q1 = rig.q_cmd()
    goal = _goal(q1, q1 - 0.5 * DELTA, 1.0, compliant=True)
    goal.admittance_parameters.damping = [0.0] * 6
    result = rig.run(goal)
    assert result.error_code == Fjta.Result.INVALID_GOAL
    assert submitted[-1].tips[0].damping == [0.0] * 6
    assert "D = 0 N·s/m" in result.error_message and "undamped" in result.error_message
