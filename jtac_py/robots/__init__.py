"""Robot descriptions of the Franka FR3 and Panda (FER), written by jtac from published parameters.

One parameter table per robot (`tables.py`) generates both a URDF, which Pinocchio loads for the
controller's kinematics and dynamics, and an MJCF, which MuJoCo loads for the simulated arm. The
committed files `fr3.urdf`, `fr3.xml`, `panda.urdf`, `panda.xml` are the generator's output with the
default tool; regenerate them with `python -m jtac_py.robots.generate`.

Frames, from the base outward (p is the robot name, `fr3` or `panda`):
  p_link0      base; every pose is expressed in it.
  p_link1..7   moved by revolute joints p_joint1 .. p_joint7 (axis z of the child link).
  p_link8      flange mounting face, 0.107 m along link7's z (fixed joint p_joint8).
  p_ft_sensor  measurement frame of the force/torque sensor, at the flange
               -> the controller's `sensor_frame`; MuJoCo's p_ft_force / p_ft_torque read here.
  p_ee         tool mounting face, sensor_thickness_m (default 0) along the sensor's z
               -> the controller's `ee_frame`.
  p_tool       coincides with p_ee and carries the tool's mass; tool_mass_kg and tool_cog_m (in p_ee)
               are the controller's tool parameters used to remove the tool weight from the wrench.
  p_tcp        tool centre point, tcp_offset_m from p_ee (default 0.1034 m along z, the Franka Hand's
               TCP distance); without a hand its axes are p_ee's, with `hand=True` they carry the
               hand's -45 deg yaw about z (Franka's F_T_EE): the fingers move along its y axis.

With `hand=True` (module _hand: sources, masses, contacts) the Franka Hand hangs below p_tool:
  p_hand       the hand, yawed -45 deg about p_tool's z; 0.73 kg in all (HAND_MASS_KG at HAND_COG_M).
  p_leftfinger, p_rightfinger  on prismatic joints p_finger_joint1 / p_finger_joint2 (0..0.04 m each,
               along +y / -y of p_hand; the width between the pads is their sum, each finger at width/2;
               the URDF's joint2 mimics joint1, the MJCF couples them by an equality).
  The MJCF's actuator p_hand drives the width tendon p_hand_width: control = force on each finger [N],
  positive opening (a grasp squeezing with F from each side is -F). The keyframe `home` has the hand open.
`grasp_object=GraspObject(...)` adds a free box (body and free joint "grasp_object") standing on a
static pedestal with its centre at the TCP at `at_q_rad`, plus a floor at z = 0.

Sign of the simulated sensor: MuJoCo's p_ft_force / p_ft_torque give the wrench that the flange side
exerts on everything beyond the sensor, in p_ft_sensor axes, about its origin. At rest that is minus
the tool's weight; the wrench the tool (and the environment through it) exerts on the sensor, the
usual F/T convention, is its negative.

Pinocchio keeps the tool's inertia on the FIXED_JOINT frame p_tool_joint (placed like p_tool) and
folds it into joint 7's body. This module imports nothing beyond the standard library; Pinocchio and
MuJoCo load the text it makes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from jtac_py.robots._generator import GRAVITY_M_S2, SIM_TIMESTEP_S, ToolParams, mjcf_text, urdf_text
from jtac_py.robots._hand import (
    GRASP_OBJECT_BODY,
    HAND_COG_M,
    HAND_CONTINUOUS_FORCE_N,
    HAND_MASS_KG,
    HAND_MAX_FORCE_N,
    HAND_MAX_SPEED_M_S,
    HAND_MAX_WIDTH_M,
    GraspObject,
    object_pose_at_tcp,
    tcp_pose,
)
from jtac_py.robots.tables import (
    DEFAULT_TCP_OFFSET_M,
    NUM_JOINTS,
    SPECS,
    JointOrigin,
    LinkInertial,
    RobotSpec,
    VelocityBoundCoeffs,
)

__all__ = [
    "DEFAULT_TCP_OFFSET_M",
    "GRASP_OBJECT_BODY",
    "GRAVITY_M_S2",
    "HAND_COG_M",
    "HAND_CONTINUOUS_FORCE_N",
    "HAND_MASS_KG",
    "HAND_MAX_FORCE_N",
    "HAND_MAX_SPEED_M_S",
    "HAND_MAX_WIDTH_M",
    "NUM_JOINTS",
    "ROBOTS",
    "SIM_TIMESTEP_S",
    "GraspObject",
    "JointOrigin",
    "LinkInertial",
    "RobotSpec",
    "ToolParams",
    "VelocityBoundCoeffs",
    "finger_joint_names",
    "grasp_object_pose",
    "joint_names",
    "mjcf_path",
    "mjcf_xml",
    "robot_spec",
    "urdf_path",
    "urdf_xml",
]

ROBOTS = ("fr3", "panda")

_DIR = Path(__file__).resolve().parent


def robot_spec(robot: str | RobotSpec) -> RobotSpec:
    """The parameter table of `robot` ("fr3" or "panda"); a RobotSpec is returned unchanged."""
    if isinstance(robot, RobotSpec):
        return robot
    try:
        return SPECS[robot]
    except KeyError:
        raise ValueError(f"unknown robot {robot!r}; expected one of {ROBOTS}") from None


def joint_names(robot: str | RobotSpec) -> tuple[str, ...]:
    """Names of the seven revolute joints, joint1 first (also the MuJoCo actuator names)."""
    return robot_spec(robot).joint_names


def urdf_path(robot: str | RobotSpec) -> Path:
    """Path of the committed URDF with the default tool."""
    return _DIR / f"{robot_spec(robot).name}.urdf"


def mjcf_path(robot: str | RobotSpec) -> Path:
    """Path of the committed MJCF with the default tool."""
    return _DIR / f"{robot_spec(robot).name}.xml"


def _tool(
    tool_mass_kg: float,
    tool_cog_m: Sequence[float],
    tool_inertia_kgm2: Sequence[float],
    tcp_offset_m: Sequence[float] | None,
    sensor_thickness_m: float,
    spec: RobotSpec,
) -> ToolParams:
    tcp = spec.default_tcp_offset_m if tcp_offset_m is None else tcp_offset_m
    return ToolParams(
        tool_mass_kg, tuple(tool_cog_m), tuple(tool_inertia_kgm2), tuple(tcp), sensor_thickness_m
    ).validated()


def urdf_xml(
    robot: str | RobotSpec,
    tool_mass_kg: float = 0.0,
    tool_cog_m: Sequence[float] = (0.0, 0.0, 0.0),
    tcp_offset_m: Sequence[float] | None = None,
    *,
    tool_inertia_kgm2: Sequence[float] = (0.0,) * 6,
    sensor_thickness_m: float = 0.0,
    hand: bool = False,
) -> str:
    """URDF text of `robot` with a tool of tool_mass_kg [kg] at tool_cog_m [m, in the ee frame].

    tcp_offset_m [m, in the ee frame] defaults to the robot's default_tcp_offset_m; tool_inertia_kgm2 is
    (ixx, iyy, izz, ixy, ixz, iyz) about the cog [kg*m^2]; sensor_thickness_m [m] separates sensor and ee.
    hand: the Franka Hand below the tool (its mass is the hand's own, on top of tool_mass_kg).
    Raises ValueError for a negative mass or thickness, or a vector of the wrong size.
    """
    spec = robot_spec(robot)
    tool = _tool(tool_mass_kg, tool_cog_m, tool_inertia_kgm2, tcp_offset_m, sensor_thickness_m, spec)
    return urdf_text(spec, tool, hand=bool(hand))


def mjcf_xml(
    robot: str | RobotSpec,
    tool_mass_kg: float = 0.0,
    tool_cog_m: Sequence[float] = (0.0, 0.0, 0.0),
    tcp_offset_m: Sequence[float] | None = None,
    *,
    tool_inertia_kgm2: Sequence[float] = (0.0,) * 6,
    sensor_thickness_m: float = 0.0,
    hand: bool = False,
    grasp_object: GraspObject | None = None,
    object_pose: Sequence[Sequence[float]] | None = None,
) -> str:
    """MJCF text of `robot`; same arguments and frames as urdf_xml.

    grasp_object (needs hand=True): a free box on a pedestal, centred at the TCP when the arm is at
    grasp_object.at_q_rad (None: the home pose); object_pose, a 4x4 pose in the base frame, places it
    elsewhere. ValueError when the box would not stand (fingers vertical, or below the floor).
    """
    spec = robot_spec(robot)
    tool = _tool(tool_mass_kg, tool_cog_m, tool_inertia_kgm2, tcp_offset_m, sensor_thickness_m, spec)
    return mjcf_text(spec, tool, hand=bool(hand), grasp_object=grasp_object, object_pose=object_pose)


def finger_joint_names(robot: str | RobotSpec) -> tuple[str, str]:
    """Names of the hand's two finger joints (prismatic, each finger at width/2 [m])."""
    name = robot_spec(robot).name
    return (f"{name}_finger_joint1", f"{name}_finger_joint2")


def grasp_object_pose(
    robot: str | RobotSpec,
    q_rad: Sequence[float],
    tcp_offset_m: Sequence[float] | None = None,
    *,
    sensor_thickness_m: float = 0.0,
) -> tuple[tuple[float, ...], ...]:
    """4x4 pose (base frame) where a GraspObject stands between the open fingers at q_rad [rad].

    Its centre at the hand's TCP, its z up, its y (the width) along the fingers' axis projected on the
    horizontal plane. Forward kinematics of the URDF's chain from the parameter tables (no Pinocchio,
    no MuJoCo). ValueError when q_rad is not NUM_JOINTS finite numbers or the fingers' axis is vertical.
    """
    spec = robot_spec(robot)
    q = tuple(float(v) for v in q_rad)
    if len(q) != NUM_JOINTS or not all(math.isfinite(v) for v in q):
        raise ValueError(f"q_rad must be {NUM_JOINTS} finite joint positions, got {q_rad!r}")
    tool = _tool(0.0, (0.0, 0.0, 0.0), (0.0,) * 6, tcp_offset_m, sensor_thickness_m, spec)
    return object_pose_at_tcp(tcp_pose(spec, q, tool.tcp_offset_m, tool.sensor_thickness_m))
