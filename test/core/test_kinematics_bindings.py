"""jtac_core's kinematics, through the bindings, against Pinocchio's Python API and MuJoCo.

Three independent paths to the same numbers: our C++ wrapper of Pinocchio on the URDF, Pinocchio's
own Python bindings on the URDF, and MuJoCo on the MJCF.
"""

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from jtac_py import _native, robots

FRAMES = ["link8", "ft_sensor", "ee", "tcp"]


def _random_configurations(spec, n, seed):
    rng = np.random.default_rng(seed)
    lower = np.array(spec.q_min_rad)
    upper = np.array(spec.q_max_rad)
    return lower + (upper - lower) * rng.random((n, len(lower)))


@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_forward_kinematics_agrees_with_pinocchio_and_mujoco(robot):
    spec = robots.robot_spec(robot)
    urdf = robots.urdf_xml(robot, tool_mass_kg=0.8, tool_cog_m=(0.0, 0.01, 0.04))
    kin = _native.Kinematics()
    kin.configure(urdf, f"{robot}_link0", robots.joint_names(robot))
    assert kin.num_joints == 7

    model = pin.buildModelFromXML(urdf)
    data = model.createData()
    mj_model = mujoco.MjModel.from_xml_string(robots.mjcf_xml(robot, tool_mass_kg=0.8))
    mj_data = mujoco.MjData(mj_model)

    worst = 0.0
    for q in _random_configurations(spec, 20, seed=11):
        pin.framesForwardKinematics(model, data, q)
        mj_data.qpos[:] = q
        mujoco.mj_kinematics(mj_model, mj_data)
        for suffix in FRAMES:
            frame = f"{robot}_{suffix}"
            T = kin.forward(q, frame)
            T_pin = data.oMf[model.getFrameId(frame)].homogeneous
            body = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, frame)
            T_mj = np.eye(4)
            T_mj[:3, :3] = mj_data.xmat[body].reshape(3, 3)
            T_mj[:3, 3] = mj_data.xpos[body]
            worst = max(worst, np.abs(T - T_pin).max(), np.abs(T - T_mj).max())
    assert worst < 1e-9, f"largest pose difference {worst:.3e}"


def test_jacobian_agrees_with_pinocchio():
    urdf = robots.urdf_xml("fr3")
    kin = _native.Kinematics()
    kin.configure(urdf, "fr3_link0", robots.joint_names("fr3"))
    model = pin.buildModelFromXML(urdf)
    data = model.createData()
    tcp = model.getFrameId("fr3_tcp")
    for q in _random_configurations(robots.robot_spec("fr3"), 10, seed=3):
        J_pin = pin.computeFrameJacobian(model, data, q, tcp, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        np.testing.assert_allclose(kin.jacobian(q, "fr3_tcp"), J_pin, atol=1e-12)


def test_bad_input_is_a_clear_error():
    kin = _native.Kinematics()
    with pytest.raises(ValueError, match="'fr3_link99'"):
        kin.configure(robots.urdf_xml("fr3"), "fr3_link99", robots.joint_names("fr3"))
    kin.configure(robots.urdf_xml("fr3"), "fr3_link0", robots.joint_names("fr3"))
    with pytest.raises(ValueError, match="6 entries, the chain has 7 joints"):
        kin.forward(np.zeros(6), "fr3_link8")
    with pytest.raises(ValueError, match="NaN or Inf"):
        kin.forward(np.array([0, 0, np.nan, 0, 0, 0, 0.0]), "fr3_link8")
    with pytest.raises(ValueError, match="'nowhere'"):
        kin.forward(np.zeros(7), "nowhere")


def test_result_codes_have_the_action_numbers():
    codes = {c.name: int(c) for c in _native.ResultCode.__members__.values()}
    assert codes == {
        "SUCCESSFUL": 0,
        "INVALID_GOAL": -1,
        "INVALID_JOINTS": -2,
        "OLD_HEADER_TIMESTAMP": -3,
        "PATH_TOLERANCE_VIOLATED": -4,
        "GOAL_TOLERANCE_VIOLATED": -5,
        "ADMITTANCE_ERROR": -6,
        "FORCE_TORQUE_THRESHOLD_EXCEEDED": -7,
        "GOAL_ABORTED_DUE_TO_STITCHING": -8,
        "INVALID_STATE": -9,
    }
