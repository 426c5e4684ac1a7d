"""The arms of the Python API: the ``Arm`` protocol, everything the Controller (and through it the
ROS node) needs of one, and the two jtac brings: ``SimulatedArm`` (MuJoCo, real time or lockstep;
``jtac_py.simulated_arm``) and ``FrankaArm`` (libfranka; ``jtac_py.franka_arm``), importable from here.
``jtac_py.arms.build_arm`` builds the arm that parameter values describe.
"""

from __future__ import annotations

from typing import Any, Protocol

from jtac_py.franka_arm import DEFAULT_COLLISION_BEHAVIOR, FrankaArm
from jtac_py.simulated_arm import CLOCKS, SimulatedArm

__all__ = ["CLOCKS", "DEFAULT_COLLISION_BEHAVIOR", "Arm", "FrankaArm", "SimulatedArm"]


class Arm(Protocol):
    """Everything the Controller (and through it the ROS node) needs of an arm: SimulatedArm and
    FrankaArm implement it, and so may any other backend (``jtac_py.arms.build_arm`` builds one from
    parameter values). The Controller builds its hardware thread on ``device``, its kinematics on
    ``urdf_xml`` and the hardware limiter on ``robot``'s limit table."""

    #: "fr3" or "panda": the limits table and the frame names.
    robot: str
    #: The URDF the controller's kinematics use (the same tool as the arm's); None: the configuration's
    #: (robot_description, urdf_path or the built-in robot).
    urdf_xml: str | None
    #: What the robot does with a command written after its cycle: "applied" or "dropped".
    late_commands: str
    #: The arm's hand (``jtac_py.gripper.Gripper``; an arm without one has a Gripper() whose every
    #: command ends NO_HAND). ``Controller.gripper`` is this one on the controller's clock.
    gripper: Any

    @property
    def device(self) -> Any:
        """The native device the hardware thread drives (``_native.Device``)."""

    @property
    def lockstep(self) -> bool:
        """True when nothing runs by itself (Controller.step() advances the arm)."""

    @property
    def ft_sensor_name(self) -> str:
        """The arm's own force/torque sensor ("" when it has none)."""

    @property
    def last_error(self) -> str | None:
        """Why the arm stopped by itself (e.g. a reflex), None while it is fine."""

    def start_motion(self, fifo_priority: int = 0) -> None:
        """Starts the robot's motion once the hardware thread waits for it (no-op where there is none)."""

    def finish_motion(self) -> None:
        """Ends the motion the Controller started (no-op where there is none)."""
