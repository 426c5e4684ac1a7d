"""A real Franka arm through libfranka: ``FrankaArm`` (pylibfranka connects, the native hardware
thread drives the motion through ``_native.FrankaDevice``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from jtac_py import _native, robots
from jtac_py.gripper import Gripper

__all__ = ["DEFAULT_COLLISION_BEHAVIOR", "FrankaArm"]

#: libfranka's example thresholds (examples_common.cpp, setDefaultBehavior): lower and upper joint
#: torque thresholds [N·m] (7 each), lower and upper Cartesian force/torque thresholds [N, N·m] (6 each).
#: Above an upper threshold the robot stops with a collision reflex; pushes harder than ~20 N on the tool
#: (admittance by hand) need higher ones.
DEFAULT_COLLISION_BEHAVIOR = (
    (20.0, 20.0, 18.0, 18.0, 16.0, 14.0, 12.0),
    (20.0, 20.0, 18.0, 18.0, 16.0, 14.0, 12.0),
    (20.0, 20.0, 20.0, 25.0, 25.0, 25.0),
    (20.0, 20.0, 20.0, 25.0, 25.0, 25.0),
)

_REALTIME_CONFIGS = ("ignore", "enforce")
_CONTROLS = ("position", "velocity")
_LATE_COMMANDS = ("dropped", "applied")


def _keeping_scheduling(make: Any) -> Any:
    """Calls make() and puts the calling thread's scheduling back as it was: libfranka's Robot()
    raises the thread that constructs it to SCHED_FIFO 99 wherever it may (even with kIgnore), and
    every thread started from it afterwards (jtac's hardware, controller and pump threads, the
    user's own) would inherit that priority instead of the configured ones."""
    try:
        policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    except (AttributeError, OSError):  # no POSIX scheduling API here
        return make()
    try:
        return make()
    finally:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, policy, param)


class FrankaArm:
    """A real Franka arm (FR3) through libfranka: pylibfranka connects, and the native hardware thread
    drives the motion (``_native.FrankaDevice``, 1 kHz, no GIL).

    The constructor connects (``pylibfranka.Robot(ip, RealtimeConfig)``), sets the collision behaviour
    and, with ``use_estimated_wrench``, puts the stiffness frame K at the flange (``Robot.set_K``, so that
    the robot's wrench estimate is a reading in ``<robot>_ft_sensor``). It does not start a motion: once
    the robot accepts a Move it expects a command every millisecond, so ``Controller.start()`` first
    starts the hardware thread and then ``start_motion()`` (joint position control with
    ``ControllerMode.JointImpedance``; ``control="velocity"``: joint velocity control), whose first
    command leaves within a period (franka_hw/README.md, start-up). ``Controller.stop()`` ends the
    motion (``finish_motion()``); a new Controller on this arm starts a new one.

    After a device error (a reflex: ``last_error`` holds libfranka's message, the goals ended with it),
    drop the Controller, call ``automatic_error_recovery()`` and build a new Controller on this arm.

    Args:
        ip: host name or IPv4 address of the control unit (FCI).
        robot: "fr3" (libfranka 0.21 speaks the FR3's protocol only).
        realtime_config: "ignore" (any kernel) or "enforce" (libfranka refuses to run without a
            PREEMPT_RT kernel).
        collision_behavior: (lower torque [7], upper torque [7], lower force [6], upper force [6])
            thresholds [N·m, N]; None = DEFAULT_COLLISION_BEHAVIOR.
        use_estimated_wrench: report the robot's model-based external wrench estimate as the F/T
            sensor (``ft_sensor_name``); False = no sensor (no admittance).
        control: "position" (JointPositions) or "velocity" (JointVelocities).
        urdf_xml: the controller's robot description; None = the configuration's (robot_description,
            urdf_path, or the built-in robot without a tool).
        late_commands: what the robot does with a command that reaches it after its 1 ms cycle, which
            decides how the hardware thread continues after skipped ticks: "dropped" (Franka's control)
            or "applied" (franka-sim applies it in the cycle it lands in). See franka_hw/README.md.
        hand: the Franka Hand on the robot's address (libfranka's gripper protocol, port 1338):
            ``gripper`` drives it; the constructor connects to it too (ConnectionError within 2 s when
            it does not answer). False: ``gripper`` has no hand (every command ends NO_HAND).
    """

    clock = "realtime"
    lockstep = False
    #: The robot stops motions by reflexes that libfranka names: the Controller explains each from
    #: the flight recorder (``jtac_py.reflexes``) and saves the trace.
    robot_reflexes = True

    def __init__(
        self,
        ip: str,
        *,
        robot: str = "fr3",
        realtime_config: str = "ignore",
        collision_behavior: Sequence[Sequence[float]] | None = None,
        use_estimated_wrench: bool = True,
        control: str = "position",
        urdf_xml: str | None = None,
        late_commands: str = "dropped",
        hand: bool = False,
    ) -> None:
        spec = robots.robot_spec(robot)
        if spec.name != "fr3":
            raise ValueError(
                f"FrankaArm: robot {spec.name!r} is not supported: libfranka 0.21 (pylibfranka) speaks the "
                "FR3's protocol; a Panda needs libfranka 0.9"
            )
        if realtime_config not in _REALTIME_CONFIGS:
            raise ValueError(f"realtime_config must be one of {_REALTIME_CONFIGS}, got {realtime_config!r}")
        if control not in _CONTROLS:
            raise ValueError(f"control must be one of {_CONTROLS}, got {control!r}")
        if late_commands not in _LATE_COMMANDS:
            raise ValueError(f"late_commands must be one of {_LATE_COMMANDS}, got {late_commands!r}")
        thresholds = _collision_behavior(collision_behavior)
        if not _native.HAVE_LIBFRANKA:
            raise RuntimeError(
                "FrankaArm: this build of jtac_py._native has no FrankaDevice (no libfranka headers or "
                "library when it was built); run scripts/setup.sh"
            )
        import pylibfranka  # the real arm only: the simulated one never needs it

        self._plf = pylibfranka
        self.ip = ip
        self.robot = spec.name
        self.joint_names = tuple(robots.joint_names(robot))
        self.prefix = self.joint_names[0].split("_joint")[0]
        self.urdf_xml = urdf_xml
        self.use_estimated_wrench = bool(use_estimated_wrench)
        self.control = control
        self.late_commands = late_commands
        self.device = None
        self.hand = bool(hand)
        #: The hand (``jtac_py.gripper.Gripper``); its link is apart from the arm's.
        self.gripper = Gripper()
        self._motion_finished = False
        self._realtime = {
            "ignore": pylibfranka.RealtimeConfig.kIgnore,
            "enforce": pylibfranka.RealtimeConfig.kEnforce,
        }[realtime_config]
        self._thresholds = thresholds
        self._robot = None
        try:
            self._connect()
            self._new_device()
            if self.hand:
                self.gripper = _connected_gripper(ip)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------------------------ frames
    @property
    def sensor_frame(self) -> str:
        """The frame of the wrench reading: the flange, where FrankaArm puts the stiffness frame K."""
        return f"{self.prefix}_ft_sensor"

    @property
    def ee_frame(self) -> str:
        return f"{self.prefix}_ee"

    @property
    def tcp_frame(self) -> str:
        return f"{self.prefix}_tcp"

    @property
    def ft_sensor_name(self) -> str:
        """The estimated wrench as the F/T sensor; empty without use_estimated_wrench (no admittance)."""
        return f"{self.prefix}_estimated_wrench" if self.use_estimated_wrench else ""

    # ------------------------------------------------------------------------------------ state
    @property
    def last_error(self) -> str | None:
        """libfranka's message of the error that stopped the device ('readOnce: ...'), None without."""
        return None if self.device is None else self.device.last_error

    @property
    def motion_active(self) -> bool:
        """True while a started motion can take commands (no error, not finished)."""
        return (
            self.device is not None
            and self.device.holds_control
            and not self.device.has_error
            and not self._motion_finished
        )

    # ------------------------------------------------------------------------------------ lifecycle
    def start_motion(self, fifo_priority: int = 0) -> None:
        """Starts the robot's motion on this arm's device, whose hardware thread must already be running
        (``Controller.start()`` calls it): pylibfranka's Move and the handover to the waiting thread happen
        in one native call, so the robot gets its first command within a period of accepting the Move.

        fifo_priority > 0: the calling thread runs at SCHED_FIFO with it for that call (where allowed),
        so that the handover between the Move being accepted and the hardware thread taking over is not
        preempted; its scheduling is put back afterwards."""
        if self.device is None:
            raise RuntimeError("FrankaArm.start_motion: the arm is closed")

        def start() -> None:
            if fifo_priority > 0:
                with contextlib.suppress(OSError):  # refused: the handover just runs unboosted
                    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo_priority))
            self.device.start_motion(self._robot, self._plf.ControllerMode.JointImpedance)

        _keeping_scheduling(start)
        self._motion_finished = False

    def finish_motion(self) -> None:
        """Ends the motion (its own last command again, marked motion_finished: the last positions
        written, bit for bit, or zero velocity) while no thread drives the device; nothing after an error
        or when already finished.

        Controller.stop() calls it right after the hardware thread stopped: the robot aborts a motion that
        gets no command for 20 ms (communication_constraints_violation).
        """
        if not self.motion_active:
            return
        if self.device.finish_motion() == _native.DeviceStatus.OK:
            self._motion_finished = True
        # The device served its one motion: the next Controller gets a new one.
        self._release_motion()
        self._new_device()

    def automatic_error_recovery(self) -> None:
        """Clears the robot's error (Robot.automatic_error_recovery()) and gives the arm a new device; the
        next ``Controller.start()`` on this arm starts the new motion. After a dead link libfranka has
        closed the connection: the arm connects again first. The Controller built on the old
        device must be stopped first; the old device lets go of libfranka's control (and with it the robot's
        single control slot), so that Controller may live on (its timing() and packet_trace() still answer)
        but cannot be started again."""
        self.finish_motion()  # a motion still running ends cleanly first
        self._release_motion()
        try:
            self._robot.automatic_error_recovery()
        except self._plf.NetworkException:
            # libfranka closes the connection when its UDP receive times out (a dead link): the
            # robot's error, if any, is cleared on a new one.
            self._robot = None
            self._connect()
            self._robot.automatic_error_recovery()
        self._new_device()

    def close(self) -> None:
        """Finishes the motion and disconnects (idempotent), also while a stopped Controller built on
        this arm is still referenced: the device lets go of libfranka's control. Stop the Controller
        first: nothing may drive the device meanwhile."""
        gripper = getattr(self, "gripper", None)
        if gripper is not None:
            gripper.close()
        if getattr(self, "_robot", None) is None:
            return
        try:
            self.finish_motion()
        finally:
            self._release_motion()
            self._robot = None

    def __enter__(self) -> FrankaArm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"FrankaArm({self.ip!r}, robot={self.robot!r}, control={self.control!r}, "
            f"late_commands={self.late_commands!r})"
        )

    # ------------------------------------------------------------------------------------ internals
    def _connect(self) -> None:
        """Connects (pylibfranka.Robot), sets the collision behaviour and the stiffness frame."""
        self._robot = _keeping_scheduling(lambda: self._plf.Robot(self.ip, self._realtime))
        self._robot.set_collision_behavior(*self._thresholds)
        if self.use_estimated_wrench:
            self._put_stiffness_frame_at_flange()

    def _new_device(self) -> None:
        """A device for the next motion, which start_motion() starts once a hardware thread serves it."""
        self.device = _native.FrankaDevice(
            use_estimated_wrench=self.use_estimated_wrench, control=self.control
        )
        self._motion_finished = False

    def _release_motion(self) -> None:
        # The device holds the control until it releases it; once neither holds it, pylibfranka ends
        # (cancels) the motion, and once the Robot goes too, the connection.
        if self.device is not None:
            self.device.release()
        self.device = None

    def _put_stiffness_frame_at_flange(self) -> None:
        """EE_T_K = (F_T_EE)⁻¹, so that F_T_K = F_T_EE · EE_T_K = I: the estimate K_F_ext_hat_K is then in
        the flange's axes about its origin, the `<robot>_ft_sensor` frame of jtac's models. (K also
        anchors the Cartesian collision thresholds; Desk's end-effector setting stays as it is.)"""
        state = self._robot.read_once()
        f_t_ee = np.asarray(state.F_T_EE, dtype=float).reshape(4, 4).T  # column-major in libfranka
        ee_t_k = np.asarray(state.EE_T_K, dtype=float).reshape(4, 4).T
        if np.allclose(f_t_ee @ ee_t_k, np.eye(4), atol=1e-9):
            return
        rotation = f_t_ee[:3, :3]
        if not np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-6):
            raise RuntimeError(f"FrankaArm: the robot reports F_T_EE that is not a rigid transform: {f_t_ee}")
        self._robot.set_K(np.linalg.inv(f_t_ee).T.reshape(-1).tolist())


def _connected_gripper(ip: str) -> Gripper:
    """A Gripper over the Franka Hand at ip, connected (ConnectionError when the hand does not answer)."""
    from jtac_py.gripper.franka_hand import FrankaHand  # the real hand only

    gripper = Gripper(FrankaHand(ip))
    gripper.open()
    return gripper


def _collision_behavior(value: Sequence[Sequence[float]] | None) -> tuple[list[float], ...]:
    """The four threshold lists of Robot.set_collision_behavior, checked (7, 7, 6, 6 finite values > 0)."""
    value = DEFAULT_COLLISION_BEHAVIOR if value is None else value
    sizes = (7, 7, 6, 6)
    names = ("lower torque", "upper torque", "lower force", "upper force")
    if len(value) != 4:
        raise ValueError(
            "collision_behavior must be (lower torque[7], upper torque[7], lower force[6], upper force[6])"
        )
    out = []
    for thresholds, size, name in zip(value, sizes, names, strict=True):
        a = np.asarray(thresholds, dtype=float)
        if a.shape != (size,) or not np.all(np.isfinite(a)) or np.any(a <= 0.0):
            raise ValueError(
                f"collision_behavior: {name} thresholds must be {size} finite values > 0, got {thresholds!r}"
            )
        out.append(a.tolist())
    return tuple(out)
