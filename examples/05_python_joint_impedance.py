"""Example 05: a joint impedance law written in Python, compiled into the native loop, on the simulated FR3.

What runs: the MuJoCo FR3, jtac's hardware and controller threads, and a control law of this script's
own: each joint is a virtual mass-spring-damper about where it started, driven by the external joint
torque the robot measures (m·ẍ + d·ẋ + k·x = τ_ext, command q0 + x). ``jtac_py.compile_law`` turns the
Python function into a C callback (Numba, nopython, no allocation) that the controller thread calls
every cycle without Python or the GIL; ``controller.use_law(law, params)`` switches to it and
``law.set_params`` retunes it while it runs.

The script pushes the TCP sideways (15 N for 0.6 s): the arm yields, then springs back once the push
ends; then it stiffens the law and pushes again: the arm yields less. Prints the deflections, the time
spent in the law per cycle, and exits non-zero when a check fails.

Run: .venv/bin/python examples/05_python_joint_impedance.py [--lockstep]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from jtac_py import Controller, SimulatedArm, laws


def joint_impedance(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd):
    """params: stiffness k (7) [N·m/rad], damping d (7) [N·m·s/rad], virtual inertia m (7) [kg·m²].
    memory: [started, q0 (7), x (7), ẋ (7)]. Loops, not array expressions: nothing is allocated."""
    if memory[0] == 0.0:
        memory[0] = 1.0
        for j in range(7):
            memory[1 + j] = q_d[j]  # where the robot is being held when the law starts
    for j in range(7):
        k, d, m = params[j], params[7 + j], params[14 + j]
        x, v = memory[8 + j], memory[15 + j]
        v += dt * (tau_ext[j] - d * v - k * x) / m  # semi-implicit Euler
        x += dt * v
        memory[8 + j], memory[15 + j] = x, v
        q_cmd[j] = memory[1 + j] + x
        dq_cmd[j] = v
    return 0


def gains(stiffness_nm_rad: float, inertia_kgm2: float = 0.5) -> np.ndarray:
    """params for the same stiffness on every joint, critically damped."""
    damping = 2.0 * np.sqrt(stiffness_nm_rad * inertia_kgm2)
    return np.concatenate([np.full(7, stiffness_nm_rad), np.full(7, damping), np.full(7, inertia_kgm2)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lockstep", action="store_true", help="virtual clock (deterministic, fast)")
    args = parser.parse_args()
    law = laws.compile(joint_impedance, n_params=21, n_memory=22, params=gains(40.0))
    arm = SimulatedArm("fr3", clock="lockstep" if args.lockstep else "realtime")
    controller = Controller(arm).start()

    def wait(seconds: float) -> None:
        if args.lockstep:
            controller.step(round(seconds * 1000))
        else:
            time.sleep(seconds)

    def push_and_measure() -> tuple[float, float]:
        """Largest deflection of the command during a 15 N push, and what is left 1.5 s after it [rad]."""
        q0 = controller.state.q_cmd.copy()
        arm.push([0.0, 15.0, 0.0], 0.6)
        peak = 0.0
        for _ in range(60):
            wait(0.01)
            peak = max(peak, float(np.abs(controller.state.q_cmd - q0).max()))
        wait(1.5)
        return peak, float(np.abs(controller.state.q_cmd - q0).max())

    try:
        wait(0.05)
        controller.use_law(law)
        wait(0.2)
        soft_peak, soft_left = push_and_measure()
        law.set_params(gains(160.0))  # 4x stiffer, from the next cycle on
        stiff_peak, stiff_left = push_and_measure()
        cost = controller.law_calls
        error = controller.law_error
        controller.use_law(None)
    finally:
        controller.stop()
    print(
        f"k = 40 N·m/rad: peak deflection {soft_peak * 1e3:.1f} mrad, {soft_left * 1e3:.2f} mrad left after"
    )
    print(
        f"k = 160 N·m/rad: peak deflection {stiff_peak * 1e3:.1f} mrad, "
        f"{stiff_left * 1e3:.2f} mrad left after"
    )
    print(
        f"law: {cost['calls']} calls, {cost['mean_ns']:.0f} ns mean, "
        f"{cost['max_ns'] / 1e3:.1f} µs max per call"
    )
    ok = error is None and soft_peak > 0.02 and soft_left < 0.2 * soft_peak
    ok = ok and stiff_peak < 0.5 * soft_peak and stiff_left < 0.2 * stiff_peak
    print("OK" if ok else f"FAILED{': ' + error if error else ''}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
