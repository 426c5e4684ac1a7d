"""Example 01: what jtac can do end to end today (before the simulated control loop lands).

1. Loads the FR3 description and builds jtac_core's kinematics (C++ / Pinocchio) on it.
2. Samples a joint trajectory from the home pose and prints the tool-centre-point path, checked
   against MuJoCo's kinematics of the same arm.
3. Sends that trajectory as a FollowJointTrajectoryWithAdmittance goal over ROS 2 (DDS on
   localhost) to a small in-process action server, which streams feedback and returns a result.

Run: .venv/bin/python examples/01_kinematics_and_action_roundtrip.py   (or `make demo`)
"""

import os
import random
import sys
import threading

import mujoco
import numpy as np

from jtac_py import Kinematics, robots

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 101)))

ROBOT = "fr3"
DURATION_S = 2.0
N_POINTS = 5


def sample_trajectory(q_start, q_goal):
    """Quintic (rest to rest) samples from q_start to q_goal: times [s] and positions [rad]."""
    t = np.linspace(0.0, DURATION_S, N_POINTS)
    s = t / DURATION_S
    blend = 10 * s**3 - 15 * s**4 + 6 * s**5
    return t, q_start + np.outer(blend, q_goal - q_start)


def tcp_path(times, positions):
    """TCP positions [m] in the base frame from jtac_core, and the largest gap to MuJoCo's."""
    kin = Kinematics()
    kin.configure(robots.urdf_xml(ROBOT), f"{ROBOT}_link0", robots.joint_names(ROBOT))
    model = mujoco.MjModel.from_xml_string(robots.mjcf_xml(ROBOT))
    data = mujoco.MjData(model)
    tcp_body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f"{ROBOT}_tcp")
    path, worst = [], 0.0
    for q in positions:
        p = kin.forward(q, f"{ROBOT}_tcp")[:3, 3]
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        worst = max(worst, float(np.abs(p - data.xpos[tcp_body]).max()))
        path.append(p)
    return np.array(path), worst


def action_roundtrip(times, positions):
    """Sends the trajectory to an in-process action server; returns (feedback count, result)."""
    import rclpy
    from builtin_interfaces.msg import Duration
    from jtac.action import FollowJointTrajectoryWithAdmittance as Fjta
    from rclpy.action import ActionClient, ActionServer
    from rclpy.executors import MultiThreadedExecutor
    from trajectory_msgs.msg import JointTrajectoryPoint

    rclpy.init()
    server_node = rclpy.create_node("example_server")
    client_node = rclpy.create_node("example_client")

    def execute(handle):
        for point in handle.request.trajectory.points:
            handle.publish_feedback(
                Fjta.Feedback(joint_names=handle.request.trajectory.joint_names, desired=point, actual=point)
            )
        handle.succeed()
        n = len(handle.request.trajectory.points)
        return Fjta.Result(error_code=Fjta.Result.SUCCESSFUL, error_message=f"received {n} points")

    ActionServer(server_node, Fjta, "example/follow_joint_trajectory", execute)
    client = ActionClient(client_node, Fjta, "example/follow_joint_trajectory")
    executor = MultiThreadedExecutor()
    executor.add_node(server_node)
    executor.add_node(client_node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        if not client.wait_for_server(timeout_sec=30.0):
            raise RuntimeError("action server not discovered on localhost")
        goal = Fjta.Goal()
        goal.trajectory.joint_names = list(robots.joint_names(ROBOT))
        for t, q in zip(times, positions, strict=True):
            sec = int(t)
            goal.trajectory.points.append(
                JointTrajectoryPoint(
                    positions=q.tolist(), time_from_start=Duration(sec=sec, nanosec=int((t - sec) * 1e9))
                )
            )
        goal.admittance_parameters.mass = [10.0, 10.0, 10.0, 1.0, 1.0, 1.0]
        goal.admittance_parameters.stiffness = [500.0, 500.0, 500.0, 50.0, 50.0, 50.0]
        goal.admittance_parameters.damping = [140.0, 140.0, 140.0, 14.0, 14.0, 14.0]
        goal.admittance_parameters.selected_axes = [True, True, True, False, False, False]
        feedback = []
        handle = client.send_goal_async(goal, feedback_callback=feedback.append)
        done = threading.Event()
        handle.add_done_callback(lambda _: done.set())
        if not done.wait(30.0):
            raise RuntimeError("goal not answered")
        result_future = handle.result().get_result_async()
        finished = threading.Event()
        result_future.add_done_callback(lambda _: finished.set())
        if not finished.wait(30.0):
            raise RuntimeError("no result")
        return len(feedback), result_future.result().result
    finally:
        executor.shutdown(timeout_sec=5.0)
        spinner.join(timeout=5.0)
        server_node.destroy_node()
        client_node.destroy_node()
        rclpy.shutdown()


def main():
    print("jtac demo: kinematics + ROS 2 action round trip. The simulated arm executing a trajectory")
    print("with admittance is the demo: examples/02_simulated_arm_with_admittance.py.\n")
    spec = robots.robot_spec(ROBOT)
    q_home = np.array(spec.q_home_rad)
    q_goal = q_home + np.array([0.4, -0.2, 0.0, 0.3, 0.0, 0.2, 0.0])
    times, positions = sample_trajectory(q_home, q_goal)
    path, worst = tcp_path(times, positions)
    print(f"{'t [s]':>6}  {'TCP x [m]':>10} {'y [m]':>8} {'z [m]':>8}")
    for t, p in zip(times, path, strict=True):
        print(f"{t:6.2f}  {p[0]:10.4f} {p[1]:8.4f} {p[2]:8.4f}")
    print(f"jtac_core vs MuJoCo kinematics: largest difference {worst:.1e} m")
    n_feedback, result = action_roundtrip(times, positions)
    code, message = result.error_code, result.error_message
    print(f"action round trip: {n_feedback} feedback messages, result {code} ({message})")
    ok = worst < 1e-9 and result.error_code == 0 and n_feedback > 0
    print("demo OK" if ok else "demo FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
