"""The controller node over real DDS (localhost, a random domain per session): actions, services,
topics, parameters and lifecycle, with the simulated FR3 running in real time.

The node runs in this process on its own rclpy context (its own DDS participant); the clients run
on another context, so every goal, feedback, result, service call and parameter change crosses DDS
(test/ros/node_rig.py).
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from control_msgs.action import FollowJointTrajectory  # noqa: E402
from control_msgs.msg import JointTolerance  # noqa: E402
from jtac.action import FollowJointTrajectoryWithAdmittance as Fjta  # noqa: E402
from node_rig import DELTA, JOINTS, _duration, _goal, _points  # noqa: E402
from rcl_interfaces.msg import Log  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

from jtac_ros.node import DEFAULT_NODE_NAME, JtacNode  # noqa: E402

pytestmark = pytest.mark.ros


# ============================================================================ goals


def test_a_goal_succeeds_with_feedback_and_the_arm_reaches_it(rig):
    feedback = []
    q0 = rig.q_cmd()
    result = rig.run(_goal(q0, q0 + DELTA, 1.0), feedback=lambda f: feedback.append(f.feedback))
    assert result.error_code == Fjta.Result.SUCCESSFUL, result.error_message
    # 100 Hz over ~1 s; the in-process node's executor, sharing the interpreter with the simulated arm
    # and the client, sometimes runs at a tenth of that.
    assert len(feedback) > 10
    f = feedback[-1]
    assert list(f.joint_names) == JOINTS
    np.testing.assert_allclose(
        np.array(f.error.positions), np.array(f.desired.positions) - np.array(f.actual.positions), atol=1e-12
    )
    time.sleep(0.1)
    np.testing.assert_allclose(np.array(rig.fresh_state().feedback.positions), q0 + DELTA, atol=0.02)


def test_rejections_carry_the_core_code_and_message(rig):
    q0 = rig.q_cmd()
    unknown = _goal(q0, q0 + 0.1, joints=[*JOINTS[:6], "elbow_of_nobody"])
    result = rig.run(unknown)
    assert result.error_code == Fjta.Result.INVALID_JOINTS
    assert "elbow_of_nobody" in result.error_message

    nan = _goal(q0, q0 + 0.1)
    nan.trajectory.points[3].positions[2] = math.nan
    result = rig.run(nan)
    assert result.error_code == Fjta.Result.INVALID_GOAL
    assert "fr3_joint3" in result.error_message and "nan" in result.error_message.lower()

    far = _goal(q0 + 0.3, q0 + 0.4)  # starts 0.3 rad from where the arm is commanded
    far.trajectory.points[0].time_from_start = _duration(0.0)
    result = rig.run(far)
    assert result.error_code == Fjta.Result.INVALID_GOAL
    assert "start" in result.error_message

    old = _goal(q0, q0 + 0.1, 0.5)
    old.trajectory.header.stamp = rig.client.get_clock().now().to_msg()
    old.trajectory.header.stamp.sec -= 10
    result = rig.run(old)
    assert result.error_code == Fjta.Result.OLD_HEADER_TIMESTAMP

    # Nothing was lost: the next good goal runs.
    assert rig.run(_goal(q0, q0 + 0.05, 0.5)).error_code == Fjta.Result.SUCCESSFUL


def test_cancel_stops_the_arm_and_returns_canceled(rig):
    q0 = rig.q_cmd()
    handle = rig.send(_goal(q0, q0 + DELTA, 2.0))
    time.sleep(0.8)
    rig.wait(handle.cancel_goal_async())
    response = rig.wait(handle.get_result_async())
    from action_msgs.msg import GoalStatus

    assert response.status == GoalStatus.STATUS_CANCELED
    time.sleep(0.1)
    assert np.abs(np.array(rig.fresh_state().output.velocities)).max() == 0.0


def test_a_new_goal_is_stitched_and_the_old_one_ends_minus_8_without_a_bump(rig):
    q0 = rig.q_cmd()
    first = rig.send(_goal(q0, q0 + DELTA, 2.0))
    time.sleep(0.7)
    # The second goal continues from where the active one is then, with a future start.
    stamp = rig.client.get_clock().now()
    start_at = stamp.nanoseconds * 1e-9 + 0.1
    s = (0.8) / 2.0  # progress of the first goal at start_at (approximately)
    p = 10 * s**3 - 15 * s**4 + 6 * s**5
    q_at = q0 + p * DELTA
    second = _goal(q_at, q0, 1.5)
    second.trajectory.header.stamp.sec = int(start_at)
    second.trajectory.header.stamp.nanosec = int((start_at - int(start_at)) * 1e9)
    second.trajectory.points.insert(
        0, JointTrajectoryPoint(positions=list(q_at), velocities=[], time_from_start=_duration(0.0))
    )
    n_before = len(rig.states)
    result_second = rig.run(second)
    result_first = rig.wait(first.get_result_async()).result
    assert result_first.error_code in (
        Fjta.Result.GOAL_ABORTED_DUE_TO_STITCHING,
        Fjta.Result.SUCCESSFUL,
    ), result_first.error_message
    if result_second.error_code == Fjta.Result.SUCCESSFUL:
        assert result_first.error_code == Fjta.Result.GOAL_ABORTED_DUE_TO_STITCHING
    # No bump: the commanded velocity never jumps between two 10 ms state messages.
    v = np.array([m.output.velocities for m in rig.states[n_before:] if len(m.output.velocities) == 7])
    assert np.abs(np.diff(v, axis=0)).max() < 10.0 * 0.02  # a_max 10 rad/s² over ≤ 20 ms


def test_time_scale_change_mid_goal_lengthens_execution(rig):
    q0 = rig.q_cmd()
    t0 = time.monotonic()
    assert rig.run(_goal(q0, q0 + DELTA, 1.5)).error_code == Fjta.Result.SUCCESSFUL
    nominal = time.monotonic() - t0
    t0 = time.monotonic()
    handle = rig.send(_goal(q0 + DELTA, q0, 1.5))
    time.sleep(0.3)
    assert rig.set_parameter("time_scale_percentage", 50.0).successful
    result = rig.wait(handle.get_result_async()).result
    slowed = time.monotonic() - t0
    assert result.error_code == Fjta.Result.SUCCESSFUL
    assert slowed > nominal + 0.5  # 1.2 s of trajectory at half speed: +1.2 s (minus the ramp)
    assert min(m.speed_scaling_factor for m in rig.states[-50:]) == pytest.approx(0.5, abs=0.01)


def test_tare_is_accepted_idle_and_refused_while_executing(rig):
    response = rig.tare()
    assert response.success, response.message
    q0 = rig.q_cmd()
    handle = rig.send(_goal(q0, q0 + DELTA, 1.5))
    time.sleep(0.4)
    response = rig.tare()
    assert not response.success and "goal" in response.message.lower()
    assert rig.wait(handle.get_result_async()).result.error_code == Fjta.Result.SUCCESSFUL


def test_read_only_parameters_are_refused_with_a_reason(rig):
    result = rig.set_parameter("update_rate", 500)
    assert not result.successful and "read" in result.reason.lower()
    result = rig.set_parameter("time_scale_percentage", 150.0)
    assert not result.successful and "time_scale_percentage" in result.reason
    rig.node.trigger_deactivate()
    result = rig.set_parameter("update_rate", 500)  # also while inactive
    assert not result.successful


def test_deactivate_mid_goal_aborts_at_once_with_invalid_state(rig):
    q0 = rig.q_cmd()
    handle = rig.send(_goal(q0, q0 + DELTA, 3.0))
    time.sleep(0.5)
    t0 = time.monotonic()
    rig.node.trigger_deactivate()
    result = rig.wait(handle.get_result_async()).result
    assert result.error_code == Fjta.Result.INVALID_STATE
    # At once: well before the goal's remaining 2.5 s (a margin for executors delayed by load).
    assert time.monotonic() - t0 < 2.0
    # While inactive, a goal is rejected at the action level, as JTC does, with the reason in the log.
    n_logs = len(rig.logs)
    assert not rig.wait(rig.action.send_goal_async(_goal(q0, q0 + 0.1))).accepted
    assert not rig.wait(rig.moveit.send_goal_async(FollowJointTrajectory.Goal())).accepted
    rig.wait_for(
        lambda: len([m for m in rig.log_lines(n_logs, Log.WARN) if "not active" in m.msg]) == 2,
        what=f"two WARN lines naming the inactive controller: {[(m.level, m.msg) for m in rig.logs]}",
    )
    lines = [m.msg for m in rig.log_lines(n_logs, Log.WARN) if "not active" in m.msg]
    assert "follow_joint_trajectory rejected" in lines[0] and "'inactive'" in lines[0]
    assert "moveit/follow_joint_trajectory rejected" in lines[1]
    n_states = len(rig.states)
    rig.node.trigger_activate()
    # A state published after the activation: the one before it is stale by the deactivation's time.
    rig.wait_for(lambda: len(rig.states) > n_states + 2, what="states after the activation")
    q = rig.q_cmd()
    assert rig.run(_goal(q, q0, 1.0)).error_code == Fjta.Result.SUCCESSFUL


def test_the_control_msgs_client_path(rig):
    q0 = rig.q_cmd()
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = JOINTS
    goal.trajectory.points = _points(q0, q0 + DELTA, 1.0)
    goal.goal_time_tolerance = _duration(0.5)
    goal.path_tolerance = [JointTolerance(name="fr3_joint1", position=-1.0)]
    goal.goal_tolerance = [JointTolerance(name="fr3_joint4", position=0.02)]
    result = rig.run(goal, client=rig.moveit)
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.error_string
    bad = FollowJointTrajectory.Goal()
    bad.trajectory.joint_names = JOINTS
    bad.trajectory.points = _points(q0 + DELTA, q0, 1.0)
    bad.path_tolerance = [JointTolerance(name="nobody", position=0.1)]
    result = rig.run(bad, client=rig.moveit)
    assert result.error_code == FollowJointTrajectory.Result.INVALID_JOINTS
    assert "nobody" in result.error_string


@pytest.mark.slow
def test_a_goal_storm_resolves_every_goal_exactly_once(rig):
    q0 = rig.q_cmd()
    results: dict[int, list[int]] = {}
    lock = threading.Lock()
    futures = []

    def on_result(index):
        def done(future):
            with lock:
                results.setdefault(index, []).append(future.result().result.error_code)

        return done

    def on_goal(index):
        def accepted(future):
            handle = future.result()
            assert handle.accepted
            result_future = handle.get_result_async()
            result_future.add_done_callback(on_result(index))
            futures.append(result_future)

        return accepted

    for i in range(300):
        target = q0 + (0.004 if i % 2 else -0.004)  # each preempts the last, near the arm
        goal = _goal(q0, target, 0.5)
        goal.trajectory.points.insert(
            0, JointTrajectoryPoint(positions=list(q0), time_from_start=_duration(0.0))
        )
        rig.action.send_goal_async(goal).add_done_callback(on_goal(i))
        time.sleep(1.0 / 30.0)
    deadline = time.monotonic() + 30.0
    while len(results) < 300 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(results) == 300, f"{300 - len(results)} goals never got a result"
    assert all(len(codes) == 1 for codes in results.values())
    codes = [c[0] for c in results.values()]
    assert Fjta.Result.SUCCESSFUL in codes and Fjta.Result.GOAL_ABORTED_DUE_TO_STITCHING in codes
    # The node is alive and the arm comes to rest (exactly: a finished goal holds its end). The
    # published states may trail the results on a loaded machine: wait for them, do not time them.
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        if np.abs(np.array(rig.states[-1].output.velocities)).max() == 0.0:
            break
        time.sleep(0.05)
    assert np.abs(np.array(rig.fresh_state().output.velocities)).max() == 0.0
    q = rig.q_cmd()
    assert rig.run(_goal(q, q0, 0.5)).error_code == Fjta.Result.SUCCESSFUL


def test_a_params_file_configures_the_node_and_a_bad_value_is_named(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(
        f"{DEFAULT_NODE_NAME}:\n  ros__parameters:\n    update_rate: 250\n"
        "    stop_accelerations: [4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]\n"
    )
    context = rclpy.context.Context()
    rclpy.init(args=["jtac", "--ros-args", "--params-file", str(good)], context=context)
    try:
        node = JtacNode(context=context)
        from rclpy.lifecycle import TransitionCallbackReturn

        assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
        assert node._controller.update_rate_hz == 250
        assert node.get_parameter("stop_accelerations").value == [4.0] * 7
        node.trigger_shutdown()
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"{DEFAULT_NODE_NAME}:\n  ros__parameters:\n    update_rate: 333\n")
    context = rclpy.context.Context()
    rclpy.init(args=["jtac", "--ros-args", "--params-file", str(bad)], context=context)
    try:
        with pytest.raises(Exception, match="update_rate") as error:
            JtacNode(context=context)
        assert "333" in str(error.value)
    finally:
        rclpy.shutdown(context=context)
