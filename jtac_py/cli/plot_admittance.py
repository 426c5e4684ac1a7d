"""``jtac plot-admittance``: is an admittance set stable at a rate? Goal intake's own check, printed per
axis, and the continuous vs discrete step response plotted (jtac_py.admittance, docs/admittance.md)."""

from __future__ import annotations

import argparse
from typing import Any

from jtac_py.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliError, matplotlib_missing, seconds

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``plot-admittance`` sub-parser."""
    p = sub.add_parser(
        "plot-admittance",
        help="is an admittance set stable at a rate? plot its continuous vs discrete step response",
        description="Run goal intake's stability check (jtac integrates M·ë + D·ė + K·e = F with "
        "semi-implicit Euler at update_rate; docs/admittance.md) on one tip's set, print each axis's "
        "verdict, spectral radius, largest stable stiffness, natural frequency, damping ratio and settling "
        "time, and plot the predicted step response beside the discrete one. Exit 1 when goal intake "
        "would reject the set.",
    )
    p.add_argument("--mass", type=float, nargs="+", required=True, metavar="M", help="[kg, kg·m²]: 1 or 6")
    p.add_argument("--stiffness", type=float, nargs="+", required=True, metavar="K", help="[N/m, N·m/rad]")
    p.add_argument(
        "--damping", type=float, nargs="+", metavar="D", help="[N·s/m, N·m·s/rad] (default: critical)"
    )
    p.add_argument(
        "--rate", type=float, default=1000.0, metavar="HZ", help="update_rate [Hz] (default: 1000)"
    )
    p.add_argument("--joint-damping", type=float, default=0.0, metavar="PER_S", help="[1/s] (default: 0)")
    p.add_argument(
        "--axes", nargs="+", metavar="AXIS", help="compliant axes among x y z rx ry rz (default: all)"
    )
    p.add_argument("--force", type=float, default=1.0, metavar="F", help="step [N, N·m] (default: 1)")
    p.add_argument(
        "--duration", type=seconds, metavar="S", help="plotted time [s] (default: 2 settling times)"
    )
    p.add_argument(
        "--out", default="admittance_step.png", metavar="FILE", help="image (default: admittance_step.png)"
    )
    p.set_defaults(func=handle)
    return p


def _six(values: list[float] | None, name: str) -> Any:
    """One value for all six axes, or six [x y z rx ry rz]; None when not given."""
    if values is None:
        return None
    if len(values) not in (1, 6):
        raise CliError(EXIT_USAGE, f"--{name} takes 1 or 6 values [x y z rx ry rz], got {len(values)}")
    return values[0] if len(values) == 1 else values


def _selected_axes(names: list[str] | None, axis_names: tuple[str, ...]) -> list[bool]:
    if names is None:
        return [True] * 6
    unknown = set(names) - set(axis_names)
    if unknown:
        raise CliError(EXIT_USAGE, f"--axes: unknown axis {sorted(unknown)} (x y z rx ry rz)")
    return [name in names for name in axis_names]


def _print_verdicts(result: Any) -> None:
    print(f"rate {result.rate_hz:g} Hz, joint damping {result.joint_damping_per_s:g}/s: {result.verdict}")
    for a in result.axes:
        print(
            f"  {a.name:>2}: {a.verdict:<14} radius {a.spectral_radius:.6f}  K_max {a.max_stiffness:.6g}  "
            f"wn {a.natural_frequency_rad_s:.4g} rad/s  zeta {a.damping_ratio:.3g}  "
            f"settling {a.settling_time_s:.4g} s (discrete {a.discrete_settling_time_s:.4g} s)"
        )
        if a.message:
            print(f"      {a.message}")


def handle(args: argparse.Namespace) -> int:
    """Prints the verdicts, writes the plot; exit 1 when goal intake would reject the set."""
    from jtac_py import admittance

    axes = _selected_axes(args.axes, admittance.AXIS_NAMES)
    try:
        result = admittance.check(
            _six(args.mass, "mass"),
            _six(args.stiffness, "stiffness"),
            _six(args.damping, "damping"),
            args.rate,
            joint_damping_per_s=args.joint_damping,
            selected_axes=axes,
        )
    except ValueError as exc:
        raise CliError(EXIT_USAGE, str(exc)) from None
    _print_verdicts(result)
    try:
        written = admittance.plot_step_response(result, args.out, force=args.force, duration_s=args.duration)
    except ImportError as exc:
        raise matplotlib_missing(exc) from None
    except (ValueError, OSError) as exc:
        raise CliError(EXIT_USAGE, str(exc)) from None
    print(written)
    return EXIT_OK if result.accepted else EXIT_FAILED
