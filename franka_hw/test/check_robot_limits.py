"""The limits compiled into franka_hw equal jtac_py/robots/tables.py bit for bit.

Usage: check_robot_limits.py <print_robot_limits executable>; exit status 1 on any difference (a robot
of tables.py missing from the compiled rows, or one compiled but not there, is a difference too). The
envelope of JointLimits is the URDF's form of tables.py's `velocity_bound_coeffs`: q_min/q_max the
coefficients' anchors, deceleration_limit = gain / 2 (libfranka's formula folds in 2·d).
"""

from __future__ import annotations

import subprocess
import sys

from jtac_py.robots.tables import SPECS, RobotSpec


def expected(spec: RobotSpec) -> dict[str, tuple[float, ...]]:
    """JointLimits field -> the values tables.py gives for it (where the robot has no envelope: its
    joint range as the anchors, zero offsets and deceleration limits)."""
    coeffs = spec.velocity_bound_coeffs
    zeros = (0.0,) * len(spec.dq_max_rad_s)
    return {
        "dq_max_rad_s": spec.dq_max_rad_s,
        "ddq_max_rad_s2": spec.ddq_max_rad_s2,
        "dddq_max_rad_s3": spec.dddq_max_rad_s3,
        "position_based_velocity_limits": (1.0 if coeffs is not None else 0.0,),
        "q_min_rad": tuple(c.q_lower_ref_rad for c in coeffs) if coeffs else spec.q_min_rad,
        "q_max_rad": tuple(c.q_upper_ref_rad for c in coeffs) if coeffs else spec.q_max_rad,
        "velocity_offset_rad_s": tuple(c.offset_rad_s for c in coeffs) if coeffs else zeros,
        "deceleration_limit_rad_s2": tuple(c.gain_rad_s2 / 2.0 for c in coeffs) if coeffs else zeros,
    }


def main(argv: list[str]) -> int:
    output = subprocess.run([argv[1]], check=True, capture_output=True, text=True).stdout
    compiled: dict[tuple[str, str, int], float] = {}
    for line in output.splitlines():
        robot, field, joint, value = line.split()
        compiled[(robot, field, int(joint))] = float(value)
    wanted = {
        (robot, field, joint): float(value)
        for robot, spec in SPECS.items()
        for field, values in expected(spec).items()
        for joint, value in enumerate(values)
    }
    differences = [
        f"{key}: compiled {compiled.get(key)!r}, tables.py {value!r}"
        for key, value in wanted.items()
        if compiled.get(key) != value
    ]
    differences += [f"{key}: compiled but not in tables.py" for key in compiled.keys() - wanted.keys()]
    for difference in differences:
        print(difference, file=sys.stderr)
    print(f"{len(wanted)} values compared, {len(differences)} differ")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
