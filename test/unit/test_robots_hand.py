"""The Franka Hand in the generated descriptions (hand=True) and the grasp object: the URDF's finger joints
(prismatic, the second mimicking the first), the controller's kinematics still on seven joints, the TCP
where Franka puts it, the hand's mass, and the box standing centred at the TCP at its at_q_rad."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from jtac_py import _native, robots

SPEC = robots.robot_spec("fr3")
# A pose away from home, the hand tilted (the box must still stand upright between the fingers).
Q_AWAY_RAD = (0.3, -0.5, 0.2, -2.2, 0.1, 1.9, 0.5)


def _mj_data(model: mujoco.MjModel) -> mujoco.MjData:
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    return data


@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_urdf_has_the_fingers_as_prismatic_joints_the_second_mimicking_the_first(robot):
    root = ET.fromstring(robots.urdf_xml(robot, hand=True))
    joints = {j.get("name"): j for j in root.iter("joint")}
    first, second = (joints[name] for name in robots.finger_joint_names(robot))
    for joint in (first, second):
        assert joint.get("type") == "prismatic"
        limit = joint.find("limit")
        assert (float(limit.get("lower")), float(limit.get("upper"))) == (0.0, 0.04)
    assert first.find("axis").get("xyz") == "0 1 0"
    assert second.find("axis").get("xyz") == "0 -1 0"
    assert second.find("mimic").get("joint") == f"{robot}_finger_joint1"
    assert first.find("mimic") is None
    model = pin.buildModelFromXML(robots.urdf_xml(robot, hand=True))
    assert model.nq == robots.NUM_JOINTS + 2


def test_without_a_hand_nothing_changes():
    assert robots.urdf_xml("fr3", hand=False) == robots.urdf_xml("fr3")
    assert robots.mjcf_xml("fr3", hand=False) == robots.mjcf_xml("fr3")
    assert "finger" not in robots.urdf_xml("fr3")


def test_kinematics_on_the_hand_urdf_has_seven_joints_and_franka_s_tcp():
    kin = _native.Kinematics()
    kin.configure(robots.urdf_xml("fr3", hand=True), SPEC.base_frame, robots.joint_names("fr3"))
    assert kin.num_joints == robots.NUM_JOINTS
    mj_model = mujoco.MjModel.from_xml_string(robots.mjcf_xml("fr3", hand=True))
    mj_data = mujoco.MjData(mj_model)
    tcp_site = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_SITE, SPEC.tcp_frame)
    rng = np.random.default_rng(7)
    worst = 0.0
    for q in rng.uniform(SPEC.q_min_rad, SPEC.q_max_rad, size=(10, robots.NUM_JOINTS)):
        T = kin.forward(q, SPEC.tcp_frame)
        T_ee = kin.forward(q, SPEC.ee_frame)
        # Franka's F_T_EE: 0.1034 m along the flange's z, yawed -45 deg.
        expected = T_ee @ _translation_z(0.1034) @ _yaw(-math.pi / 4.0)
        pure = np.array(robots.tcp_pose(SPEC, q, robots.DEFAULT_TCP_OFFSET_M))
        mj_data.qpos[: robots.NUM_JOINTS] = q
        mujoco.mj_kinematics(mj_model, mj_data)
        T_mj = np.eye(4)
        T_mj[:3, :3] = mj_data.site_xmat[tcp_site].reshape(3, 3)
        T_mj[:3, 3] = mj_data.site_xpos[tcp_site]
        worst = max(worst, np.abs(T - expected).max(), np.abs(T - pure).max(), np.abs(T - T_mj).max())
    assert worst < 1e-9, f"largest TCP pose difference {worst:.3e}"


def test_the_hand_weighs_franka_s_end_effector_load():
    model = mujoco.MjModel.from_xml_string(robots.mjcf_xml("fr3", hand=True))
    data = _mj_data(model)
    hand = model.body(f"{SPEC.name}_hand").id
    assert model.body_subtreemass[hand] == pytest.approx(robots.HAND_MASS_KG, abs=1e-12)
    ee = model.body(SPEC.ee_frame).id
    cog_in_ee = data.xmat[ee].reshape(3, 3).T @ (data.subtree_com[hand] - data.xpos[ee])
    np.testing.assert_allclose(cog_in_ee, robots.HAND_COG_M, atol=1e-12)
    # Open at the keyframe, 0.04 m per finger.
    for name in robots.finger_joint_names("fr3"):
        assert data.qpos[model.joint(name).qposadr[0]] == pytest.approx(0.04)


@pytest.mark.parametrize("at_q_rad", [None, Q_AWAY_RAD], ids=["home", "away"])
def test_the_box_stands_centred_at_the_tcp_at_its_pose(at_q_rad):
    box = robots.GraspObject(0.03, at_q_rad=at_q_rad)
    model = mujoco.MjModel.from_xml_string(robots.mjcf_xml("fr3", hand=True, grasp_object=box))
    assert model.nq == robots.NUM_JOINTS + 2 + 7  # arm, fingers, the box's free joint
    data = mujoco.MjData(model)
    q = SPEC.q_home_rad if at_q_rad is None else at_q_rad
    mujoco.mj_resetDataKeyframe(model, data, 0)
    data.qpos[: robots.NUM_JOINTS] = q
    mujoco.mj_kinematics(model, data)
    body = model.body(robots.GRASP_OBJECT_BODY).id
    tcp = model.site(SPEC.tcp_frame).id
    assert np.linalg.norm(data.xpos[body] - data.site_xpos[tcp]) < 1e-3
    R_box = data.xmat[body].reshape(3, 3)
    np.testing.assert_allclose(R_box[:, 2], (0.0, 0.0, 1.0), atol=1e-12)  # upright
    fingers_axis = data.site_xmat[tcp].reshape(3, 3)[:, 1]
    horizontal = fingers_axis - fingers_axis[2] * np.array([0.0, 0.0, 1.0])
    assert R_box[:, 1] @ horizontal / np.linalg.norm(horizontal) == pytest.approx(1.0, abs=1e-12)
    # The pedestal's top touches the box's bottom.
    pedestal = model.geom("grasp_object_pedestal").id
    top = data.geom_xpos[pedestal][2] + model.geom_size[pedestal][2]
    assert top == pytest.approx(data.xpos[body][2] - 0.5 * box.height_m, abs=1e-12)
    # The pose function says the same.
    np.testing.assert_allclose(
        np.array(robots.grasp_object_pose("fr3", q))[:3, 3], data.xpos[body], atol=1e-12
    )


def test_only_the_pads_and_the_box_collide():
    model = mujoco.MjModel.from_xml_string(
        robots.mjcf_xml("fr3", hand=True, grasp_object=robots.GraspObject(0.03))
    )
    colliding = {
        model.geom(g).name or model.body(model.geom_bodyid[g]).name
        for g in range(model.ngeom)
        if model.geom_contype[g] or model.geom_conaffinity[g]
    }
    assert colliding == {
        "fr3_leftfinger_pad",
        "fr3_rightfinger_pad",
        robots.GRASP_OBJECT_BODY,
        "grasp_object_pedestal",
        "floor",
    }


def test_bad_objects_are_refused_naming_the_field():
    with pytest.raises(ValueError, match="width_m"):
        robots.GraspObject(0.09)
    with pytest.raises(ValueError, match="width_m"):
        robots.GraspObject(float("nan"))
    with pytest.raises(ValueError, match="mass_kg"):
        robots.GraspObject(0.03, mass_kg=0.0)
    with pytest.raises(ValueError, match="at_q_rad"):
        robots.GraspObject(0.03, at_q_rad=(0.0,) * 6)
    with pytest.raises(ValueError, match="hand=True"):
        robots.mjcf_xml("fr3", grasp_object=robots.GraspObject(0.03))
    with pytest.raises(ValueError, match="below the floor"):
        robots.mjcf_xml("fr3", hand=True, grasp_object=robots.GraspObject(0.03, height_m=2.0))


def _translation_z(z: float) -> np.ndarray:
    T = np.eye(4)
    T[2, 3] = z
    return T


def _yaw(angle: float) -> np.ndarray:
    T = np.eye(4)
    c, s = math.cos(angle), math.sin(angle)
    T[:2, :2] = [[c, -s], [s, c]]
    return T
