"""Parameter tables of the Franka FR3 and Franka Panda (FER) arms, one `RobotSpec` per robot.

Every number below is copied from a published source named next to it; nothing is fitted here.
Units: m, rad, kg, kg*m^2, s, N*m. Joint-space tuples have 7 entries, joint1 first.

Sources, referred to by tag in the comments:
  [FD]   frankaemika/franka_description (Apache-2.0): robots/fer/kinematics.yaml (joint origins, used
         unchanged by FR3), robots/fr3/joint_limits.yaml, robots/fr3/inertials.yaml.
  [FCI]  Franka Control Interface documentation, "Robot and interface specifications" /
         "Limits for Franka Research 3" and "Limits for Panda"
         (https://frankarobotics.github.io/docs/control_parameters.html).
  [LF]   libfranka include/franka/rate_limiting.h: 0.9.x for Panda, >= 0.10 for FR3 (the limits there
         are the [FCI] values minus a margin kLimitEps = 1e-3, which we do not subtract).
  [GAZ]  C. Gaz, M. Cognetti, A. Oliva, P. Robuffo Giordano, A. De Luca, "Dynamic Identification of the
         Franka Emika Panda Robot With Retrieval of Feasible Parameters Using Penalty-Based
         Optimization", IEEE RA-L 4(4), 2019; as tabulated in frankaemika/franka_ros
         franka_description/robots/common/inertial.yaml (link0 there is Franka's CAD estimate).
  [MENAGERIE] google-deepmind/mujoco_menagerie franka_fr3/fr3.xml: armature and damping identified for
         the FR3 joints (used only by the simulated arm, never by the controller).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NUM_JOINTS = 7

_HALF_PI = math.pi / 2.0

# Franka hand's TCP lies 0.1034 m along the flange z axis (F_T_NE of the Franka Hand, [FCI]); we keep that
# distance as the default TCP so that a description without a hand still has the familiar tool point.
DEFAULT_TCP_OFFSET_M = (0.0, 0.0, 0.1034)


@dataclass(frozen=True)
class JointOrigin:
    """Placement of a joint frame in its parent link frame (URDF convention: R = Rz(y) Ry(p) Rx(r))."""

    xyz_m: tuple[float, float, float]
    rpy_rad: tuple[float, float, float]


@dataclass(frozen=True)
class LinkInertial:
    """Rigid-body parameters of one link, expressed in that link's frame."""

    mass_kg: float
    com_m: tuple[float, float, float]
    # (ixx, iyy, izz, ixy, ixz, iyz) about the centre of mass, axes parallel to the link frame [kg*m^2];
    # this is also MuJoCo's fullinertia order.
    inertia_kgm2: tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class VelocityBoundCoeffs:
    """Coefficients of a position-dependent joint velocity bound, as published for FR3 [FCI], [LF].

    upper(q) = min(dq_max, max(0, -offset + sqrt(max(0, gain * (q_upper_ref - q)))))
    lower(q) = max(-dq_max, min(0, offset - sqrt(max(0, gain * (q - q_lower_ref)))))
    """

    offset_rad_s: float
    gain_rad_s2: float
    q_upper_ref_rad: float
    q_lower_ref_rad: float


@dataclass(frozen=True)
class RobotSpec:
    """Everything jtac knows about one arm model: kinematics, limits, inertials and frame names."""

    name: str
    joint_names: tuple[str, ...]
    # Joint i's origin in link(i-1); the 8th entry is the fixed flange joint link7 -> link8.
    joint_origins: tuple[JointOrigin, ...]
    q_min_rad: tuple[float, ...]
    q_max_rad: tuple[float, ...]
    dq_max_rad_s: tuple[float, ...]
    ddq_max_rad_s2: tuple[float, ...]
    dddq_max_rad_s3: tuple[float, ...]
    tau_max_nm: tuple[float, ...]
    dtau_max_nm_s: tuple[float, ...]
    # None where the velocity bound is the constant dq_max_rad_s (Panda).
    velocity_bound_coeffs: tuple[VelocityBoundCoeffs, ...] | None
    # Cartesian limits of the flange/EE motion generators [LF]; the elbow is joint 3's position.
    v_trans_max_m_s: float
    a_trans_max_m_s2: float
    j_trans_max_m_s3: float
    v_rot_max_rad_s: float
    a_rot_max_rad_s2: float
    j_rot_max_rad_s3: float
    v_elbow_max_rad_s: float
    a_elbow_max_rad_s2: float
    j_elbow_max_rad_s3: float
    # link0 .. link7; link8 (the flange) carries no mass in the published descriptions.
    link_inertials: tuple[LinkInertial, ...]
    # Simulation-only joint dynamics of the MuJoCo arm.
    armature_kgm2: tuple[float, ...]
    damping_nm_s_rad: tuple[float, ...]
    # Franka's "ready" pose, inside the limits of both arms [rad].
    q_home_rad: tuple[float, ...]
    default_tcp_offset_m: tuple[float, float, float] = DEFAULT_TCP_OFFSET_M

    @property
    def base_frame(self) -> str:
        """Frame the arm is mounted by and all poses are expressed in."""
        return f"{self.name}_link0"

    @property
    def flange_frame(self) -> str:
        """Mounting face of the flange, 0.107 m beyond joint 7's frame."""
        return f"{self.name}_link8"

    @property
    def sensor_frame(self) -> str:
        """Measurement frame of the force/torque sensor (controller parameter sensor_frame)."""
        return f"{self.name}_ft_sensor"

    @property
    def ee_frame(self) -> str:
        """Tool mounting face beyond the sensor (controller parameter ee_frame)."""
        return f"{self.name}_ee"

    @property
    def tool_frame(self) -> str:
        """Link carrying the tool's mass; coincides with ee_frame, the tool cog is given in it."""
        return f"{self.name}_tool"

    @property
    def tcp_frame(self) -> str:
        """Tool centre point, a fixed translation from ee_frame."""
        return f"{self.name}_tcp"

    @property
    def link_names(self) -> tuple[str, ...]:
        """Names of link0 .. link8, base first."""
        return tuple(f"{self.name}_link{i}" for i in range(NUM_JOINTS + 2))

    def velocity_bounds_rad_s(self, q_rad) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(lower, upper) joint velocity bounds at position q_rad [rad/s], published formula for FR3."""
        if self.velocity_bound_coeffs is None:
            return tuple(-v for v in self.dq_max_rad_s), tuple(self.dq_max_rad_s)
        lower = []
        upper = []
        for q, v_max, c in zip(q_rad, self.dq_max_rad_s, self.velocity_bound_coeffs, strict=True):
            q = float(q)
            up = -c.offset_rad_s + math.sqrt(max(0.0, c.gain_rad_s2 * (c.q_upper_ref_rad - q)))
            lo = c.offset_rad_s - math.sqrt(max(0.0, c.gain_rad_s2 * (q - c.q_lower_ref_rad)))
            upper.append(min(v_max, max(0.0, up)))
            lower.append(max(-v_max, min(0.0, lo)))
        return tuple(lower), tuple(upper)


def _joint_names(prefix: str) -> tuple[str, ...]:
    return tuple(f"{prefix}_joint{i}" for i in range(1, NUM_JOINTS + 1))


# Modified-DH joint origins of both arms [FD] robots/fer/kinematics.yaml; FR3 uses the same numbers
# (a3 = 0.0825, d1 = 0.333, d3 = 0.316, d5 = 0.384, a7 = 0.088, flange d = 0.107).
FRANKA_JOINT_ORIGINS = (
    JointOrigin((0.0, 0.0, 0.333), (0.0, 0.0, 0.0)),
    JointOrigin((0.0, 0.0, 0.0), (-_HALF_PI, 0.0, 0.0)),
    JointOrigin((0.0, -0.316, 0.0), (_HALF_PI, 0.0, 0.0)),
    JointOrigin((0.0825, 0.0, 0.0), (_HALF_PI, 0.0, 0.0)),
    JointOrigin((-0.0825, 0.384, 0.0), (-_HALF_PI, 0.0, 0.0)),
    JointOrigin((0.0, 0.0, 0.0), (_HALF_PI, 0.0, 0.0)),
    JointOrigin((0.088, 0.0, 0.0), (_HALF_PI, 0.0, 0.0)),
    JointOrigin((0.0, 0.0, 0.107), (0.0, 0.0, 0.0)),
)

_Q_HOME_RAD = (0.0, -math.pi / 4.0, 0.0, -3.0 * math.pi / 4.0, 0.0, math.pi / 2.0, math.pi / 4.0)

# [MENAGERIE]: armature 0.195 kg*m^2 on the 87 N*m joints, 0.074 on the 12 N*m wrist joints, damping 0.21.
# The Panda shares the FR3's drive units, so the same values serve its simulation.
_SIM_ARMATURE_KGM2 = (0.195, 0.195, 0.195, 0.195, 0.074, 0.074, 0.074)
_SIM_DAMPING_NM_S_RAD = (0.21,) * NUM_JOINTS

FR3 = RobotSpec(
    name="fr3",
    joint_names=_joint_names("fr3"),
    joint_origins=FRANKA_JOINT_ORIGINS,
    # [FD] robots/fr3/joint_limits.yaml, identical to [FCI] "Limits for Franka Research 3".
    q_min_rad=(-2.7437, -1.7837, -2.9007, -3.0421, -2.8065, 0.5445, -3.0159),
    q_max_rad=(2.7437, 1.7837, 2.9007, -0.1518, 2.8065, 4.5169, 3.0159),
    dq_max_rad_s=(2.62, 2.62, 2.62, 2.62, 5.26, 4.18, 5.26),
    tau_max_nm=(87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0),
    # [FCI] / [LF] >= 0.10: kMaxJointAcceleration, kMaxJointJerk, kMaxTorqueRate.
    ddq_max_rad_s2=(10.0,) * NUM_JOINTS,
    dddq_max_rad_s3=(5000.0,) * NUM_JOINTS,
    dtau_max_nm_s=(1000.0,) * NUM_JOINTS,
    # [LF] >= 0.10 computeUpperLimitsJointVelocity / computeLowerLimitsJointVelocity.
    velocity_bound_coeffs=(
        VelocityBoundCoeffs(0.30, 12.0, 2.7501, -2.7501),
        VelocityBoundCoeffs(0.20, 5.17, 1.7918, -1.7918),
        VelocityBoundCoeffs(0.20, 7.00, 2.9065, -2.9065),
        VelocityBoundCoeffs(0.30, 8.00, -0.1458, -3.0481),
        VelocityBoundCoeffs(0.35, 34.0, 2.8101, -2.8101),
        VelocityBoundCoeffs(0.35, 11.0, 4.5205, 0.54092),
        VelocityBoundCoeffs(0.35, 34.0, 3.0196, -3.0196),
    ),
    # [LF] >= 0.10 Cartesian and elbow limits.
    v_trans_max_m_s=3.0,
    a_trans_max_m_s2=9.0,
    j_trans_max_m_s3=4500.0,
    v_rot_max_rad_s=2.5,
    a_rot_max_rad_s2=17.0,
    j_rot_max_rad_s3=8500.0,
    v_elbow_max_rad_s=1.5,
    a_elbow_max_rad_s2=10.0,
    j_elbow_max_rad_s3=5000.0,
    # [FD] robots/fr3/inertials.yaml (Franka's values for FR3), rounded to 1e-10 kg*m^2 / 1e-10 m.
    link_inertials=(
        LinkInertial(2.3966, (-0.0172, 0.0004, 0.0745), (0.009, 0.0115, 0.0085, 0.0, 0.002, 0.0)),
        LinkInertial(
            2.9274653454,
            (0.0000004128, -0.0181251324, -0.0386035970),
            (0.0239273165, 0.0224821613, 0.0063500983, 0.0000133179, -0.0001140477, -0.0019950321),
        ),
        LinkInertial(
            2.9355370338,
            (0.0031828864, -0.0743221644, 0.0088146084),
            (0.0419389463, 0.0251451489, 0.0617021447, 0.0002025733, 0.0040777842, -0.0042252158),
        ),
        LinkInertial(
            2.2449013699,
            (0.0407015686, -0.0048200565, -0.0289730823),
            (0.0241014255, 0.0197405327, 0.0190444945, 0.0024046946, -0.0028562693, -0.0021042127),
        ),
        LinkInertial(
            2.6155955791,
            (-0.0459100965, 0.0630492960, -0.0085187868),
            (0.0345299832, 0.0288816219, 0.0412547117, 0.0132255227, 0.0101514300, -0.0009762834),
        ),
        LinkInertial(
            2.3271207594,
            (-0.0016039605, 0.0292536262, -0.0972965990),
            (0.0516102785, 0.0478772971, 0.0164236256, -0.0057151734, -0.0035673168, 0.0106739851),
        ),
        LinkInertial(
            1.8170376524,
            (0.0597131221, -0.0410294666, -0.0101692726),
            (0.0054123336, 0.0140583295, 0.0160808179, 0.0061934564, 0.0014219289, -0.0013140754),
        ),
        LinkInertial(
            0.6271432862,
            (0.0045225817, 0.0086261921, -0.0161633251),
            (0.0002109239, 0.0001771857, 0.0000599319, -0.0000243330, 0.0000456448, 0.0000874407),
        ),
    ),
    armature_kgm2=_SIM_ARMATURE_KGM2,
    damping_nm_s_rad=_SIM_DAMPING_NM_S_RAD,
    q_home_rad=_Q_HOME_RAD,
)

PANDA = RobotSpec(
    name="panda",
    joint_names=_joint_names("panda"),
    joint_origins=FRANKA_JOINT_ORIGINS,
    # [FCI] "Limits for Panda" (also franka_ros panda joint_limits.yaml).
    q_min_rad=(-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973),
    q_max_rad=(2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973),
    dq_max_rad_s=(2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61),
    tau_max_nm=(87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0),
    # [FCI] / [LF] 0.9: kMaxJointAcceleration, kMaxJointJerk, kMaxTorqueRate.
    ddq_max_rad_s2=(15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0),
    dddq_max_rad_s3=(7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0),
    dtau_max_nm_s=(1000.0,) * NUM_JOINTS,
    velocity_bound_coeffs=None,
    # [LF] 0.9 Cartesian and elbow limits.
    v_trans_max_m_s=1.7,
    a_trans_max_m_s2=13.0,
    j_trans_max_m_s3=6500.0,
    v_rot_max_rad_s=2.5,
    a_rot_max_rad_s2=25.0,
    j_rot_max_rad_s3=12500.0,
    v_elbow_max_rad_s=2.175,
    a_elbow_max_rad_s2=10.0,
    j_elbow_max_rad_s3=5000.0,
    # [GAZ] identified parameters (link0: Franka's estimate from the same file).
    link_inertials=(
        LinkInertial(
            0.629769,
            (-0.041018, -0.00014, 0.049974),
            (0.00315, 0.00388, 0.004285, 8.2904e-07, 0.00015, 8.2299e-06),
        ),
        LinkInertial(
            4.970684,
            (0.003875, 0.002081, -0.04762),
            (0.70337, 0.70661, 0.009117, -0.000139, 0.006772, 0.019169),
        ),
        LinkInertial(
            0.646926,
            (-0.003141, -0.02872, 0.003495),
            (0.007962, 0.02811, 0.025995, -0.003925, 0.010254, 0.000704),
        ),
        LinkInertial(
            3.228604,
            (0.027518, 0.039252, -0.066502),
            (0.037242, 0.036155, 0.01083, -0.004761, -0.011396, -0.012805),
        ),
        LinkInertial(
            3.587895,
            (-0.05317, 0.104419, 0.027454),
            (0.025853, 0.019552, 0.028323, 0.007796, -0.001332, 0.008641),
        ),
        LinkInertial(
            1.225946,
            (-0.011953, 0.041065, -0.038437),
            (0.035549, 0.029474, 0.008627, -0.002117, -0.004037, 0.000229),
        ),
        LinkInertial(
            1.666555,
            (0.060149, -0.014117, -0.010517),
            (0.001964, 0.004354, 0.005433, 0.000109, -0.001158, 0.000341),
        ),
        LinkInertial(
            0.735522,
            (0.010517, -0.004252, 0.061597),
            (0.012516, 0.010027, 0.004815, -0.000428, -0.001196, -0.000741),
        ),
    ),
    armature_kgm2=_SIM_ARMATURE_KGM2,
    damping_nm_s_rad=_SIM_DAMPING_NM_S_RAD,
    q_home_rad=_Q_HOME_RAD,
)

SPECS = {spec.name: spec for spec in (FR3, PANDA)}
