"""The robot description of a group of arms: every arm's URDF, its links and joints prefixed with the
arm's name, under one ``world`` link at the arm's base pose.

Pure functions (no ROS): ``pair_robot_description`` is what the pair node latches on
``/robot_description``; robot_state_publisher and RViz then show both arms where they stand, and the
joint names are those of the pair's ``/joint_states`` (``"<arm>_<joint>"``).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["WORLD_LINK", "base_joint_name", "pair_robot_description", "prefixed_robot", "rpy_of_rotation"]

#: The root link every arm's base hangs from.
WORLD_LINK = "world"

# (element tag, attribute) pairs that name a link, joint or material: prefixed with the arm's name.
_NAME_ATTRIBUTES = (
    ("link", "name"),
    ("joint", "name"),
    ("parent", "link"),
    ("child", "link"),
    ("mimic", "joint"),
    ("material", "name"),
)


def base_joint_name(arm: str) -> str:
    """The fixed joint from the world link to `arm`'s base link."""
    return f"{arm}_base_joint"


def rpy_of_rotation(rotation: Any) -> tuple[float, float, float]:
    """URDF's roll, pitch, yaw [rad] (R = Rz(yaw) Ry(pitch) Rx(roll)) of a 3x3 rotation matrix."""
    r = np.asarray(rotation, dtype=float)
    pitch_rad = math.atan2(-r[2, 0], math.hypot(r[0, 0], r[1, 0]))
    if math.isclose(abs(pitch_rad), math.pi / 2, abs_tol=1e-9):  # gimbal lock: yaw takes it all
        return 0.0, pitch_rad, math.atan2(-r[0, 1], r[1, 1])
    return math.atan2(r[2, 1], r[2, 2]), pitch_rad, math.atan2(r[1, 0], r[0, 0])


def prefixed_robot(urdf_xml: str, arm: str) -> tuple[list[ET.Element], str]:
    """`urdf_xml`'s top-level elements with every link, joint and material name prefixed ``<arm>_``,
    and the (prefixed) name of its root link (the one link no joint has as child). ValueError when
    the URDF has no single root link."""
    robot = ET.fromstring(urdf_xml)
    for tag, attribute in _NAME_ATTRIBUTES:
        for element in robot.iter(tag):
            if attribute in element.attrib:
                element.set(attribute, f"{arm}_{element.get(attribute)}")
    links = [e.get("name") for e in robot.findall("link")]
    children = {c.get("link") for c in robot.iter("child")}
    roots = [name for name in links if name not in children]
    if len(roots) != 1:
        raise ValueError(f"arm '{arm}': its URDF must have one root link, found {roots}")
    return list(robot), str(roots[0])


def _base_joint(arm: str, root_link: str, base_pose: Any) -> ET.Element:
    pose = np.asarray(base_pose, dtype=float)
    joint = ET.Element("joint", name=base_joint_name(arm), type="fixed")
    # + 0.0: no "-0.0" in the text.
    xyz = " ".join(repr(float(v) + 0.0) for v in pose[:3, 3])
    rpy = " ".join(repr(float(v) + 0.0) for v in rpy_of_rotation(pose[:3, :3]))
    ET.SubElement(joint, "origin", xyz=xyz, rpy=rpy)
    ET.SubElement(joint, "parent", link=WORLD_LINK)
    ET.SubElement(joint, "child", link=root_link)
    return joint


def pair_robot_description(
    arms: Mapping[str, tuple[str, Sequence[Sequence[float]]]], robot_name: str = "jtac_pair"
) -> str:
    """One URDF for several arms: {arm: (its URDF text, its 4x4 base pose in the world [m])} ->
    ``<robot name=robot_name>`` with the link ``world`` and, per arm, its prefixed links and joints and
    a fixed joint ``<arm>_base_joint`` from ``world`` to its base link at the base pose."""
    robot = ET.Element("robot", name=robot_name)
    ET.SubElement(robot, "link", name=WORLD_LINK)
    for arm, (urdf_xml, base_pose) in arms.items():
        elements, root_link = prefixed_robot(urdf_xml, arm)
        robot.append(_base_joint(arm, root_link, base_pose))
        robot.extend(elements)
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"
