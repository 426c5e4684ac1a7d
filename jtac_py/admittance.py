"""Is an admittance set stable as jtac integrates it? The goal-intake check, before a goal carries it.

jtac integrates each compliant axis, M·ë + D·ė + K·e = F, with semi-implicit Euler at the controller's
``update_rate``; whether that discrete system is stable follows from M, K, D and the rate alone. The
check is the core's own (``jtac_core/admittance_stability.hpp``, bound as
``_native.check_axis_stability``): goal intake rejects with INVALID_GOAL what ``check()`` calls not
``accepted``, and accepts a lightly damped set with a warning. The bound and its derivation:
docs/admittance.md. ::

    from jtac_py import admittance
    result = admittance.check(mass=[4, 4, 4, 1, 1, 1], stiffness=400, damping=None, rate_hz=125)
    result.accepted                  # every selected axis would pass goal intake
    for axis in result.axes:         # natural frequency, damping ratio, settling time per axis
        print(axis.name, axis.verdict, axis.max_stiffness, axis.settling_time_s)
    admittance.plot_step_response(result, "step.png")   # continuous vs discrete step response

Units: mass [kg] on x y z and [kg·m²] on rx ry rz, stiffness [N/m] / [N·m/rad], damping [N·s/m] /
[N·m·s/rad], joint damping [1/s], rates [Hz], times [s].
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jtac_py import _native
from jtac_py.goals import DEFAULT_JOINT_DAMPING_PER_S

__all__ = [
    "AXIS_NAMES",
    "LOW_DAMPING_RATIO",
    "STABILITY_MARGIN",
    "AdmittanceCheck",
    "AxisCheck",
    "check",
    "plot_step_response",
    "step_response",
]

AXIS_NAMES = ("x", "y", "z", "rx", "ry", "rz")
#: Fraction of the stable stiffness and damping range goal intake keeps free [-].
STABILITY_MARGIN: float = _native.ADMITTANCE_STABILITY_MARGIN
#: Damping ratio below which a set is accepted with a warning [-].
LOW_DAMPING_RATIO: float = _native.ADMITTANCE_LOW_DAMPING_RATIO

# Worst first: the verdict of a whole set is the worst of its axes'.
_SEVERITY = ("invalid_input", "unstable", "near_bound", "lightly_damped", "stable")


@dataclass(frozen=True)
class AxisCheck:
    """One axis: the core's verdict and figures (the native ``AxisStability``), with its name."""

    axis: int  # 0..5 = x y z rx ry rz
    name: str
    verdict: str  # stable, lightly_damped (accepted with a warning), near_bound, unstable, invalid_input
    accepted: bool  # goal intake would accept it
    mass: float
    stiffness: float
    damping: float
    spectral_radius: float  # of the per-axis transition matrix [-]
    max_stiffness: float  # the largest stable stiffness for this mass, damping and rate
    max_damping: float  # the largest stable damping for this mass and rate
    natural_frequency_rad_s: float
    damping_ratio: float
    settling_time_s: float  # continuous, 2 % envelope (inf: does not return)
    discrete_settling_time_s: float  # the same for the discrete system
    free_axis: bool  # K = 0: the axis stays where it is pushed
    message: str  # why it is rejected or warned about; "" when stable


@dataclass(frozen=True)
class AdmittanceCheck:
    """The verdict over the selected axes of one tip at one rate."""

    rate_hz: float
    joint_damping_per_s: float
    axes: tuple[AxisCheck, ...]

    @property
    def accepted(self) -> bool:
        """Goal intake would accept the set (possibly with a warning)."""
        return all(a.accepted for a in self.axes)

    @property
    def verdict(self) -> str:
        """The worst verdict of the axes."""
        return min((a.verdict for a in self.axes), key=_SEVERITY.index, default="stable")

    @property
    def message(self) -> str:
        """Each axis's rejection or warning, 'axis z: ...', joined by '; ' ('' when all are stable)."""
        return "; ".join(f"axis {a.name}: {a.message}" for a in self.axes if a.message)


def _six(value: Any, name: str) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        return np.full(6, float(a))
    if a.shape != (6,):
        raise ValueError(f"{name} must be a number or 6 values [x y z rx ry rz], got shape {a.shape}")
    return a


#: The core's default rate (C++ ``JtacConfig::update_rate_hz``), read from the bound struct.
_DEFAULT_RATE_HZ = _native.JtacConfig([]).update_rate_hz


def check(
    mass: Any,
    stiffness: Any,
    damping: Any = None,
    rate_hz: float = _DEFAULT_RATE_HZ,
    *,
    joint_damping_per_s: float = DEFAULT_JOINT_DAMPING_PER_S,
    selected_axes: Sequence[bool] | None = None,
) -> AdmittanceCheck:
    """The goal-intake stability check of one tip's admittance at ``rate_hz`` (the controller's update_rate).

    mass, stiffness, damping: a number (every axis) or 6 values [x y z rx ry rz]; damping None is the
    critical damping 2·√(M·K), as ``Controller.follow`` fills it. selected_axes: the compliant axes
    (default: all six); only those are checked, as at goal intake. joint_damping_per_s: the goal's joint
    damping, which adds joint_damping·M to each axis's damping.
    """
    if not (math.isfinite(rate_hz) and rate_hz > 0.0):
        raise ValueError(f"rate_hz = {rate_hz}: must be finite and > 0")
    m = _six(mass, "mass")
    k = _six(stiffness, "stiffness")
    if damping is None:
        with np.errstate(invalid="ignore"):
            d = 2.0 * np.sqrt(np.clip(m * k, 0.0, None))
    else:
        d = _six(damping, "damping")
    selected = [True] * 6 if selected_axes is None else [bool(s) for s in selected_axes]
    if len(selected) != 6:
        raise ValueError(f"selected_axes must have 6 values [x y z rx ry rz], got {len(selected)}")
    period_s = 1.0 / float(rate_hz)
    axes = []
    for i in range(6):
        if not selected[i]:
            continue
        s = _native.check_axis_stability(
            float(m[i]), float(k[i]), float(d[i]), period_s, float(joint_damping_per_s)
        )
        verdict = s.verdict.name.lower()
        axes.append(
            AxisCheck(
                axis=i,
                name=AXIS_NAMES[i],
                verdict=verdict,
                accepted=s.accepted,
                mass=s.mass,
                stiffness=s.stiffness,
                damping=s.damping,
                spectral_radius=s.spectral_radius,
                max_stiffness=s.max_stiffness,
                max_damping=s.max_damping,
                natural_frequency_rad_s=s.natural_frequency_rad_s,
                damping_ratio=s.damping_ratio,
                settling_time_s=s.settling_time_s,
                discrete_settling_time_s=s.discrete_settling_time_s,
                free_axis=s.free_axis,
                message=_native.admittance_stability_message(s, i),
            )
        )
    return AdmittanceCheck(float(rate_hz), float(joint_damping_per_s), tuple(axes))


# ------------------------------------------------------------------------------------ step responses
def _continuous(axis: AxisCheck, d_per_s: float, t_s: np.ndarray, force: float) -> np.ndarray:
    """Displacement of M·ë + D_eff·ė + K·e = F from rest under a step F at t = 0 (closed form)."""
    f = force / axis.mass  # [m/s²] or [rad/s²]
    k = axis.stiffness / axis.mass  # [1/s²]
    if k == 0.0:
        if d_per_s == 0.0:
            return 0.5 * f * t_s**2
        return f / d_per_s * (t_s - (-np.expm1(-d_per_s * t_s)) / d_per_s)
    # Poles −d/2 ± μ: x = (f/k)·[1 − e^(−dt/2)·(cosh μt + (d/2)·sinh(μt)/μ)], any damping ratio.
    mu = cmath.sqrt(0.25 * d_per_s * d_per_s - k)
    t = t_s.astype(complex)
    grow, decay = np.exp((mu - 0.5 * d_per_s) * t), np.exp((-mu - 0.5 * d_per_s) * t)
    cosh_part = 0.5 * (grow + decay)
    if abs(mu) * float(t_s[-1]) < 1e-6:  # μ → 0 (critical damping): sinh(μt)/μ → t
        sinh_over_mu = t * np.exp(-0.5 * d_per_s * t)
    else:
        sinh_over_mu = (grow - decay) / (2.0 * mu)
    return (f / k * (1.0 - cosh_part - 0.5 * d_per_s * sinh_over_mu)).real


def _discrete(axis: AxisCheck, d_per_s: float, period_s: float, n: int, force: float) -> np.ndarray:
    """The same step through jtac's integrator (semi-implicit Euler, as Admittance::step): e[0..n].

    Ends in NaN once |e| exceeds 1e6 times the continuous scale (a diverging set)."""
    f, k = force / axis.mass, axis.stiffness / axis.mass
    scale = 1e6 * max(abs(f / k) if k > 0.0 else abs(f) * (n * period_s) ** 2, 1e-300)
    e = np.full(n + 1, np.nan)
    x = v = 0.0
    e[0] = 0.0
    for i in range(1, n + 1):
        v += period_s * (f - d_per_s * v - k * x)
        x += period_s * v
        if not abs(x) < scale:
            break
        e[i] = x
    return e


def step_response(
    result: AdmittanceCheck, axis: int | str, *, force: float = 1.0, duration_s: float | None = None
) -> dict[str, np.ndarray]:
    """The predicted step response of one checked axis: ``t`` [s] and ``continuous`` (the ODE), and
    ``t_discrete`` and ``discrete`` (jtac's integrator at the checked rate, one sample per cycle) [m or
    rad] for a step of ``force`` [N or N·m]. duration_s defaults to 2 settling times (2 s when the axis
    does not settle), at least 20 cycles."""
    a = _axis(result, axis)
    period_s = 1.0 / result.rate_hz
    d_per_s = a.damping / a.mass + result.joint_damping_per_s
    if duration_s is None:
        finite = [s for s in (a.settling_time_s, a.discrete_settling_time_s) if math.isfinite(s)]
        duration_s = min(2.0 * max(finite), 60.0) if finite else 2.0
    n = max(math.ceil(duration_s / period_s), 20)
    t = np.linspace(0.0, n * period_s, min(20 * n, 20000) + 1)  # the ODE finer than the cycles
    return {
        "t": t,
        "continuous": _continuous(a, d_per_s, t, force),
        "t_discrete": np.arange(n + 1) * period_s,
        "discrete": _discrete(a, d_per_s, period_s, n, force),
    }


def _axis(result: AdmittanceCheck, axis: int | str) -> AxisCheck:
    for a in result.axes:
        if axis in (a.axis, a.name):
            return a
    raise ValueError(f"axis {axis!r} was not checked (checked: {[a.name for a in result.axes]})")


def plot_step_response(
    result: AdmittanceCheck, path: str | Path, *, force: float = 1.0, duration_s: float | None = None
) -> Path:
    """Writes one panel per distinct checked axis: the continuous step response beside the discrete one,
    with the verdict, spectral radius and largest stable stiffness in the title. Returns the path."""
    from matplotlib.figure import Figure  # optional dependency (jtac-py[plot])

    distinct: dict[tuple[float, float, float], list[AxisCheck]] = {}
    for a in result.axes:
        distinct.setdefault((a.mass, a.stiffness, a.damping), []).append(a)
    groups = list(distinct.values())
    if not groups:
        raise ValueError("no axis was checked: nothing to plot")
    fig = Figure(figsize=(10.0, 3.2 * len(groups) + 0.8), dpi=100, layout="constrained")
    axes = fig.subplots(len(groups), 1, squeeze=False)[:, 0]
    for ax, group in zip(axes, groups, strict=True):
        a = group[0]
        linear = a.axis < 3
        r = step_response(result, a.axis, force=force, duration_s=duration_s)
        ax.plot(r["t"], r["continuous"], color="tab:blue", lw=1.5, label="continuous M·ë + D·ė + K·e = F")
        ax.step(
            r["t_discrete"],
            r["discrete"],
            where="post",
            color="tab:red",
            lw=1.0,
            label=f"jtac's integrator at {result.rate_hz:g} Hz",
        )
        finite = r["continuous"][np.isfinite(r["continuous"])]
        span = max(float(np.abs(finite).max()) if finite.size else 1.0, 1e-12)
        ax.set_ylim(-1.5 * span, 2.5 * span)  # a diverging discrete response leaves the frame
        if a.verdict == "unstable" or np.isnan(r["discrete"]).any():
            ax.text(
                0.5, 0.92, "discrete response diverges", transform=ax.transAxes, ha="center", color="tab:red"
            )
        names = " ".join(g.name for g in group)
        k_unit, unit = ("N/m", "m") if linear else ("N·m/rad", "rad")
        ax.set_title(
            f"axes {names}: M={a.mass:g}, K={a.stiffness:g}, D={a.damping:g} — {a.verdict}, "
            f"ρ={a.spectral_radius:.6f}, K_max={a.max_stiffness:.4g} {k_unit}, ζ={a.damping_ratio:.3g}",
            fontsize=9,
        )
        ax.set_xlabel("time [s]")
        ax.set_ylabel(f"displacement per {force:g} {'N' if linear else 'N·m'} [{unit}]")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    out = Path(path)
    fig.savefig(out)
    return out
