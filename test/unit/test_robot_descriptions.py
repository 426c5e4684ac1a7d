"""The generated FR3/Panda descriptions: Pinocchio (URDF) and MuJoCo (MJCF) agree with each other and
with the parameter tables, the tool shows up where the controller expects it, and the committed files
are exactly the generator's output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from jtac_py import robots
from jtac_py.robots import generate

REPO_ROOT = Path(__file__).resolve().parents[2]

NUM_RANDOM_CONFIGS = 20
FK_TOL_M = 1e-9
FK_TOL_ROT = 1e-9
# Static force balance is exact up to rounding of ~20 N joint torques: 1e-9 N is already loose.
WRENCH_TOL = 1e-9

DEFAULT_TOOL = {}
# A tool unlike the default in every parameter: mass [kg], cog [m] and tcp [m] in the ee frame,
# sensor thickness [m] and a full inertia about the cog [kg*m^2].
HEAVY_TOOL = {
    "tool_mass_kg": 1.2,
    "tool_cog_m": (0.01, 0.0, 0.05),
    "tcp_offset_m": (0.02, -0.01, 0.2),
    "sensor_thickness_m": 0.035,
    "tool_inertia_kgm2": (0.004, 0.005, 0.003, 0.0002, -0.0001, 0.0003),
}
TOOLS = {"default_tool": DEFAULT_TOOL, "heavy_tool": HEAVY_TOOL}


def load_pair(robot: str, tool: dict) -> tuple[pin.Model, mujoco.MjModel]:
    return pin.buildModelFromXML(robots.urdf_xml(robot, **tool)), mujoco.MjModel.from_xml_string(
        robots.mjcf_xml(robot, **tool)
    )


def random_configs(spec: robots.RobotSpec, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(spec.q_min_rad, spec.q_max_rad, size=(NUM_RANDOM_CONFIGS, robots.NUM_JOINTS))


def static_data(mj_model: mujoco.MjModel, q_rad) -> mujoco.MjData:
    """MjData at q_rad, at rest, with the joints held by applied torques so that qacc = 0."""
    data = mujoco.MjData(mj_model)
    data.qpos[:] = q_rad
    mujoco.mj_forward(mj_model, data)
    data.qfrc_applied[:] = data.qfrc_bias
    mujoco.mj_forward(mj_model, data)
    return data


@pytest.mark.parametrize("tool_name", TOOLS)
@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_pinocchio_and_mujoco_forward_kinematics_agree(robot, tool_name):
    spec = robots.robot_spec(robot)
    pin_model, mj_model = load_pair(robot, TOOLS[tool_name])
    pin_data = pin_model.createData()
    mj_data = mujoco.MjData(mj_model)
    body_frames = [*spec.link_names, spec.sensor_frame, spec.ee_frame, spec.tool_frame, spec.tcp_frame]
    site_frames = [spec.sensor_frame, spec.ee_frame, spec.tcp_frame]
    pin_ids = {name: pin_model.getFrameId(name, pin.FrameType.BODY) for name in body_frames}
    assert all(i < pin_model.nframes for i in pin_ids.values())
    # Joint order must agree too, or equal FK would be a coincidence of the test's q.
    assert list(pin_model.names[1:]) == list(spec.joint_names)
    assert [mj_model.joint(i).name for i in range(mj_model.njnt)] == list(spec.joint_names)

    worst_m = worst_rot = 0.0
    for q in random_configs(spec, seed=7):
        pin.framesForwardKinematics(pin_model, pin_data, q)
        mj_data.qpos[:] = q
        mujoco.mj_kinematics(mj_model, mj_data)
        for name in body_frames:
            placement = pin_data.oMf[pin_ids[name]]
            body = mj_data.body(name)
            worst_m = max(worst_m, np.abs(placement.translation - body.xpos).max())
            worst_rot = max(worst_rot, np.abs(placement.rotation - body.xmat.reshape(3, 3)).max())
        for name in site_frames:
            placement = pin_data.oMf[pin_ids[name]]
            site = mj_data.site(name)
            worst_m = max(worst_m, np.abs(placement.translation - site.xpos).max())
            worst_rot = max(worst_rot, np.abs(placement.rotation - site.xmat.reshape(3, 3)).max())
    print(f"{robot}/{tool_name}: max FK discrepancy {worst_m:.3g} m, {worst_rot:.3g} (rotation entries)")
    assert worst_m < FK_TOL_M
    assert worst_rot < FK_TOL_ROT


@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_kinematics_match_published_franka_geometry(robot):
    """At q = 0 the flange sits at x = a7 = 0.088 m, z = d1 + d3 + d5 - d_flange = 0.926 m."""
    spec = robots.robot_spec(robot)
    _, mj_model = load_pair(robot, DEFAULT_TOOL)
    data = mujoco.MjData(mj_model)
    mujoco.mj_kinematics(mj_model, data)
    np.testing.assert_allclose(data.body(spec.flange_frame).xpos, [0.088, 0.0, 0.926], atol=1e-12)
    # Flange z points down at q = 0, so the default TCP is 0.1034 m below it.
    np.testing.assert_allclose(data.site(spec.tcp_frame).xpos, [0.088, 0.0, 0.926 - 0.1034], atol=1e-12)


@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_joint_limits_in_both_descriptions_equal_the_spec(robot):
    spec = robots.robot_spec(robot)
    pin_model, mj_model = load_pair(robot, DEFAULT_TOOL)
    np.testing.assert_array_equal(pin_model.lowerPositionLimit, spec.q_min_rad)
    np.testing.assert_array_equal(pin_model.upperPositionLimit, spec.q_max_rad)
    np.testing.assert_array_equal(pin_model.velocityLimit, spec.dq_max_rad_s)
    np.testing.assert_array_equal(pin_model.effortLimit, spec.tau_max_nm)

    assert mj_model.jnt_limited.all()
    np.testing.assert_array_equal(mj_model.jnt_range[:, 0], spec.q_min_rad)
    np.testing.assert_array_equal(mj_model.jnt_range[:, 1], spec.q_max_rad)
    np.testing.assert_array_equal(mj_model.dof_armature, spec.armature_kgm2)
    np.testing.assert_array_equal(mj_model.dof_damping, spec.damping_nm_s_rad)
    assert [mj_model.actuator(i).name for i in range(mj_model.nu)] == list(spec.joint_names)
    np.testing.assert_array_equal(mj_model.actuator_trnid[:, 0], np.arange(robots.NUM_JOINTS))
    np.testing.assert_array_equal(mj_model.actuator_gear[:, 0], 1.0)
    assert mj_model.actuator_ctrllimited.all()
    np.testing.assert_array_equal(mj_model.actuator_ctrlrange[:, 0], -np.array(spec.tau_max_nm))
    np.testing.assert_array_equal(mj_model.actuator_ctrlrange[:, 1], spec.tau_max_nm)


@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_simulation_options_and_no_collisions(robot):
    _, mj_model = load_pair(robot, HEAVY_TOOL)
    assert mj_model.opt.timestep == 0.001
    np.testing.assert_array_equal(mj_model.opt.gravity, [0.0, 0.0, -9.81])
    assert not mj_model.geom_contype.any() and not mj_model.geom_conaffinity.any()
    assert not mj_model.body_gravcomp.any()
    data = mujoco.MjData(mj_model)
    data.qpos[:] = robots.robot_spec(robot).q_home_rad
    mujoco.mj_forward(mj_model, data)
    assert data.ncon == 0


@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_link_masses_equal_the_spec(robot):
    spec = robots.robot_spec(robot)
    pin_model, mj_model = load_pair(robot, DEFAULT_TOOL)
    for link, inertial in zip(spec.link_names, spec.link_inertials, strict=False):
        assert mj_model.body(link).mass[0] == inertial.mass_kg
        np.testing.assert_array_equal(mj_model.body(link).ipos, inertial.com_m)
    arm_mass_kg = sum(i.mass_kg for i in spec.link_inertials[1:])
    # Pinocchio hangs link0 on the fixed universe joint, so its total counts the moving links only.
    assert pin.computeTotalMass(pin_model) == pytest.approx(arm_mass_kg, abs=1e-12)
    assert mj_model.body_subtreemass[0] == pytest.approx(arm_mass_kg + spec.link_inertials[0].mass_kg)


@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_tool_mass_and_cog_appear_on_the_tool_frame(robot):
    spec = robots.robot_spec(robot)
    mass_kg, cog_m = HEAVY_TOOL["tool_mass_kg"], HEAVY_TOOL["tool_cog_m"]
    pin_bare, mj_bare = load_pair(robot, DEFAULT_TOOL)
    pin_model, mj_model = load_pair(robot, HEAVY_TOOL)

    tool = mj_model.body(spec.tool_frame)
    assert tool.mass[0] == mass_kg
    np.testing.assert_array_equal(tool.ipos, cog_m)
    assert mj_bare.body(spec.tool_frame).mass[0] == 0.0
    assert mj_model.body_subtreemass[0] - mj_bare.body_subtreemass[0] == pytest.approx(mass_kg, abs=1e-12)
    # The tool body sits exactly on the ee frame, so its cog is given in ee coordinates.
    np.testing.assert_array_equal(tool.pos, [0.0, 0.0, 0.0])
    assert mj_model.body(tool.parentid[0]).name == spec.ee_frame

    # Pinocchio keeps a fixed link's inertia on the FIXED_JOINT frame that precedes its BODY frame;
    # both sit where the ee frame is (placements are relative to joint 7).
    body = pin_model.frames[pin_model.getFrameId(spec.tool_frame, pin.FrameType.BODY)]
    joint = pin_model.frames[body.parentFrame]
    assert joint.name == f"{robot}_tool_joint"
    assert joint.inertia.mass == mass_kg
    np.testing.assert_array_equal(joint.inertia.lever, cog_m)
    flange_to_ee_m = spec.joint_origins[7].xyz_m[2] + HEAVY_TOOL["sensor_thickness_m"]
    np.testing.assert_allclose(body.placement.translation, [0.0, 0.0, flange_to_ee_m], rtol=0.0, atol=1e-15)
    np.testing.assert_array_equal(joint.placement.homogeneous, body.placement.homogeneous)
    total_delta_kg = pin.computeTotalMass(pin_model) - pin.computeTotalMass(pin_bare)
    assert total_delta_kg == pytest.approx(mass_kg, abs=1e-12)
    # The tool is rigidly fixed to link7, so Pinocchio folds it into joint 7's body.
    link7_mass_kg = spec.link_inertials[7].mass_kg
    assert pin_model.inertias[7].mass == pytest.approx(link7_mass_kg + mass_kg, abs=1e-12)


def sensor_wrench(mj_model: mujoco.MjModel, data: mujoco.MjData, robot: str) -> tuple[np.ndarray, np.ndarray]:
    return data.sensor(f"{robot}_ft_force").data.copy(), data.sensor(f"{robot}_ft_torque").data.copy()


@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_ft_sensor_reads_the_tool_weight_at_rest(robot):
    """MuJoCo's force/torque sensors report the wrench the flange side exerts on everything beyond the
    sensor, in the sensor frame: at rest that is minus the tool's weight (and its moment)."""
    spec = robots.robot_spec(robot)
    _, mj_model = load_pair(robot, HEAVY_TOOL)
    mass_kg = HEAVY_TOOL["tool_mass_kg"]
    # cog in the sensor frame: the ee frame is sensor_thickness_m along the sensor's z.
    cog_sensor_m = np.add(HEAVY_TOOL["tool_cog_m"], [0.0, 0.0, HEAVY_TOOL["sensor_thickness_m"]])
    for q in random_configs(spec, seed=11)[:5]:
        data = static_data(mj_model, q)
        assert np.abs(data.qacc).max() < 1e-9
        R_world_sensor = data.site(spec.sensor_frame).xmat.reshape(3, 3)
        weight_sensor_n = R_world_sensor.T @ (mass_kg * mj_model.opt.gravity)
        force_n, torque_nm = sensor_wrench(mj_model, data, robot)
        np.testing.assert_allclose(force_n, -weight_sensor_n, rtol=0.0, atol=WRENCH_TOL)
        np.testing.assert_allclose(
            torque_nm, -np.cross(cog_sensor_m, weight_sensor_n), rtol=0.0, atol=WRENCH_TOL
        )
        assert np.linalg.norm(force_n) == pytest.approx(mass_kg * 9.81, abs=1e-12)


@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_ft_sensor_reads_a_wrench_applied_beyond_it(robot):
    """A force pushed on the tcp adds to the reading; with no tool the sensor reads only that force."""
    spec = robots.robot_spec(robot)
    _, mj_model = load_pair(robot, {"tcp_offset_m": (0.0, 0.02, 0.15)})
    force_world_n = np.array([3.0, -4.0, 12.0])
    data = mujoco.MjData(mj_model)
    data.qpos[:] = spec.q_home_rad
    mujoco.mj_forward(mj_model, data)
    tcp_body = mj_model.body(spec.tcp_frame).id
    tcp_world_m = data.site(spec.tcp_frame).xpos.copy()
    data.xfrc_applied[tcp_body, :3] = force_world_n
    # xfrc_applied acts at the body's cog; add the moment that moves it to the tcp site.
    data.xfrc_applied[tcp_body, 3:] = np.cross(tcp_world_m - data.xipos[tcp_body], force_world_n)
    q_ext = np.zeros(mj_model.nv)
    mujoco.mj_applyFT(mj_model, data, force_world_n, np.zeros(3), tcp_world_m, tcp_body, q_ext)
    data.qfrc_applied[:] = data.qfrc_bias - q_ext
    mujoco.mj_forward(mj_model, data)
    assert np.abs(data.qacc).max() < 1e-9

    R_world_sensor = data.site(spec.sensor_frame).xmat.reshape(3, 3)
    lever_sensor_m = R_world_sensor.T @ (tcp_world_m - data.site(spec.sensor_frame).xpos)
    force_sensor_n = R_world_sensor.T @ force_world_n
    force_n, torque_nm = sensor_wrench(mj_model, data, robot)
    np.testing.assert_allclose(force_n, -force_sensor_n, rtol=0.0, atol=WRENCH_TOL)
    np.testing.assert_allclose(
        torque_nm, -np.cross(lever_sensor_m, force_sensor_n), rtol=0.0, atol=WRENCH_TOL
    )


@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_velocity_bounds(robot):
    spec = robots.robot_spec(robot)
    dq_max = np.array(spec.dq_max_rad_s)
    # Mid-range every FR3 joint is far enough from its limits for the full published speed.
    q_mid_rad = 0.5 * (np.array(spec.q_min_rad) + np.array(spec.q_max_rad))
    lower, upper = map(np.array, spec.velocity_bounds_rad_s(q_mid_rad))
    np.testing.assert_array_equal(upper, dq_max)
    np.testing.assert_array_equal(lower, -dq_max)
    for q in random_configs(spec, seed=3):
        lower, upper = map(np.array, spec.velocity_bounds_rad_s(q))
        assert (upper <= dq_max).all() and (upper >= 0.0).all()
        assert (lower >= -dq_max).all() and (lower <= 0.0).all()
    if spec.velocity_bound_coeffs is not None:
        # FR3: the published bound falls to (almost) zero on reaching a position limit [rad/s].
        assert np.abs(spec.velocity_bounds_rad_s(spec.q_max_rad)[1]).max() < 0.01
        assert np.abs(spec.velocity_bounds_rad_s(spec.q_min_rad)[0]).max() < 0.01


def test_published_limits_spot_checks():
    fr3, panda = robots.robot_spec("fr3"), robots.robot_spec("panda")
    assert fr3.q_min_rad[3] == -3.0421 and fr3.q_max_rad[5] == 4.5169
    assert fr3.dq_max_rad_s == (2.62, 2.62, 2.62, 2.62, 5.26, 4.18, 5.26)
    assert panda.q_min_rad[5] == -0.0175 and panda.q_max_rad[5] == 3.7525
    assert panda.ddq_max_rad_s2 == (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)
    for spec in (fr3, panda):
        assert spec.tau_max_nm == (87.0,) * 4 + (12.0,) * 3
        assert len(spec.link_inertials) == robots.NUM_JOINTS + 1
        assert all(lo < hi for lo, hi in zip(spec.q_min_rad, spec.q_max_rad, strict=True))
        assert all(
            lo < q < hi for lo, q, hi in zip(spec.q_min_rad, spec.q_home_rad, spec.q_max_rad, strict=True)
        )
        assert robots.joint_names(spec.name) == tuple(f"{spec.name}_joint{i}" for i in range(1, 8))


def test_bad_tool_parameters_are_rejected():
    with pytest.raises(ValueError, match="tool_mass_kg"):
        robots.urdf_xml("fr3", tool_mass_kg=-1.0)
    with pytest.raises(ValueError, match="tool_cog_m"):
        robots.mjcf_xml("fr3", tool_cog_m=(0.0, 0.0))
    with pytest.raises(ValueError, match="unknown robot"):
        robots.urdf_xml("ur5")


def test_committed_files_equal_the_generator_output():
    files = generate.expected_files()
    assert sorted(p.name for p in files) == [
        "fr3.urdf",
        "fr3.xml",
        "panda.urdf",
        "panda.xml",
        "robot_limits.hpp",
    ]
    for path, text in files.items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: python -m jtac_py.robots.generate"
    assert generate.main(["--check"]) == 0


@pytest.mark.parametrize("robot", robots.ROBOTS)
def test_committed_files_load(robot):
    pin_model = pin.buildModelFromUrdf(str(robots.urdf_path(robot)))
    mj_model = mujoco.MjModel.from_xml_path(str(robots.mjcf_path(robot)))
    assert pin_model.nq == mj_model.nq == robots.NUM_JOINTS


def test_import_needs_neither_pinocchio_nor_mujoco():
    code = (
        "import sys; import jtac_py.robots, jtac_py.robots.generate; "
        "assert not {'pinocchio', 'mujoco'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=REPO_ROOT, env={"PYTHONPATH": str(REPO_ROOT)}
    )
