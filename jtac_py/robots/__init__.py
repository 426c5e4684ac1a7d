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
               TCP distance, without the hand's -45 deg yaw since no hand is modelled).

Sign of the simulated sensor: MuJoCo's p_ft_force / p_ft_torque give the wrench that the flange side
exerts on everything beyond the sensor, in p_ft_sensor axes, about its origin. At rest that is minus
the tool's weight; the wrench the tool (and the environment through it) exerts on the sensor, the
usual F/T convention, is its negative.

Pinocchio keeps the tool's inertia on the FIXED_JOINT frame p_tool_joint (placed like p_tool) and
folds it into joint 7's body. This module imports nothing beyond the standard library; Pinocchio and
MuJoCo load the text it makes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from jtac_py.robots._generator import GRAVITY_M_S2, SIM_TIMESTEP_S, ToolParams, mjcf_text, urdf_text
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
    "GRAVITY_M_S2",
    "NUM_JOINTS",
    "ROBOTS",
    "SIM_TIMESTEP_S",
    "JointOrigin",
    "LinkInertial",
    "RobotSpec",
    "ToolParams",
    "VelocityBoundCoeffs",
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
) -> str:
    """URDF text of `robot` with a tool of tool_mass_kg [kg] at tool_cog_m [m, in the ee frame].

    tcp_offset_m [m, in the ee frame] defaults to the robot's default_tcp_offset_m; tool_inertia_kgm2 is
    (ixx, iyy, izz, ixy, ixz, iyz) about the cog [kg*m^2]; sensor_thickness_m [m] separates sensor and ee.
    Raises ValueError for a negative mass or thickness, or a vector of the wrong size.
    """
    spec = robot_spec(robot)
    return urdf_text(
        spec, _tool(tool_mass_kg, tool_cog_m, tool_inertia_kgm2, tcp_offset_m, sensor_thickness_m, spec)
    )


def mjcf_xml(
    robot: str | RobotSpec,
    tool_mass_kg: float = 0.0,
    tool_cog_m: Sequence[float] = (0.0, 0.0, 0.0),
    tcp_offset_m: Sequence[float] | None = None,
    *,
    tool_inertia_kgm2: Sequence[float] = (0.0,) * 6,
    sensor_thickness_m: float = 0.0,
) -> str:
    """MJCF text of `robot`; same arguments and frames as urdf_xml."""
    spec = robot_spec(robot)
    return mjcf_text(
        spec, _tool(tool_mass_kg, tool_cog_m, tool_inertia_kgm2, tcp_offset_m, sensor_thickness_m, spec)
    )
