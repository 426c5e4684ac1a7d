"""The Franka Hand and a box to grasp, for the generated URDF and MJCF (`hand=True`, `grasp_object=`).

Geometry and masses, with their sources:
  [FD]  frankaemika/franka_description robots/common/franka_hand.xacro: the hand is mounted with a
        -45 deg yaw about the flange's z axis, its fingers slide on prismatic joints 0.0584 m along the
        hand's z (joint1 along +y, joint2 along -y mimicking joint1), 0..0.04 m each; a finger 0.015 kg.
  [FCI] Franka's documentation: the hand's TCP 0.1034 m along z (F_T_NE, with the yaw above), stroke
        0.08 m, speed 0.05 m/s per finger, grasp force 70 N continuous / 140 N peak; libfranka's default
        end-effector load 0.73 kg at (-0.01, 0, 0.03) m in the flange frame.
The whole hand weighs HAND_MASS_KG (the body 0.70 kg plus both fingers), with its centre of mass at
HAND_COG_M in the ee frame for any opening (the fingers move symmetrically): the numbers a controller
needs to remove the hand's weight from the F/T reading.

Contacts (MJCF): only the finger pads and the grasp object touch anything. Pads collide with the object
only; the object also rests on its pedestal and on the floor; every arm link keeps contype = conaffinity
= 0. The pads' inner faces are where the finger joints say: the width between them is q1 + q2.

The fingers' drive is one actuator `<prefix>_hand` on the tendon q1 + q2 (the width): its control is
the force on EACH finger [N], positive opening. A grasp squeezing an object with F from both sides is
a control of -F. The device's hand controller (franka_hw/mujoco/simulated_hand.hpp) sets it.

This module uses the standard library only; the TCP's pose is computed here from the parameter tables
(the same chain the URDF describes) so that placing the object needs neither Pinocchio nor MuJoCo.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from jtac_py.robots.tables import NUM_JOINTS, RobotSpec

# [FCI] stroke, per-finger travel and the continuous / peak grasp force.
HAND_MAX_WIDTH_M = 0.08
FINGER_TRAVEL_M = HAND_MAX_WIDTH_M / 2.0
HAND_MAX_SPEED_M_S = 0.1  # width rate; 0.05 m/s per finger
HAND_CONTINUOUS_FORCE_N = 70.0
HAND_MAX_FORCE_N = 140.0
# [FD] the hand's yaw on the flange, and where the finger joints sit along the hand's z [m].
HAND_YAW_RAD = -math.pi / 4.0
FINGER_JOINT_Z_M = 0.0584
# [FCI] the TCP along the hand's z [m]: the middle of the finger pads.
HAND_TCP_Z_M = 0.1034
# [FCI] libfranka's end-effector load of the Franka Hand: mass [kg] and centre of mass [m, ee frame].
HAND_MASS_KG = 0.73
HAND_COG_M = (-0.01, 0.0, 0.03)
# (ixx, iyy, izz) about the hand's cog, axes of the flange [kg*m^2] (libfranka's default I_ee).
_HAND_INERTIA_KGM2 = (0.001, 0.0025, 0.0017)
_FINGER_MASS_KG = 0.015  # [FD]
_FINGER_COG_Z_M = 0.027  # along the finger's z, from its joint [m]
_FINGER_INERTIA_KGM2 = (2.375e-6, 2.375e-6, 7.5e-7)  # [FD]
_HAND_BODY_MASS_KG = HAND_MASS_KG - 2.0 * _FINGER_MASS_KG
# Reflected inertia of the finger drive (motor and gearbox) on each finger's slide [kg]: not published;
# chosen so that the device's finger servo runs with margin at 1 kHz.
_FINGER_ARMATURE_KG = 0.05
# Pad: half sizes [m] (x across the finger, y its thickness, z along the finger), centred on the TCP.
_PAD_HALF_M = (0.0085, 0.003, 0.009)
# Pad/object contact: rubber on plastic (friction 1.2); condim 4 adds torsional friction so a held box
# cannot spin about the finger axis. The contact's stiffness and damping are given directly (negative
# solref: 1e5 /s², 500 /s, about 0.8 of critical damping) because MuJoCo's default time constant lets
# the pads sink ~0.5 mm into the box under 20 N; this keeps it ~0.05 mm, so the width the fingers
# report is the box's.
# The fingers' travel limits, as stiff as MuJoCo's limits go at a 1 ms step (timeconst 2 steps, impedance
# 0.99..0.999): with MuJoCo's default soft limit a 20 N squeeze on nothing pushed the fingers 12 mm
# through each other; with this the closed fingers rest within 0.2 mm of 0 at 140 N (the moment they
# meet at full speed and 140 N they overlap up to 4 mm for a few ms).
_FINGER_LIMIT = 'solreflimit="0.002 1" solimplimit="0.99 0.999 0.0002"'
_PAD_CONTACT = 'condim="4" friction="1.2 0.02 0.0001" solref="-100000 -500" solimp="0.99 0.999 0.0002"'

GRASP_OBJECT_BODY = "grasp_object"
GRASP_PEDESTAL_GEOM = "grasp_object_pedestal"
FLOOR_GEOM = "floor"


@dataclass(frozen=True)
class GraspObject:
    """A free box to grasp, standing on a static pedestal with its centre at the hand's TCP.

    width_m runs along the finger axis, depth_m across the fingers, height_m up (world z) [m]; mass_kg
    [kg]. at_q_rad: the arm's joint positions [rad] at which the box sits between the open fingers,
    its centre at the TCP; None: the robot's home pose (SimulatedArm passes its q_init_rad).
    """

    width_m: float
    depth_m: float = 0.03
    height_m: float = 0.05
    mass_kg: float = 0.1
    at_q_rad: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.width_m) and 0.0 < self.width_m < HAND_MAX_WIDTH_M):
            raise ValueError(
                f"GraspObject.width_m must be in (0, {HAND_MAX_WIDTH_M}) m to fit between the open "
                f"fingers, got {self.width_m!r}"
            )
        for name in ("depth_m", "height_m", "mass_kg"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"GraspObject.{name} must be finite and > 0, got {value!r}")
        if self.at_q_rad is not None:
            q = tuple(float(v) for v in self.at_q_rad)
            if len(q) != NUM_JOINTS or not all(math.isfinite(v) for v in q):
                raise ValueError(
                    f"GraspObject.at_q_rad must be {NUM_JOINTS} finite joint positions, got {self.at_q_rad!r}"
                )
            object.__setattr__(self, "at_q_rad", q)


# ---------------------------------------------------------------------------------- 4x4 transforms
Matrix4 = tuple[tuple[float, float, float, float], ...]


def _matmul(a, b) -> list[list[float]]:
    return [[sum(a[i][k] * b[k][j] for k in range(4)) for j in range(4)] for i in range(4)]


def _transform(xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0)) -> list[list[float]]:
    """Homogeneous transform of a URDF origin: R = Rz(yaw) Ry(pitch) Rx(roll), then the translation."""
    cr, sr = math.cos(rpy[0]), math.sin(rpy[0])
    cp, sp = math.cos(rpy[1]), math.sin(rpy[1])
    cy, sy = math.cos(rpy[2]), math.sin(rpy[2])
    return [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr, xyz[0]],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr, xyz[1]],
        [-sp, cp * sr, cp * cr, xyz[2]],
        [0.0, 0.0, 0.0, 1.0],
    ]


def tcp_pose(
    spec: RobotSpec,
    q_rad: Sequence[float],
    tcp_offset_m: Sequence[float],
    sensor_thickness_m: float = 0.0,
    *,
    hand: bool = True,
) -> Matrix4:
    """Pose of `<robot>_tcp` in the base frame at q_rad, along the chain the URDF describes [m]."""
    pose = _transform()
    for i in range(NUM_JOINTS):
        origin = spec.joint_origins[i]
        joint = _matmul(_transform(origin.xyz_m, origin.rpy_rad), _transform(rpy=(0.0, 0.0, q_rad[i])))
        pose = _matmul(pose, joint)
    flange = spec.joint_origins[NUM_JOINTS]
    pose = _matmul(pose, _transform(flange.xyz_m, flange.rpy_rad))
    pose = _matmul(pose, _transform((0.0, 0.0, sensor_thickness_m)))
    pose = _matmul(pose, _transform(tcp_offset_m, tcp_rpy_rad(hand)))
    return tuple(tuple(row) for row in pose)


def tcp_rpy_rad(hand: bool) -> tuple[float, float, float]:
    """The TCP's orientation in the ee frame: the hand's yaw with a hand (Franka's F_T_EE), else none."""
    return (0.0, 0.0, HAND_YAW_RAD) if hand else (0.0, 0.0, 0.0)


def object_pose_at_tcp(pose_tcp: Matrix4) -> Matrix4:
    """The grasp object's pose for a TCP pose: centre at the TCP, z up, y (its width) along the fingers.

    The fingers' axis is the TCP's y axis; the box stands upright, so its y is that axis projected
    onto the horizontal plane. ValueError when the fingers point straight up or down.
    """
    y = [pose_tcp[0][1], pose_tcp[1][1], 0.0]
    norm = math.hypot(y[0], y[1])
    if norm < 1e-6:
        raise ValueError("the fingers' axis is vertical at this pose: a standing box cannot lie between them")
    y = [y[0] / norm, y[1] / norm, 0.0]
    x = [y[1], -y[0], 0.0]  # y × z
    p = [pose_tcp[i][3] for i in range(3)]
    return (
        (x[0], y[0], 0.0, p[0]),
        (x[1], y[1], 0.0, p[1]),
        (0.0, 0.0, 1.0, p[2]),
        (0.0, 0.0, 0.0, 1.0),
    )


def _quat_wxyz(pose: Matrix4) -> tuple[float, float, float, float]:
    """Quaternion (w, x, y, z) of a rotation about z only (the object's)."""
    yaw = math.atan2(pose[1][0], pose[0][0])
    return (math.cos(0.5 * yaw), 0.0, 0.0, math.sin(0.5 * yaw))


# ------------------------------------------------------------------------------------------ URDF
def urdf_hand_lines(p: str, tool_frame: str, num) -> list[str]:
    """URDF links and joints of the hand below `tool_frame`; `num` formats a number."""

    def v(values) -> str:
        return " ".join(num(x) for x in values)

    def inertial(com, mass, inertia) -> list[str]:
        ixx, iyy, izz = (num(x) for x in inertia)
        return [
            "    <inertial>",
            f'      <origin xyz="{v(com)}" rpy="0 0 0"/>',
            f'      <mass value="{num(mass)}"/>',
            f'      <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/>',
            "    </inertial>",
        ]

    lines = [
        f'  <joint name="{p}_hand_joint" type="fixed">',
        f'    <origin xyz="0 0 0" rpy="0 0 {num(HAND_YAW_RAD)}"/>',
        f'    <parent link="{tool_frame}"/>',
        f'    <child link="{p}_hand"/>',
        "  </joint>",
        f'  <link name="{p}_hand">',
        *inertial(_hand_body_cog_in_hand(), _HAND_BODY_MASS_KG, _HAND_INERTIA_KGM2),
        "  </link>",
    ]
    for index, (side, sign) in enumerate((("leftfinger", 1.0), ("rightfinger", -1.0)), start=1):
        lines += [
            f'  <link name="{p}_{side}">',
            *inertial((0.0, 0.0, _FINGER_COG_Z_M), _FINGER_MASS_KG, _FINGER_INERTIA_KGM2),
            "  </link>",
            f'  <joint name="{p}_finger_joint{index}" type="prismatic">',
            f'    <origin xyz="0 0 {num(FINGER_JOINT_Z_M)}" rpy="0 0 0"/>',
            f'    <parent link="{p}_hand"/>',
            f'    <child link="{p}_{side}"/>',
            f'    <axis xyz="0 {num(sign)} 0"/>',
            f'    <limit lower="0" upper="{num(FINGER_TRAVEL_M)}" effort="{num(HAND_MAX_FORCE_N)}" '
            f'velocity="{num(HAND_MAX_SPEED_M_S / 2.0)}"/>',
        ]
        if index == 2:
            lines.append(f'    <mimic joint="{p}_finger_joint1" multiplier="1" offset="0"/>')
        lines.append("  </joint>")
    return lines


def _hand_body_cog_in_hand() -> tuple[float, float, float]:
    """The hand body's cog in the hand frame [m], so that body and fingers together sit at HAND_COG_M."""
    c, s = math.cos(-HAND_YAW_RAD), math.sin(-HAND_YAW_RAD)  # ee axes -> hand axes: Rz(-yaw)
    x, y, z = HAND_COG_M
    total_in_hand = (c * x - s * y, s * x + c * y, z)
    fingers_z = FINGER_JOINT_Z_M + _FINGER_COG_Z_M
    return (
        HAND_MASS_KG * total_in_hand[0] / _HAND_BODY_MASS_KG,
        HAND_MASS_KG * total_in_hand[1] / _HAND_BODY_MASS_KG,
        (HAND_MASS_KG * total_in_hand[2] - 2.0 * _FINGER_MASS_KG * fingers_z) / _HAND_BODY_MASS_KG,
    )


# ------------------------------------------------------------------------------------------ MJCF
def mjcf_hand_lines(p: str, num) -> list[str]:
    """MJCF bodies of the hand (to be nested inside the tool body), indented relative to it."""

    def v(values) -> str:
        return " ".join(num(x) for x in values)

    pad = _PAD_HALF_M
    half_yaw = 0.5 * HAND_YAW_RAD
    lines = [
        f'<body name="{p}_hand" quat="{v((math.cos(half_yaw), 0.0, 0.0, math.sin(half_yaw)))}">',
        f'  <inertial pos="{v(_hand_body_cog_in_hand())}" mass="{num(_HAND_BODY_MASS_KG)}" '
        f'diaginertia="{v(_HAND_INERTIA_KGM2)}"/>',
        '  <geom type="box" pos="0 0 0.029" size="0.02 0.09 0.029" rgba="0.95 0.95 0.95 1"/>',
    ]
    for index, (side, sign) in enumerate((("leftfinger", 1.0), ("rightfinger", -1.0)), start=1):
        lines += [
            f'  <body name="{p}_{side}" pos="0 0 {num(FINGER_JOINT_Z_M)}">',
            f'    <inertial pos="0 0 {num(_FINGER_COG_Z_M)}" mass="{num(_FINGER_MASS_KG)}" '
            f'diaginertia="{v(_FINGER_INERTIA_KGM2)}"/>',
            f'    <joint name="{p}_finger_joint{index}" type="slide" axis="0 {num(sign)} 0" '
            f'range="0 {num(FINGER_TRAVEL_M)}" {_FINGER_LIMIT} armature="{num(_FINGER_ARMATURE_KG)}"/>',
            f'    <geom type="box" pos="0 {num(sign * 0.014)} 0.0225" size="0.0085 0.008 0.0225" '
            'rgba="0.2 0.2 0.2 1"/>',
            # The pad: its inner face at the joint's position, so the width is q1 + q2.
            f'    <geom name="{p}_{side}_pad" type="box" '
            f'pos="0 {num(sign * pad[1])} {num(HAND_TCP_Z_M - FINGER_JOINT_Z_M)}" size="{v(pad)}" '
            f'contype="2" conaffinity="0" {_PAD_CONTACT} rgba="0.1 0.1 0.1 1"/>',
            "  </body>",
        ]
    lines.append("</body>")
    return lines


def mjcf_hand_drive_lines(p: str, num) -> tuple[list[str], list[str], list[str]]:
    """(tendon, equality, actuator) sections of the hand: the width tendon, the finger coupling and
    the force actuator on the width (control = force on each finger [N], positive opening)."""
    tendon = [
        "  <tendon>",
        f'    <fixed name="{p}_hand_width">',
        f'      <joint joint="{p}_finger_joint1" coef="1"/>',
        f'      <joint joint="{p}_finger_joint2" coef="1"/>',
        "    </fixed>",
        "  </tendon>",
    ]
    equality = [
        "  <equality>",
        f'    <joint joint1="{p}_finger_joint2" joint2="{p}_finger_joint1"/>',
        "  </equality>",
    ]
    actuator = [
        f'    <motor name="{p}_hand" tendon="{p}_hand_width" '
        f'ctrlrange="{num(-HAND_MAX_FORCE_N)} {num(HAND_MAX_FORCE_N)}"/>'
    ]
    return tendon, equality, actuator


def mjcf_object_lines(obj: GraspObject, pose_object: Matrix4, num) -> list[str]:
    """Worldbody lines: the floor, the pedestal under the object and the free object itself."""

    def v(values) -> str:
        return " ".join(num(x) for x in values)

    centre = [pose_object[i][3] for i in range(3)]
    bottom_z = centre[2] - 0.5 * obj.height_m
    if bottom_z <= 0.0:
        raise ValueError(f"the grasp object would stand below the floor (its bottom at z = {bottom_z:.3f} m)")
    quat = _quat_wxyz(pose_object)
    half = (0.5 * obj.depth_m, 0.5 * obj.width_m, 0.5 * obj.height_m)
    m = obj.mass_kg
    inertia = (
        m * (obj.width_m**2 + obj.height_m**2) / 12.0,
        m * (obj.depth_m**2 + obj.height_m**2) / 12.0,
        m * (obj.depth_m**2 + obj.width_m**2) / 12.0,
    )
    # The pedestal: a column under 80 % of the box's footprint, from the floor to the box's bottom.
    pedestal_half = (0.4 * obj.depth_m, 0.4 * obj.width_m, 0.5 * bottom_z)
    return [
        f'<geom name="{FLOOR_GEOM}" type="plane" size="0 0 0.05" contype="0" conaffinity="1" '
        'rgba="0.5 0.5 0.5 1"/>',
        f'<geom name="{GRASP_PEDESTAL_GEOM}" type="box" pos="{v((centre[0], centre[1], 0.5 * bottom_z))}" '
        f'quat="{v(quat)}" size="{v(pedestal_half)}" contype="0" conaffinity="1" rgba="0.6 0.5 0.4 1"/>',
        f'<body name="{GRASP_OBJECT_BODY}" pos="{v(centre)}" quat="{v(quat)}">',
        f'  <freejoint name="{GRASP_OBJECT_BODY}"/>',
        f'  <inertial pos="0 0 0" mass="{num(m)}" diaginertia="{v(inertia)}"/>',
        f'  <geom type="box" size="{v(half)}" contype="1" conaffinity="3" condim="4" '
        'friction="1 0.02 0.0001" rgba="0.9 0.3 0.2 1"/>',
        "</body>",
    ]


def object_qpos(pose_object: Matrix4) -> tuple[float, ...]:
    """The object's free-joint qpos (position, quaternion w x y z) at its pose."""
    return (*(pose_object[i][3] for i in range(3)), *_quat_wxyz(pose_object))
