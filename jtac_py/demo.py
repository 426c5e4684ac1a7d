"""The demo (`make demo`, `jtac demo`): the simulated FR3 executes a trajectory with admittance while pushed.

What runs: the MuJoCo FR3 with a 0.5 kg tool under a force/torque sensor, on its own 1 kHz clock;
jtac's hardware real-time thread (rate matching, limiter) and controller thread (trajectory engine,
F/T filtering, Cartesian admittance) in C++; this module only submits the goal, pushes the arm,
watches the controller's state and records every cycle.

1. The sensor reads the tool's weight at rest; the goal names the payload (mass, centre of gravity)
   so that the controller subtracts its weight in every orientation (a tare would remove it only
   in the pose where it was taken).
2. A 7-joint quintic out and back (2 × 3 s), compliant in x, y and z at the end effector
   (K = 400 N/m, critically damped), stiff in rotation.
3. At t = 2 s a 15 N push sideways at the tool centre point for 1.5 s: the arm yields by ≈ F/K,
   and comes back onto the trajectory when released.
4. Prints the result code, tracking error, peak deflection and force and the loop timing, and
   writes PNG plots (reference vs measured per joint, wrench raw vs filtered, admittance deflection,
   loop-timing histograms; needs matplotlib) and the recording (.npz, and .mcap with ROS 2 schemas
   for Foxglove when the mcap packages are installed: docs/foxglove_layout.json shows the same views).

``run(out_dir)`` does all of it and returns the figures as a ``DemoResult``; examples/02 and
``jtac demo`` call it. Nothing here needs the source tree or ROS.
"""

from __future__ import annotations

import importlib.util
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from jtac_py import Controller, Kinematics, SimulatedArm, Trajectory

__all__ = ["DemoResult", "ee_deflection", "mcap_available", "plots_available", "rotation_vector", "run"]

TOOL_MASS_KG, TOOL_COG_M = 0.5, (0.0, 0.0, 0.05)  # [kg], [m in the ee frame]
STIFFNESS_N_M = 400.0  # [N/m], translational admittance stiffness
PUSH_N = np.array([0.0, 15.0, 0.0])  # [N], world axes, at the TCP
PUSH_AT_S, PUSH_FOR_S = 2.0, 1.5  # [s] after the goal starts
LEG_S = 3.0  # [s], each half of the out-and-back motion
DELTA_RAD = np.array([0.25, -0.2, 0.15, 0.25, -0.25, 0.2, 0.35])


@dataclass
class DemoResult:
    """What one demo run measured, and the files it wrote."""

    ok: bool  # the goal ended SUCCESSFUL
    code: str  # the result code's name
    message: str
    tracking_error_mrad: float  # max |q_cmd − q| outside the push and its settling [mrad]
    peak_deflection_mm: float  # the end effector's largest commanded deflection from the nominal [mm]
    peak_force_n: float  # the largest translational force the admittance saw [N]
    expected_deflection_mm: float  # F/K of the push [mm]
    rows: int  # cycles recorded
    dropped: int  # cycles the recording lost
    unserved_cycles: int
    packets: int
    files: list[Path] = field(default_factory=list)


def plots_available() -> bool:
    """Whether matplotlib is installed (the "plot" extra): the demo writes its plots only then."""
    return importlib.util.find_spec("matplotlib") is not None


def mcap_available() -> bool:
    """Whether the mcap packages are installed (the "mcap" extra): the demo writes demo.mcap only then."""
    return all(importlib.util.find_spec(m) is not None for m in ("mcap", "mcap_ros2"))


def rotation_vector(r: np.ndarray) -> np.ndarray:
    """Angle·axis of a rotation matrix [rad]."""
    angle = math.acos(max(-1.0, min(1.0, (np.trace(r) - 1.0) / 2.0)))
    vee = 0.5 * np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    return vee if angle < 1e-9 else vee * angle / math.sin(angle)


def ee_deflection(kin: Kinematics, q_cmd: np.ndarray, q_ref: np.ndarray, frame: str) -> np.ndarray:
    """(n, 6): the commanded ee pose relative to the nominal one: position [m] and rotation vector [rad]."""
    out = np.zeros((len(q_cmd), 6))
    for k in range(len(q_cmd)):
        t_cmd = kin.forward(q_cmd[k], frame)
        t_ref = kin.forward(q_ref[k], frame)
        out[k, :3] = t_cmd[:3, 3] - t_ref[:3, 3]
        out[k, 3:] = rotation_vector(t_ref[:3, :3].T @ t_cmd[:3, :3])
    return out


def _trajectory(q0: np.ndarray) -> Trajectory:
    """Out to q0 + DELTA_RAD and back, each leg a quintic of LEG_S."""
    q1 = q0 + DELTA_RAD
    samples = 60
    out_leg = Trajectory.quintic(q0, q1, LEG_S, samples=samples)
    back_leg = Trajectory.quintic(q1, q0, LEG_S, samples=samples)
    return Trajectory(
        times_s=np.concatenate([out_leg.times_s, np.asarray(back_leg.times_s) + LEG_S]),
        positions_rad=np.vstack([out_leg.positions_rad, back_leg.positions_rad]),
        velocities_rad_s=np.vstack([out_leg.velocities_rad_s, back_leg.velocities_rad_s]),
        accelerations_rad_s2=np.vstack([out_leg.accelerations_rad_s2, back_leg.accelerations_rad_s2]),
    )


def run(
    out_dir: str | Path,
    *,
    lockstep: bool = False,
    plots: bool = True,
    log: Callable[[str], None] = print,
) -> DemoResult:
    """Runs the demo, prints its progress and results through ``log`` and writes into ``out_dir``.

    ``lockstep``: on a virtual clock (deterministic, in under a second) instead of real time.
    ``plots``: also the four PNG plots (skipped, with a note, when matplotlib is not installed).
    """
    out = Path(out_dir)
    started = time.monotonic()
    clock = "lockstep" if lockstep else "realtime"
    arm = SimulatedArm("fr3", clock=clock, tool_mass_kg=TOOL_MASS_KG, tool_cog_m=TOOL_COG_M)
    # The admittance's deflection counts as path error (the spec compares the trajectory with the
    # measured position): allow the push's ≈ 40 mm (≈ 0.1 rad on a joint) with margin.
    controller = Controller(
        arm, default_path_tolerance=0.25, default_goal_tolerance=0.02, default_goal_time_tolerance=1.0
    )
    log(f"jtac demo: simulated FR3 ({clock}), controller at {controller.update_rate_hz} Hz")
    with controller:
        if lockstep:
            controller.step(200)
        else:
            time.sleep(0.2)
        weight = np.linalg.norm(controller.state.wrench_filtered[:3])
        log(f"  {arm.sensor_frame} reads {weight:.2f} N at rest: the tool's weight, compensated in the goal")

        trajectory = _trajectory(controller.state.q_cmd)
        admittance = {
            "mass": [4.0, 4.0, 4.0, 1.0, 1.0, 1.0],  # [kg, kg·m²]
            "stiffness": [STIFFNESS_N_M] * 3 + [50.0] * 3,  # [N/m, N·m/rad]
            "selected_axes": [True, True, True, False, False, False],
            "end_effector_mass_kg": TOOL_MASS_KG,
            "end_effector_cog_m": list(TOOL_COG_M),
        }
        log(f"  goal: out and back over {2 * LEG_S:.0f} s, compliant in x/y/z (K = {STIFFNESS_N_M:.0f} N/m)")
        with controller.record(path=out / "demo_recording.npz") as recording:
            handle = controller.follow(trajectory, admittance=admittance, wait=False)
            t_goal = controller.state.time
            pushed = False
            next_print = 0.0
            while not handle.done():
                state = controller.state
                t = state.time - t_goal
                if not pushed and t >= PUSH_AT_S:
                    arm.push(PUSH_N, PUSH_FOR_S)
                    pushed = True
                    log(f"  t = {t:4.1f} s  push {np.linalg.norm(PUSH_N):.0f} N along +y for {PUSH_FOR_S} s")
                if t >= next_print:
                    force = np.linalg.norm(state.wrench_control[:3])
                    offset = np.degrees(np.abs(state.joint_offset).max())
                    log(f"  t = {t:4.1f} s  |F| = {force:5.1f} N  largest joint offset {offset:5.2f}°")
                    next_print += 1.0
                if lockstep:
                    controller.step(10)
                else:
                    time.sleep(0.01)
            result = handle.result()
        timing = controller.timing()

    data = recording.data()
    kin = Kinematics()
    kin.configure(arm.urdf_xml, "fr3_link0", controller.joint_names)
    data["ee_deflection"] = ee_deflection(kin, data["q_cmd"], data["q_ref"], arm.ee_frame)
    t_rel = data["time"] - t_goal
    unpushed = (t_rel < PUSH_AT_S) | (t_rel > PUSH_AT_S + PUSH_FOR_S + 1.5)
    tracking = float(np.abs(data["q_cmd"] - data["q"])[unpushed].max())
    deflection_mm = 1e3 * np.linalg.norm(data["ee_deflection"][:, :3], axis=1)
    force_n = np.linalg.norm(data["wrench_control"][:, :3], axis=1)
    loop, hw, dext = timing["loop"], timing["hardware"], timing["dext"]
    summary = DemoResult(
        ok=result.ok,
        code=result.code.name,
        message=result.message,
        tracking_error_mrad=1e3 * tracking,
        peak_deflection_mm=float(deflection_mm.max()),
        peak_force_n=float(force_n.max()),
        expected_deflection_mm=1e3 * float(np.linalg.norm(PUSH_N)) / STIFFNESS_N_M,
        rows=recording.rows,
        dropped=recording.dropped,
        unserved_cycles=int(loop["unserved_cycles"]),
        packets=int(hw["packets"]),
    )

    log(f"result: {result.code.name} ({result.error_code}) {result.message}")
    log(f"  tracking error |q_cmd − q| outside the push: max {summary.tracking_error_mrad:.2f} mrad")
    log(
        f"  peak deflection {summary.peak_deflection_mm:.1f} mm at peak force {summary.peak_force_n:.1f} N "
        f"(F/K = {summary.expected_deflection_mm:.1f} mm)"
    )
    log(f"  recorded {summary.rows} cycles, {summary.dropped} dropped")
    log(
        f"  loop: dEXT median {1e6 * dext['median_s']:.1f} µs, p99 {1e6 * dext['p99_s']:.1f} µs, "
        f"max {1e6 * dext['max_s']:.1f} µs; unserved {summary.unserved_cycles} of {summary.packets} ticks; "
        f"largest gap between device commands {1e-3 * loop['max_device_command_gap_us']:.2f} ms"
    )
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "demo_recording.npz", **data)
    summary.files.append(out / "demo_recording.npz")
    log(f"  wrote {out / 'demo_recording.npz'}")
    if mcap_available():
        summary.files.append(recording.save(out / "demo.mcap"))
        log(f"  wrote {summary.files[-1]}")
    else:
        log("  demo.mcap skipped: the mcap packages are not installed (pip install 'jtac-py[mcap]')")
    if plots and not plots_available():
        log("  plots skipped: matplotlib is not installed (pip install 'jtac-py[plot]')")
    elif plots:
        from jtac_py import plots as plotting

        window = (t_goal + PUSH_AT_S, t_goal + PUSH_AT_S + PUSH_FOR_S)
        for path in plotting.plot_all(
            data, out, prefix="demo", joint_names=controller.joint_names, push_window=window
        ):
            summary.files.append(Path(path))
            log(f"  wrote {path}")
    log(f"done in {time.monotonic() - started:.1f} s")
    return summary
