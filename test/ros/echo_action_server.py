"""A tiny action server for the interface round-trip tests (not the controller).

Serves jtac/action/FollowJointTrajectoryWithAdmittance and control_msgs/action/FollowJointTrajectory
on ``/echo/follow_joint_trajectory`` and ``/echo/follow_joint_trajectory_moveit``: it checks the
goal's array sizes, publishes one feedback per trajectory point with the point as ``desired``, and
replies with a result that echoes what it received, so the client can check every field crossed DDS.
"""

import sys

import rclpy
from control_msgs.action import FollowJointTrajectory
from jtac.action import FollowJointTrajectoryWithAdmittance as Fjta
from rclpy.action import ActionServer, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectoryPoint


def _check_sizes(goal):
    """Returns an error message for the first inconsistent array, or '' when the goal is well formed."""
    n = len(goal.trajectory.joint_names)
    for i, point in enumerate(goal.trajectory.points):
        if len(point.positions) != n:
            return f"trajectory.points[{i}].positions has {len(point.positions)} values, expected {n}"
    return ""


class EchoServer(Node):
    def __init__(self):
        super().__init__("echo")
        group = ReentrantCallbackGroup()
        self.jtac_server = ActionServer(
            self,
            Fjta,
            "~/follow_joint_trajectory",
            self.execute_jtac,
            goal_callback=lambda _: GoalResponse.ACCEPT,
            callback_group=group,
        )
        self.moveit_server = ActionServer(
            self,
            FollowJointTrajectory,
            "~/follow_joint_trajectory_moveit",
            self.execute_moveit,
            goal_callback=lambda _: GoalResponse.ACCEPT,
            callback_group=group,
        )

    def _feedback(self, handle, action, goal):
        for point in goal.trajectory.points:
            feedback = action.Feedback()
            feedback.header.stamp = self.get_clock().now().to_msg()
            feedback.joint_names = list(goal.trajectory.joint_names)
            feedback.desired = point
            feedback.actual = point
            feedback.error = JointTrajectoryPoint(positions=[0.0] * len(point.positions))
            handle.publish_feedback(feedback)

    def execute_jtac(self, handle):
        goal = handle.request
        result = Fjta.Result()
        error = _check_sizes(goal)
        if error:
            handle.abort()
            result.error_code = Fjta.Result.INVALID_GOAL
            result.error_message = error
            return result
        self._feedback(handle, Fjta, goal)
        handle.succeed()
        tips = [goal.admittance_parameters, *goal.additional_tips]
        result.error_code = Fjta.Result.SUCCESSFUL
        result.error_message = (
            f"points={len(goal.trajectory.points)} tips={len(tips)} "
            f"frames={','.join(t.end_effector_frame or '-' for t in tips)} "
            f"mass0={list(goal.admittance_parameters.mass)} "
            f"threshold={list(goal.absolute_force_torque_threshold)} "
            f"settle={goal.goal_time_tolerance.sec}.{goal.goal_time_tolerance.nanosec:09d}"
        )
        return result

    def execute_moveit(self, handle):
        goal = handle.request
        self._feedback(handle, FollowJointTrajectory, goal)
        handle.succeed()
        result = FollowJointTrajectory.Result()
        result.error_code = FollowJointTrajectory.Result.SUCCESSFUL
        result.error_string = ",".join(f"{t.name}:{t.position}" for t in goal.path_tolerance)
        return result


def main():
    rclpy.init()
    node = EchoServer()
    executor = MultiThreadedExecutor(num_threads=2)
    executor.add_node(node)
    print("READY", flush=True)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
