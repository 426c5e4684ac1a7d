"""Example 03: the ROS 2 controller node on the simulated FR3, driven as MoveIt and a user would.

1. Starts the node (``jtac_ros.JtacNode``: lifecycle configure + activate) on the simulated arm
   in real time, and a client node on its own DDS participant (localhost only).
2. Sends a MoveIt-style ``control_msgs/FollowJointTrajectory`` goal (per-joint JointTolerance, a
   settling time) to ``~/moveit/follow_joint_trajectory``.
3. Tares the force/torque sensor through ``~/zero_fts/fr3_ft_sensor``.
4. Sends a ``FollowJointTrajectoryWithAdmittance`` goal, compliant in x/y/z, pushes the simulated arm
   with 15 N for 1 s (the simulator's push API: no ROS interface pushes a real robot), and halves the
   speed mid-motion through the ``time_scale_percentage`` parameter.
5. Prints every result (code and message), the peak deflection seen in the feedback, and how much the
   time scale lengthened the motion.

Run: .venv/bin/python examples/03_ros_node_on_the_simulated_arm.py (sets a localhost-only random domain).
"""

from __future__ import annotations

import math
import os
import random
import sys
import threading
import time

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 101)))

import numpy as np
import rclpy
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance, JointTrajectoryControllerState
from jtac.action import FollowJointTrajectoryWithAdmittance
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.action import ActionClient
from rclpy.executors import MultiThreadedExecutor
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectoryPoint

from jtac_ros import DEFAULT_NODE_NAME, JtacNode

NS = f"/{DEFAULT_NODE_NAME}"
DELTA = np.array([0.25, -0.2, 0.15, 0.25, -0.25, 0.2, 0.35])  # [rad]


def duration(seconds: float) -> Duration:
    return Duration(sec=int(seconds), nanosec=round((seconds - int(seconds)) * 1e9))


def quintic_points(start: np.ndarray, goal: np.ndarray, seconds: float, samples: int = 30) -> list:
    points = []
    for k in range(1, samples + 1):
        s = k / samples
        p = 10 * s**3 - 15 * s**4 + 6 * s**5
        v = (30 * s**2 - 60 * s**3 + 30 * s**4) / seconds
        points.append(
            JointTrajectoryPoint(
                positions=list(start + p * (goal - start)),
                velocities=list(v * (goal - start)),
                time_from_start=duration(s * seconds),
            )
        )
    return points


def wait(future, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not future.done():
        if time.monotonic() > deadline:
            raise TimeoutError("no answer from the node")
        time.sleep(0.005)
    return future.result()


def main() -> int:
    # --- the node, on its own context (its own DDS participant), as `jtac run` would start it
    node_context = rclpy.context.Context()
    rclpy.init(context=node_context)
    node = JtacNode(
        context=node_context,
        parameter_overrides=[
            rclpy.parameter.Parameter("default_path_tolerance", value=0.25),
            rclpy.parameter.Parameter("default_goal_time_tolerance", value=0.5),
        ],
    )
    node_executor = MultiThreadedExecutor(num_threads=8, context=node_context)
    node_executor.add_node(node)
    node_spinner = threading.Thread(target=node_executor.spin, daemon=True)
    node_spinner.start()
    node.trigger_configure()
    node.trigger_activate()
    arm = node._controller.hardware  # the simulator, for the push only

    # --- a client, on another context
    context = rclpy.context.Context()
    rclpy.init(context=context)
    client = rclpy.create_node("jtac_example_client", context=context)
    executor = MultiThreadedExecutor(num_threads=4, context=context)
    executor.add_node(client)
    client_spinner = threading.Thread(target=executor.spin, daemon=True)
    client_spinner.start()
    states: list[JointTrajectoryControllerState] = []
    client.create_subscription(JointTrajectoryControllerState, f"{NS}/controller_state", states.append, 50)
    moveit = ActionClient(client, FollowJointTrajectory, f"{NS}/moveit/follow_joint_trajectory")
    admittance = ActionClient(client, FollowJointTrajectoryWithAdmittance, f"{NS}/follow_joint_trajectory")
    tare = client.create_client(Trigger, f"{NS}/zero_fts/fr3_ft_sensor")
    set_parameters = client.create_client(SetParameters, f"{NS}/set_parameters")
    assert moveit.wait_for_server(timeout_sec=10) and admittance.wait_for_server(timeout_sec=10)
    assert tare.wait_for_service(timeout_sec=10) and set_parameters.wait_for_service(timeout_sec=10)
    while not states:
        time.sleep(0.01)
    q0 = np.array(states[-1].output.positions)
    ok = True

    # 1. MoveIt's path: control_msgs/FollowJointTrajectory with per-joint tolerances.
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(states[-1].joint_names)
    goal.trajectory.points = quintic_points(q0, q0 + DELTA, 2.0)
    goal.path_tolerance = [JointTolerance(name=n, position=0.1) for n in goal.trajectory.joint_names]
    goal.goal_tolerance = [JointTolerance(name="fr3_joint7", position=0.02)]
    goal.goal_time_tolerance = duration(0.5)
    handle = wait(moveit.send_goal_async(goal))
    result = wait(handle.get_result_async()).result
    print(f"MoveIt goal: {result.error_code} {result.error_string}")
    ok &= result.error_code == 0

    # 2. Tare the sensor at rest.
    response = wait(tare.call_async(Trigger.Request()))
    print(f"zero_fts: success={response.success} {response.message}")
    ok &= response.success

    # 3. An admittance goal back home, pushed mid-way, slowed to 50 % mid-motion.
    goal = FollowJointTrajectoryWithAdmittance.Goal()
    goal.trajectory.joint_names = list(states[-1].joint_names)
    goal.trajectory.points = quintic_points(q0 + DELTA, q0, 3.0)
    a = goal.admittance_parameters
    a.mass, a.stiffness = [4.0, 4.0, 4.0, 1.0, 1.0, 1.0], [400.0, 400.0, 400.0, 50.0, 50.0, 50.0]
    a.damping = [2.0 * math.sqrt(m * k) for m, k in zip(a.mass, a.stiffness, strict=True)]
    a.selected_axes = [True, True, True, False, False, False]
    peak_offset = [0.0]

    def on_feedback(msg) -> None:
        f = msg.feedback
        peak_offset[0] = max(peak_offset[0], float(np.abs(np.array(f.error.positions)).max()))

    started = time.monotonic()
    handle = wait(admittance.send_goal_async(goal, feedback_callback=on_feedback))
    time.sleep(0.8)
    arm.push([0.0, 15.0, 0.0], 1.0)
    print("pushed the tool with 15 N along +y for 1 s")
    time.sleep(0.4)
    value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=50.0)
    request = SetParameters.Request(parameters=[Parameter(name="time_scale_percentage", value=value)])
    print(f"time_scale_percentage := 50: {wait(set_parameters.call_async(request)).results[0].successful}")
    result = wait(handle.get_result_async()).result
    elapsed = time.monotonic() - started
    print(f"admittance goal: {result.error_code} {result.error_message}")
    print(f"  peak |desired − actual| during the push {1e3 * peak_offset[0]:.1f} mrad (the compliant yield)")
    print(f"  took {elapsed:.2f} s for a 3.0 s trajectory (the last part at half speed)")
    ok &= result.error_code == 0 and elapsed > 3.5 and peak_offset[0] > 0.01

    moveit.destroy()
    admittance.destroy()
    # Each spin thread ends before its context does (a spin on a dead context raises).
    executor.shutdown(timeout_sec=5.0)
    client_spinner.join(timeout=5.0)
    client.destroy_node()
    rclpy.shutdown(context=context)
    node.trigger_shutdown()
    node_executor.shutdown(timeout_sec=5.0)
    node_spinner.join(timeout=5.0)
    node.destroy_node()
    rclpy.shutdown(context=node_context)
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
