"""The simulated Franka arm (MuJoCo, with a force/torque sensor): ``SimulatedArm``.

It builds the MJCF of ``jtac_py.robots`` with the requested tool, and the matching URDF for the
controller's kinematics, so that simulation and controller agree on every frame:

- ``<robot>_ft_sensor``: the sensor's measurement frame at the flange (the wrench the tool exerts on
  the sensor, in sensor axes);
- ``<robot>_ee``: the end-effector (tool mounting) frame; ``<robot>_tcp``: the tool centre point.

Two clocks:

- ``clock="realtime"``: the simulated robot keeps its own 1 kHz steady clock, the hardware real-time
  thread and the controller thread run natively (what a real Franka looks like to the controller);
- ``clock="lockstep"``: nothing runs by itself; ``Controller.step()`` (or a blocking ``follow()``)
  advances the robot one 1 ms packet at a time on a virtual clock: deterministic, faster than real time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from jtac_py import _native, robots
from jtac_py.gripper import Gripper
from jtac_py.gripper.simulated_hand import SimulatedHand

__all__ = ["CLOCKS", "SimulatedArm"]

CLOCKS = ("realtime", "lockstep")


class SimulatedArm:
    """A simulated FR3 or Panda with an F/T sensor at the flange and an optional tool.

    Args:
        robot: "fr3" or "panda".
        clock: "realtime" (the arm's own 1 kHz clock) or "lockstep" (advanced by Controller.step()).
        tool_mass_kg: the mass of the tool below the sensor [kg]; the sensor reads its weight, which a
            goal's end_effector_mass/cog compensates.
        tool_cog_m: the tool's centre of gravity [m in the ee frame].
        tcp_offset_m: the tool centre point [m in the ee frame].
        q_init_rad: joint positions at start [rad]; default the robot's home pose.
        stiffness_nm_rad: the robot's joint stiffness [N·m/rad] (default Franka's Table 2 gains).
        damping_nm_s_rad: the robot's joint damping [N·m·s/rad] (default Franka's Table 2 gains).
        hand: a Franka Hand (0.73 kg, TCP 0.1034 m below the flange) in the model; ``gripper`` drives it.
        grasp_object: a ``robots.GraspObject`` (a box on a pedestal) between the open fingers when the
            arm is at its at_q_rad (default q_init_rad).
        base_pose: the 4x4 pose of the robot's base in the world [m] (default identity): where
            frame_pose() and push() put the arm, e.g. one of a pair (``jtac_py.arm_group``). The
            arm is simulated in a MuJoCo world of its own (gravity is along world -z whatever the
            base's yaw; a base that is not upright is refused), so two arms do not collide.
    """

    #: The simulated arm applies every command when it arrives, also one written late (the hardware
    #: thread's `late_commands` policy, see FrankaArm).
    late_commands = "applied"

    def __init__(
        self,
        robot: str = "fr3",
        *,
        clock: str = "realtime",
        tool_mass_kg: float = 0.0,
        tool_cog_m: Sequence[float] = (0.0, 0.0, 0.0),
        tcp_offset_m: Sequence[float] | None = None,
        q_init_rad: Sequence[float] | None = None,
        stiffness_nm_rad: Sequence[float] | None = None,
        damping_nm_s_rad: Sequence[float] | None = None,
        hand: bool = False,
        grasp_object: Any = None,
        base_pose: Sequence[Sequence[float]] | None = None,
    ) -> None:
        if clock not in CLOCKS:
            raise ValueError(f"clock must be one of {CLOCKS}, got {clock!r}")
        spec = robots.robot_spec(robot)
        self.robot = spec.name
        self.clock = clock
        self.joint_names = tuple(robots.joint_names(robot))
        self.prefix = self.joint_names[0].split("_joint")[0]
        q_init = np.asarray(spec.q_home_rad if q_init_rad is None else q_init_rad, dtype=float)
        if q_init.shape != (7,) or not np.all(np.isfinite(q_init)):
            raise ValueError(f"q_init_rad must be 7 finite joint positions [rad], got {q_init_rad!r}")
        self.q_init_rad = q_init
        self.base_pose = _upright_pose(base_pose)
        self._fault: str | None = None
        self.hand = bool(hand)
        self.grasp_object = _placed(grasp_object, q_init)
        tool = {"tool_mass_kg": tool_mass_kg, "tool_cog_m": tool_cog_m, "tcp_offset_m": tcp_offset_m}
        hand_options = {"hand": True} if self.hand else {}
        object_options = {} if self.grasp_object is None else {"grasp_object": self.grasp_object}
        self.urdf_xml = robots.urdf_xml(robot, **tool, **hand_options)
        self.mjcf_xml = robots.mjcf_xml(robot, **tool, **hand_options, **object_options)
        self.device = _native.MujocoDevice(
            self.mjcf_xml,
            name_prefix=self.prefix,
            q_init_rad=q_init,
            stiffness_Nm_rad=stiffness_nm_rad,
            damping_Nm_s_rad=damping_nm_s_rad,
            clock=clock,
        )
        #: The hand (``jtac_py.gripper.Gripper``; without one, every command ends NO_HAND).
        self.gripper = Gripper(SimulatedHand(self.device), lockstep=self.lockstep) if self.hand else Gripper()

    # ------------------------------------------------------------------------------------ frames
    @property
    def sensor_frame(self) -> str:
        return f"{self.prefix}_ft_sensor"

    @property
    def ee_frame(self) -> str:
        return f"{self.prefix}_ee"

    @property
    def ft_sensor_name(self) -> str:
        """The simulated force/torque sensor (MJCF sensors ``<name>_force`` / ``<name>_torque``)."""
        return f"{self.prefix}_ft"

    @property
    def tcp_frame(self) -> str:
        return f"{self.prefix}_tcp"

    @property
    def lockstep(self) -> bool:
        return self.clock == "lockstep"

    @property
    def last_error(self) -> str | None:
        """Why the arm stopped by itself: the message of an injected fault (inject_fault()), None
        otherwise (the simulated arm has no reflexes of its own)."""
        return self._fault

    def inject_fault(self, message: str = "an injected robot fault (as a reflex)") -> None:
        """Stops the arm by itself, as a reflex or a lost link stops a real one: from the next tick
        every read fails (DEVICE_ERROR), the hardware thread ends, and last_error is `message` until
        clear_fault(). For tests of what the rest does when an arm stops (a group's other arm,
        results, recovery). Any thread."""
        self._fault = str(message)
        self.device.inject_fault()

    def clear_fault(self) -> None:
        """Ends an injected fault (as automatic error recovery does on a real arm): reads succeed
        again and a Controller on this arm can start() again."""
        self.device.clear_fault()
        self._fault = None

    def start_motion(self, fifo_priority: int = 0) -> None:
        """Nothing to start: the simulated arm takes commands from its first tick on."""

    def finish_motion(self) -> None:
        """Nothing to finish (see start_motion)."""

    def frame_pose(self, frame: str) -> np.ndarray:
        """4x4 world pose of a site or body at the current simulated state [m] (base_pose applied)."""
        return self.base_pose @ self.device.frame_pose(frame)

    # ------------------------------------------------------------------------------------ pushes
    def push(
        self,
        force_world_n: Sequence[float],
        duration_s: float,
        *,
        frame: str | None = None,
        torque_world_nm: Sequence[float] = (0.0, 0.0, 0.0),
    ) -> None:
        """Push the arm: a force [N, world axes] at `frame`'s origin (default the TCP) for duration_s.

        Starts at the next 1 ms tick; pushes add up. Any thread. ValueError for an unknown frame, a
        non-finite value or a duration that is not > 0.
        """
        force, torque = np.asarray(force_world_n, float), np.asarray(torque_world_nm, float)
        if force.shape != (3,) or torque.shape != (3,):
            raise ValueError("force_world_n and torque_world_nm must have 3 entries each")
        to_base = self.base_pose[:3, :3].T  # the arm's own world is its base frame
        wrench = np.concatenate([to_base @ force, to_base @ torque])
        self.device.push(frame or self.tcp_frame, wrench, float(duration_s))

    def inject_sensor_fault(self, value: float, duration_s: float) -> None:
        """Every F/T component reads `value` (NaN: a dropout) for duration_s from the next tick.

        What a failing sensor or its bus delivers; the physics is untouched. Any thread.
        """
        self.device.inject_sensor_fault(float(value), float(duration_s))

    @property
    def pushes_active(self) -> int:
        return self.device.pushes_active

    def __repr__(self) -> str:
        hand = ", hand=True" if self.hand else ""
        return f"SimulatedArm({self.robot!r}, clock={self.clock!r}{hand})"


def _upright_pose(pose: Sequence[Sequence[float]] | None) -> np.ndarray:
    """A base pose as a 4x4 array; ValueError unless it is a finite rigid transform about world z."""
    if pose is None:
        return np.eye(4)
    t = np.asarray(pose, dtype=float)
    if t.shape != (4, 4) or not np.all(np.isfinite(t)):
        raise ValueError(f"base_pose must be a finite 4x4 transform, got {pose!r}")
    r = t[:3, :3]
    rigid = np.allclose(r @ r.T, np.eye(3), atol=1e-6) and np.allclose(t[3], [0, 0, 0, 1])
    if not rigid or not np.allclose(r[:, 2], [0.0, 0.0, 1.0], atol=1e-6):
        raise ValueError(
            "base_pose must be a rigid transform with the base upright (a rotation about world z): "
            f"got rotation {r.tolist()}"
        )
    return t


def _placed(grasp_object: Any, q_init_rad: np.ndarray) -> Any:
    """grasp_object at the arm's start pose when it names no pose of its own (at_q_rad None)."""
    if grasp_object is None or getattr(grasp_object, "at_q_rad", None) is not None:
        return grasp_object
    return dataclasses.replace(grasp_object, at_q_rad=tuple(float(q) for q in q_init_rad))
