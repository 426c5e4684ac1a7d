"""A control law written in Python and compiled by Numba against the same law written in C++.

The law: a joint impedance (each joint a virtual mass-spring-damper about where it started, driven by
the external joint torque; the C++ twin is ``jtac_joint_impedance_law`` in
jtac_loop/src/callback_law.cpp, the Python one below is the same arithmetic). Both run as a
``CallbackLaw`` in the same controller, on the simulated FR3 in lockstep (a push on the TCP keeps
τ_ext non-zero), alternating in blocks of cycles in the same run. Figures per controller cycle:

- the law's own call: the steady clock around the function pointer call inside ``CallbackLaw::update``
  (``call_ns_total`` / ``calls`` per block; the median over the blocks, so that one preempted call on
  a shared machine does not carry the figure; the clock reads themselves, ~20 ns, are in both), and
  the longest call [ns];
- the whole controller cycle (read → command submitted: kinematics for the law's TCP pose and
  Jacobian, the call, checks, snapshot, record row) from the recording, median and p99 [µs].

A benchmark, not a test: exit code 0 always.

    .venv/bin/python bench/bench_python_law.py [--blocks N] [--cycles-per-block N]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from jtac_py import _native, laws, robots
from jtac_py.controller import Controller
from jtac_py.hardware import SimulatedArm


def joint_impedance(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd):
    """The arithmetic of jtac_joint_impedance_law, line for line."""
    if memory[0] == 0.0:
        memory[0] = 1.0
        for j in range(7):
            memory[1 + j] = q_d[j]
            memory[8 + j] = 0.0
            memory[15 + j] = 0.0
    for j in range(7):
        k = params[j]
        d = params[7 + j]
        m = params[14 + j]
        a = (tau_ext[j] - d * memory[15 + j] - k * memory[8 + j]) / m
        memory[15 + j] += a * dt
        memory[8 + j] += memory[15 + j] * dt
        q_cmd[j] = memory[1 + j] + memory[8 + j]
        dq_cmd[j] = memory[15 + j]
    return 0


PARAMS = np.concatenate([np.full(7, 40.0), np.full(7, 2.0 * np.sqrt(40.0 * 0.5)), np.full(7, 0.5)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=10, help="blocks per law, alternating")
    parser.add_argument("--cycles-per-block", type=int, default=2000)
    args = parser.parse_args()

    compiled = laws.compile(joint_impedance, 21, 22, params=PARAMS)
    arm = SimulatedArm("fr3", clock="lockstep")
    controller = Controller(arm).start()
    spec = robots.robot_spec("fr3")
    common = {
        "num_params": 21,
        "num_memory": 22,
        "params": PARAMS,
        "urdf_xml": arm.urdf_xml,
        "base_frame": spec.base_frame,
        "joint_names": list(spec.joint_names),
        "tcp_frame": spec.tcp_frame,
    }
    native = {
        "Python (Numba)": _native.CallbackLaw(compiled.address, name="joint_impedance_py", **common),
        "C++": _native.CallbackLaw(
            _native.reference_law_address("joint_impedance"), name="joint_impedance_cpp", **common
        ),
    }
    loop = controller._loop  # the bench drives the loop's slot directly, with both laws alike
    block_means: dict[str, list[float]] = {name: [] for name in native}
    max_ns = {name: 0 for name in native}
    cycle_us: dict[str, list[np.ndarray]] = {name: [] for name in native}
    try:
        controller.step(50)
        for block in range(2 * args.blocks):
            name = list(native)[block % 2]
            law = native[name]
            loop.use_law(law)
            controller.step(5)  # the switch and the law's first cycles, not timed
            arm.push([0.0, 10.0, 0.0], args.cycles_per_block * 0.001)
            c0, ns0 = law.calls, law.call_ns_total
            with controller.record(["cycle_duration_us"]) as rec:
                controller.step(args.cycles_per_block)
            block_means[name].append((law.call_ns_total - ns0) / (law.calls - c0))
            max_ns[name] = max(max_ns[name], law.call_ns_max)
            cycle_us[name].append(rec.data()["cycle_duration_us"])
            loop.use_law(None)
            controller.step(5)
            assert law.error is None, law.error
    finally:
        controller.stop()

    print(
        f"joint impedance law, FR3 in lockstep, {args.blocks} x {args.cycles_per_block} cycles per law, "
        "alternating blocks"
    )
    print(
        f"{'law':<16} {'call [ns]':>10} {'call max [µs]':>14} "
        f"{'cycle median [µs]':>18} {'cycle p99 [µs]':>15}"
    )
    mean = {}
    for name in native:
        mean[name] = float(np.median(block_means[name]))
        cycles = np.concatenate(cycle_us[name])
        print(
            f"{name:<16} {mean[name]:>10.0f} {max_ns[name] / 1e3:>14.1f} {np.median(cycles):>18.2f} "
            f"{np.percentile(cycles, 99):>15.2f}"
        )
    ratio = mean["Python (Numba)"] / mean["C++"]
    print(f"ratio Python (Numba) / C++, call (median of the block means): {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
