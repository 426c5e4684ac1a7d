"""Example 06: pick and place with the Franka Hand on the simulated FR3.

What runs: the MuJoCo FR3 with its Franka Hand and a 40 mm box on a pedestal (``GraspObject``),
jtac's hardware and controller threads, and the hand's own controller inside the simulated device.
The arm starts 10 cm above the box: a goal down to the pick pose (the box between the open fingers),
a grasp (``controller.gripper.grasp``, awaited: it must hold the box), a goal up 10 cm and 20 cm
sideways; there the hand opens (``move``) and the box drops to the floor. The recording
holds the hand's series (state, commands, results) on the controller's clock next to the arm's
cycles.

Prints the grasp's result, how high the box was carried, where it came to rest and the hand's
series. Exits non-zero when a check fails.

Run: .venv/bin/python examples/06_pick_and_place.py [--lockstep]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from jtac_py import Controller, Kinematics, ResultCode, SimulatedArm, Trajectory, robots

OBJECT_WIDTH_M = 0.04  # along the fingers' axis [m]
APPROACH_M = 0.10  # the start pose is this far above the pick pose [m]
LIFT_M, SIDEWAYS_M = 0.10, 0.20  # the place pose: up and along the base's y axis [m]


def ik_offset(kinematics, q_rad: np.ndarray, tcp: str, offset_m: np.ndarray) -> np.ndarray:
    """Joint positions [rad] that put the TCP offset_m [m, base axes] from where it is at q_rad, with
    the same orientation: damped least squares on the position and orientation error."""
    target = kinematics.forward(q_rad, tcp)
    target[:3, 3] += offset_m
    q = np.array(q_rad, dtype=float)
    for _ in range(100):
        pose = kinematics.forward(q, tcp)
        rotation = target[:3, :3] @ pose[:3, :3].T
        angle_axis = 0.5 * np.array(
            [
                rotation[2, 1] - rotation[1, 2],
                rotation[0, 2] - rotation[2, 0],
                rotation[1, 0] - rotation[0, 1],
            ]
        )
        error = np.concatenate([target[:3, 3] - pose[:3, 3], angle_axis])
        if np.abs(error).max() < 1e-7:
            break
        jacobian = kinematics.jacobian(q, tcp)
        q += jacobian.T @ np.linalg.solve(jacobian @ jacobian.T + 1e-6 * np.eye(6), error)
    return q


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lockstep", action="store_true", help="virtual clock (deterministic, fast)")
    args = parser.parse_args()
    spec = robots.robot_spec("fr3")
    q_start = np.array(spec.q_home_rad)
    kinematics = Kinematics()  # the arm with its hand, for the poses
    kinematics.configure(robots.urdf_xml("fr3", hand=True), "fr3_link0", robots.joint_names("fr3"))
    q_pick = ik_offset(kinematics, q_start, "fr3_tcp", np.array([0.0, 0.0, -APPROACH_M]))
    q_place = ik_offset(kinematics, q_pick, "fr3_tcp", np.array([0.0, SIDEWAYS_M, LIFT_M]))
    box = robots.GraspObject(OBJECT_WIDTH_M, at_q_rad=tuple(q_pick))
    arm = SimulatedArm(
        "fr3",
        clock="lockstep" if args.lockstep else "realtime",
        hand=True,
        grasp_object=box,
        q_init_rad=q_start,
    )
    controller = Controller(arm).start()
    hand = controller.gripper
    box_at_start = arm.frame_pose(robots.GRASP_OBJECT_BODY)[:3, 3].copy()
    try:
        with controller.record(
            ["time", "q", "gripper_time", "gripper_width_m", "gripper_command_kind"]
        ) as rec:
            down = controller.follow(Trajectory.quintic(q_start, q_pick, 3.0), timeout=10.0)
            grasp = hand.grasp(OBJECT_WIDTH_M, speed_m_s=0.1, force_n=20.0).result(timeout=5.0)
            held_width_m = hand.state.width_m
            up = controller.follow(Trajectory.quintic(q_pick, q_place, 3.0), timeout=10.0)
            box_carried = arm.frame_pose(robots.GRASP_OBJECT_BODY)[:3, 3].copy()
            release = hand.move(0.08).result(timeout=5.0)
            rest = controller.follow(Trajectory.quintic(q_place, q_place, 1.0), timeout=10.0)  # the box falls
            box_at_end = arm.frame_pose(robots.GRASP_OBJECT_BODY)[:3, 3].copy()
        data = rec.data()
    finally:
        controller.stop()
    lifted_m = box_carried[2] - box_at_start[2]
    moved_m = float(np.linalg.norm((box_at_end - box_at_start)[:2]))
    fell_m = box_carried[2] - box_at_end[2]  # released: it dropped off the fingers
    print(f"goals: down {down.code.name}, up and across {up.code.name}, wait {rest.code.name}")
    print(
        f"grasp: {grasp.code.name} in {grasp.duration_s:.2f} s, the fingers at {held_width_m * 1e3:.1f} "
        f"mm on the {OBJECT_WIDTH_M * 1e3:.0f} mm box; release: {release.code.name} in "
        f"{release.duration_s:.2f} s"
    )
    print(
        f"box carried {lifted_m * 1e3:.0f} mm up; released, it fell {fell_m * 1e3:.0f} mm and came to rest "
        f"{moved_m * 1e3:.0f} mm from where it stood"
    )
    commands, widths_mm = data["gripper_command_kind"].tolist(), data["gripper_width_m"] * 1e3
    print(
        f"recorded: {len(data['time'])} cycles, {len(data['gripper_time'])} hand states, commands "
        f"{commands}; widths {widths_mm.min():.1f}..{widths_mm.max():.1f} mm"
    )
    ok = all(r.code == ResultCode.SUCCESSFUL for r in (down, up, rest))
    ok = ok and grasp.grasped and abs(held_width_m - OBJECT_WIDTH_M) < 0.005 and release.success
    ok = ok and lifted_m > 0.8 * LIFT_M and moved_m > 0.8 * SIDEWAYS_M and fell_m > 0.05
    ok = ok and commands == ["grasp", "move"]
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
