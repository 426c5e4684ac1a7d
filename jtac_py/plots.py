"""Plots of a controller recording: tracking, wrench, admittance deflection and loop timing.

A recording is a mapping of numpy arrays with one row per controller cycle (a ``dict``, the
``NpzFile`` that ``np.load`` returns for a saved one, or a ``jtac_py.controller.Recording``, read
through its ``data()``):

- ``time`` (n,) controller time [s]; ``tick`` (n,) device tick;
- ``q``, ``dq``, ``q_cmd``, ``dq_cmd``, ``q_ref``, ``error``, ``joint_offset`` (n, 7) [rad, rad/s];
- ``wrench_raw``, ``wrench_filtered`` (n, 6) [N, N·m], sensor frame, ``[Fx Fy Fz Tx Ty Tz]``; optional
  ``wrench_control`` (n, 6), payload-compensated in the control frame (the deflection plot prefers it);
- ``ee_deflection`` (n, 6), optional: displacement of the commanded end effector from the nominal
  reference, position [m] then rotation vector [rad];
- ``time_scale``, ``mode``, ``status`` (n,);
- ``cycle_duration_us`` (n,) state read to command submitted [µs]; ``interval_us`` (n,) read-to-read
  interval of the controller [µs] (0 on the first cycle, which has no previous read);
- ``dext_us``, optional, 1-D of any length: device read-to-write latencies [µs].

Each ``plot_*`` function reads only the keys it needs; a missing one raises ``KeyError`` and an array of
the wrong shape raises ``ValueError``, both naming the key. The figures are ``matplotlib.figure.Figure``
objects rendered by Agg through ``Figure.savefig``: no pyplot, so no global figure registry, no display
and no backend selection, and the functions can run in a worker thread or a headless test.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullLocator

__all__ = [
    "DPI",
    "FIGSIZE_IN",
    "RecordingLike",
    "format_stats",
    "plot_all",
    "plot_deflection",
    "plot_timing",
    "plot_tracking",
    "plot_wrench",
    "summary_stats",
]

# 10 x 8 in at 100 dpi = 1000 x 800 px: readable on a laptop screen and in a report, and small enough
# that the four figures of a 10 000-row recording render in about a second.
FIGSIZE_IN: tuple[float, float] = (10.0, 8.0)
DPI = 100


class _HasData(Protocol):
    """jtac_py.controller.Recording and the like: the arrays come from ``data()``."""

    def data(self) -> Mapping[str, Any]: ...


#: What the plots accept: a mapping of arrays (dict, NpzFile) or an object with ``data()``.
RecordingLike = Mapping[str, Any] | _HasData
_Arrays = Mapping[str, Any]  # after _materialize
PathLike = str | os.PathLike[str]

_PUSH_COLOR = "tab:red"
_PUSH_ALPHA = 0.12
_XYZ_COLORS = ("tab:red", "tab:green", "tab:blue")  # the usual x/y/z = r/g/b of frame axes
# The histograms never use more bins than this: enough to resolve a 1 µs jitter next to a long tail,
# few enough to draw (as one ``stairs`` patch) in milliseconds.
_MAX_BINS = 2000


# --- statistics -------------------------------------------------------------------------------------


def summary_stats(values: Any) -> dict[str, float]:
    """Median, 99th percentile and maximum of ``values`` (any shape, flattened).

    Non-finite entries (NaN, ±inf) are ignored, so a recorder that marks a missing sample with NaN
    does not poison the numbers. Percentiles use numpy's default linear interpolation.
    Raises ValueError when no finite value is left.
    """
    a = np.asarray(values, dtype=float).ravel()
    a = a[np.isfinite(a)]
    if a.size == 0:
        raise ValueError("summary_stats: no finite values")
    median, p99 = np.percentile(a, [50.0, 99.0])
    return {"median": float(median), "p99": float(p99), "max": float(a.max())}


def format_stats(stats: Mapping[str, float], unit: str = "µs", precision: int = 1) -> str:
    """One line for a title or a log: ``"median 1000.0 µs, p99 1012.3 µs, max 1104.0 µs"``."""
    return ", ".join(f"{k} {stats[k]:.{precision}f} {unit}" for k in ("median", "p99", "max"))


# --- recording access ---------------------------------------------------------------------------------


def _materialize(rec: RecordingLike) -> _Arrays:
    """The recording as a mapping that is cheap to index.

    An NpzFile is read into a dict once: indexing it re-reads (and re-inflates) the zip member on
    every access, and the plots read some keys twice. An object with a ``data()`` method (the
    ``jtac_py.controller.Recording`` of a live controller) gives its arrays through that.
    """
    files = getattr(rec, "files", None)
    if isinstance(files, list) and not isinstance(rec, dict):
        return {k: rec[k] for k in files}
    if not isinstance(rec, Mapping) and callable(getattr(rec, "data", None)):
        return rec.data()
    return rec


def _has(rec: _Arrays, key: str) -> bool:
    try:
        return key in rec
    except TypeError:
        return False


def _array(rec: _Arrays, key: str, rows: int | None = None, width: int | None = None) -> np.ndarray:
    """``rec[key]`` as a float array; (rows,) when width is None, else (rows, width)."""
    try:
        raw = rec[key]
    except KeyError:
        raise KeyError(f"recording has no {key!r} array (needed for this plot)") from None
    try:
        a = np.asarray(raw, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"recording[{key!r}] is not numeric: {exc}") from None
    if width is None:
        if a.ndim != 1:
            raise ValueError(f"recording[{key!r}] must be 1-D, got shape {a.shape}")
    elif a.ndim != 2 or a.shape[1] != width:
        raise ValueError(f"recording[{key!r}] must have shape (n, {width}), got {a.shape}")
    if rows is not None and a.shape[0] != rows:
        raise ValueError(f"recording[{key!r}] has {a.shape[0]} rows but 'time' has {rows}")
    return a


def _width(rec: _Arrays, key: str) -> int:
    """The column count of a 2-D array (validated by _array afterwards)."""
    try:
        shape = np.shape(rec[key])
    except KeyError:
        raise KeyError(f"recording has no {key!r} array (needed for this plot)") from None
    if len(shape) != 2:
        raise ValueError(f"recording[{key!r}] must be 2-D (n, joints), got shape {shape}")
    return int(shape[1])


def _time(rec: _Arrays) -> np.ndarray:
    t = _array(rec, "time")
    if t.size == 0:
        raise ValueError("recording is empty ('time' has no rows)")
    return t


def _check_window(push_window: Sequence[float] | None) -> tuple[float, float] | None:
    if push_window is None:
        return None
    try:
        t0, t1 = (float(v) for v in push_window)
    except (TypeError, ValueError):
        raise ValueError(f"push_window must be (t0, t1) in seconds, got {push_window!r}") from None
    if not (math.isfinite(t0) and math.isfinite(t1) and t0 < t1):
        raise ValueError(f"push_window must be finite with t0 < t1, got {push_window!r}")
    return t0, t1


def _check_period(period_us: Any) -> float:
    try:
        value = float(period_us)
    except (TypeError, ValueError):
        raise ValueError(f"period_us must be a positive number, got {period_us!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"period_us must be a positive number, got {period_us!r}")
    return value


# --- figure helpers -----------------------------------------------------------------------------------


def _figure() -> Figure:
    # Constrained layout keeps tick labels, axis labels and the outside legend from overlapping
    # without the trial-and-error of tight_layout, and (unlike bbox_inches="tight") keeps the saved
    # image at exactly FIGSIZE_IN x DPI pixels.
    return Figure(figsize=FIGSIZE_IN, dpi=DPI, layout="constrained")


def _save(fig: Figure, path: PathLike) -> Path:
    out = Path(path)
    fig.savefig(out)
    return out


def _shade(
    ax: Axes,
    t: np.ndarray,
    window: tuple[float, float] | None,
    mask: np.ndarray | None,
) -> None:
    """Shades the push: the explicit window if given, else the samples where ``mask`` holds."""
    if window is not None:
        ax.axvspan(window[0], window[1], color=_PUSH_COLOR, alpha=_PUSH_ALPHA, lw=0)
    elif mask is not None and mask.any():
        # One fill_between (a single PolyCollection) rather than one axvspan per span: a noisy force
        # around the threshold can make thousands of spans.
        ax.fill_between(
            t,
            0.0,
            1.0,
            where=mask,
            transform=ax.get_xaxis_transform(),
            color=_PUSH_COLOR,
            alpha=_PUSH_ALPHA,
            lw=0,
            step="mid",
        )


def _push_mask(rec: _Arrays, n: int, force_threshold_n: float | None) -> np.ndarray | None:
    if force_threshold_n is None or not _has(rec, "wrench_filtered"):
        return None
    force = _array(rec, "wrench_filtered", rows=n, width=6)[:, :3]
    return np.linalg.norm(force, axis=1) > float(force_threshold_n)


def _push_label(window: tuple[float, float] | None, force_threshold_n: float | None) -> str:
    if window is not None:
        return f"push {window[0]:g}-{window[1]:g} s"
    return f"|F| > {force_threshold_n:g} N"


# --- plots ----------------------------------------------------------------------------------------------


def plot_tracking(rec: RecordingLike, path: PathLike, joint_names: Sequence[str] | None = None) -> Path:
    """Per joint: reference ``q_ref``, commanded ``q_cmd`` and measured ``q`` [deg] over time [s].

    A 2-column grid (4 x 2 for 7 joints); the free cell shows ``q - q_ref`` [mrad] of every joint,
    because at joint scale the three curves usually overlap to within a line width.
    Needs ``time``, ``q``, ``q_cmd``, ``q_ref``. Returns ``Path(path)``.
    """
    rec = _materialize(rec)
    t = _time(rec)
    q = _array(rec, "q", rows=t.size, width=_width(rec, "q"))
    nj = q.shape[1]
    q_cmd = _array(rec, "q_cmd", rows=t.size, width=nj)
    q_ref = _array(rec, "q_ref", rows=t.size, width=nj)
    names = [f"joint {j + 1}" for j in range(nj)] if joint_names is None else [str(s) for s in joint_names]
    if len(names) != nj:
        raise ValueError(f"joint_names has {len(names)} names but 'q' has {nj} joints")

    fig = _figure()
    nrows = (nj + 2) // 2  # nj joint cells + the deviation cell
    axes = fig.subplots(nrows, 2, sharex=True, squeeze=False).ravel()
    for j in range(nj):
        _joint_cell(axes[j], t, q[:, j], q_cmd[:, j], q_ref[:, j], names[j])
    _deviation_cell(axes[nj], t, q - q_ref, names)
    for ax in axes[nj + 1 :]:
        ax.set_axis_off()
    _bottom_tick_labels(axes[: nj + 1])

    handles = [
        Line2D([], [], color="black", ls="--", label="reference q_ref"),
        Line2D([], [], color="tab:orange", label="commanded q_cmd"),
        Line2D([], [], color="tab:blue", lw=2.0, alpha=0.7, label="measured q"),
    ]
    # Below the axes: constrained layout puts an "outside upper" legend on top of the suptitle.
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
    fig.suptitle("Joint tracking")
    return _save(fig, path)


def _joint_cell(
    ax: Axes, t: np.ndarray, q: np.ndarray, q_cmd: np.ndarray, q_ref: np.ndarray, name: str
) -> None:
    """One joint's measured, commanded and reference position [deg] over time [s]."""
    # Measured wide underneath and commanded thin on top, so both stay visible where they agree.
    ax.plot(t, np.degrees(q), color="tab:blue", lw=2.0, alpha=0.7)
    ax.plot(t, np.degrees(q_cmd), color="tab:orange", lw=1.0)
    ax.plot(t, np.degrees(q_ref), color="black", ls="--", lw=1.0)
    ax.set_ylabel(f"{name} [deg]")
    ax.grid(True, alpha=0.3)


def _deviation_cell(ax: Axes, t: np.ndarray, deviation_rad: np.ndarray, names: Sequence[str]) -> None:
    """``q - q_ref`` [mrad] of every joint in one cell, with its legend above it."""
    for j, name in enumerate(names):
        ax.plot(t, 1e3 * deviation_rad[:, j], lw=0.9, label=name)
    ax.set_ylabel("q - q_ref [mrad]")
    ax.grid(True, alpha=0.3)
    # Above the panel (where the hidden tick labels of the cell above would be), not over the data.
    ax.legend(
        fontsize="x-small",
        ncol=4,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        frameon=False,
        handlelength=1.0,
        columnspacing=0.8,
    )


def _bottom_tick_labels(used: Sequence[Axes]) -> None:
    """Time labels on the last used cell of each of the two columns.

    sharex hides the tick labels of every cell but the bottom row; the last used cell of each column
    needs them back when the columns end on different rows.
    """
    for col in range(2):
        last = used[col::2][-1]
        last.xaxis.set_tick_params(labelbottom=True)
        last.set_xlabel("time [s]")


def plot_wrench(
    rec: RecordingLike,
    path: PathLike,
    *,
    push_window: Sequence[float] | None = None,
) -> Path:
    """Forces [N] (left column) and torques [N·m] (right column), raw vs filtered, sensor frame.

    Needs ``time``, ``wrench_raw``, ``wrench_filtered``; ``push_window=(t0, t1)`` [s] shades the push.
    Returns ``Path(path)``.
    """
    rec = _materialize(rec)
    t = _time(rec)
    raw = _array(rec, "wrench_raw", rows=t.size, width=6)
    filt = _array(rec, "wrench_filtered", rows=t.size, width=6)
    window = _check_window(push_window)

    fig = _figure()
    axes = fig.subplots(3, 2, sharex=True)
    labels = ("Fx [N]", "Fy [N]", "Fz [N]", "Tx [N·m]", "Ty [N·m]", "Tz [N·m]")
    for k in range(6):
        ax = axes[k % 3, k // 3]
        _shade(ax, t, window, None)
        # Raw thin and light underneath, so the filter's lag and smoothing read against it.
        ax.plot(t, raw[:, k], color="0.6", lw=0.7)
        ax.plot(t, filt[:, k], color=_XYZ_COLORS[k % 3], lw=1.4)
        ax.set_ylabel(labels[k])
        ax.grid(True, alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]")
    axes[0, 0].set_title("force")
    axes[0, 1].set_title("torque")

    handles: list[Any] = [
        Line2D([], [], color="0.6", lw=0.7, label="raw"),
        Line2D([], [], color="black", lw=1.4, label="filtered (color = axis)"),
    ]
    if window is not None:
        handles.append(Patch(color=_PUSH_COLOR, alpha=0.3, label=_push_label(window, None)))
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), frameon=False)
    fig.suptitle("Wrench (sensor frame)")
    return _save(fig, path)


def plot_deflection(
    rec: RecordingLike,
    path: PathLike,
    *,
    push_window: Sequence[float] | None = None,
    force_threshold_n: float | None = None,
) -> Path:
    """The admittance deflection over time [s].

    With ``ee_deflection`` (and not all NaN): translation [mm] and rotation [deg] of the commanded end
    effector from the nominal reference. Without it: the per-joint ``joint_offset`` [mrad].
    When ``wrench_filtered`` is present a last panel shows the filtered force magnitude [N], the
    cause next to the effect.

    Shading: ``push_window=(t0, t1)`` [s] shades that span; otherwise ``force_threshold_n`` (off by
    default: a biased or noisy sensor would shade everything) shades where ``|F_filtered| >`` it.
    Needs ``time`` and ``ee_deflection`` or ``joint_offset``. Returns ``Path(path)``.
    """
    rec = _materialize(rec)
    t = _time(rec)
    n = t.size
    window = _check_window(push_window)
    mask = None if window is not None else _push_mask(rec, n, force_threshold_n)

    ee = _array(rec, "ee_deflection", rows=n, width=6) if _has(rec, "ee_deflection") else None
    if ee is not None and not np.isfinite(ee).any():
        ee = None  # a recorder without Cartesian deflection may fill the column with NaN
    if ee is None:
        offset = _array(rec, "joint_offset", rows=n, width=_width(rec, "joint_offset"))
    # The admittance's input (payload-compensated) when recorded, else the filtered reading.
    force_key = "wrench_control" if _has(rec, "wrench_control") else "wrench_filtered"
    has_force = _has(rec, force_key)

    fig = _figure()
    npanels = (2 if ee is not None else 1) + (1 if has_force else 0)
    axes = fig.subplots(npanels, 1, sharex=True, squeeze=False)[:, 0]
    if ee is not None:
        title = _ee_deflection_panels(axes[0], axes[1], t, ee)
    else:
        title = _joint_offset_panel(axes[0], t, offset)
    if has_force:
        force = _array(rec, force_key, rows=n, width=6)[:, :3]
        axes[-1].plot(t, np.linalg.norm(force, axis=1), color="black", lw=1.0)
        axes[-1].set_ylabel("|F compensated| [N]" if force_key == "wrench_control" else "|F filtered| [N]")
    for ax in axes:
        _shade(ax, t, window, mask)
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time [s]")

    if window is not None or (mask is not None and mask.any()):
        patch = Patch(color=_PUSH_COLOR, alpha=0.3, label=_push_label(window, force_threshold_n))
        fig.legend(handles=[patch], loc="outside upper right", frameon=False)
    fig.suptitle(title)
    return _save(fig, path)


def _ee_deflection_panels(ax_mm: Axes, ax_deg: Axes, t: np.ndarray, ee: np.ndarray) -> str:
    """Translation [mm] and rotation [deg] of the end effector from the nominal reference; the title."""
    for k, axis in enumerate("xyz"):
        ax_mm.plot(t, 1e3 * ee[:, k], color=_XYZ_COLORS[k], lw=1.2, label=axis)
        ax_deg.plot(t, np.degrees(ee[:, 3 + k]), color=_XYZ_COLORS[k], lw=1.2, label=axis)
    ax_mm.set_ylabel("translation [mm]")
    ax_deg.set_ylabel("rotation [deg]")
    ax_mm.legend(loc="upper right", ncol=3, fontsize="small")
    return "End-effector deflection from the nominal reference"


def _joint_offset_panel(ax: Axes, t: np.ndarray, offset_rad: np.ndarray) -> str:
    """The admittance's per-joint offset [mrad]; the title."""
    for j in range(offset_rad.shape[1]):
        ax.plot(t, 1e3 * offset_rad[:, j], lw=1.0, label=f"joint {j + 1}")
    ax.set_ylabel("joint offset [mrad]")
    ax.legend(loc="upper right", ncol=4, fontsize="small")
    return "Admittance joint offset (added to the reference)"


def _histogram(ax: Axes, values: np.ndarray, color: str, extra: str | None = None) -> dict[str, float]:
    """A log-y histogram of the finite ``values`` [µs] with median and p99 marked; returns their stats.

    The x range is the bulk of the data (p1..p99 widened by four times its spread), not min..max:
    a single 3 ms stall would otherwise squeeze a 20 µs jitter peak into a few pixels. Samples beyond
    the range are counted in the legend, next to the max.
    """
    stats = summary_stats(values)
    v = values[np.isfinite(values)]
    lo, hi = float(v.min()), float(v.max())
    p1, p99 = (float(p) for p in np.percentile(v, [1.0, 99.0]))
    margin = max(4.0 * (p99 - p1), 0.05 * abs(p99), 1.0)
    x_lo, x_hi = max(lo, p1 - margin), min(hi, p99 + margin)
    integral = bool(np.all(v == np.round(v)))
    # Bins 1/100 of the p1..p99 spread wide keep the peak's shape; at most _MAX_BINS over the view.
    width = max((p99 - p1) / 100.0, (x_hi - x_lo) / _MAX_BINS, 1e-9 * max(1.0, abs(x_hi)))
    start = x_lo
    if integral:
        # Whole microseconds (a coarse clock): bins narrower than 1 µs would leave empty bins
        # between the values, a comb; whole-µs bins centred on the values avoid it.
        width = float(math.ceil(width))
        start -= 0.5
    nbins = max(1, math.ceil((x_hi - start) / width))
    if start + nbins * width <= x_hi:  # x_hi itself must fall inside the last (closed) bin
        nbins += 1
    counts, edges = np.histogram(v, bins=nbins, range=(start, start + nbins * width))
    outside = int(v.size - counts.sum())
    # The step outline as plain arrays rather than ax.stairs: autoscaling a StepPatch walks its path
    # vertex by vertex, which for 2000 bins costs more than the rest of the histogram. Empty bins sit
    # at 0.5, below the y limit, because a log axis has no 0.
    x = np.repeat(edges, 2)[1:-1]
    y = np.repeat(np.maximum(counts, 0.5), 2)
    ax.set_yscale("log")
    ax.fill_between(x, 0.5, y, color=color, alpha=0.6, lw=0)
    ax.plot(x, y, color=color, lw=0.8)
    ax.set_ylim(0.7, 2.0 * max(1, counts.max()))  # one sample still shows as a bar above the axis
    ax.set_xlim(edges[0], edges[-1])  # fixed, so marker lines added later cannot widen the view
    # Decades only: the log axis' minor ticks (8 a decade) made a third of the figure's render time.
    ax.yaxis.set_minor_locator(NullLocator())
    ax.axvline(stats["median"], color="black", ls="--", lw=1.0, label=f"median {stats['median']:.1f} µs")
    ax.axvline(stats["p99"], color="black", ls=":", lw=1.2, label=f"p99 {stats['p99']:.1f} µs")
    max_label = f"max {stats['max']:.1f} µs"
    if outside:
        max_label += f" ({outside} outside the x range)"
    ax.plot([], [], " ", label=max_label)
    if extra is not None:
        ax.plot([], [], " ", label=extra)
    ax.set_ylabel("cycles")
    ax.grid(True, alpha=0.3, which="major")
    return stats


def plot_timing(rec: RecordingLike, path: PathLike, period_us: float = 1000.0) -> Path:
    """Log-y histograms of the loop timing [µs]: read-to-read ``interval_us`` (with the nominal
    ``period_us`` marked), ``cycle_duration_us``, and ``dext_us`` when the recording has it.

    The legends give median, p99 and max (``summary_stats``), and for the interval the number of
    overruns (> 1.5 periods, the control loop's own overrun rule). ``interval_us == 0`` marks the
    first cycle (no previous read) and is left out. Needs ``interval_us`` and ``cycle_duration_us``.
    Returns ``Path(path)``.
    """
    rec = _materialize(rec)
    period_us = _check_period(period_us)
    interval = _array(rec, "interval_us")
    interval = interval[interval != 0.0]
    duration = _array(rec, "cycle_duration_us")
    panels: list[tuple[str, np.ndarray, str]] = [
        ("read-to-read interval [µs]", interval, "tab:blue"),
        ("cycle duration: read to command submitted [µs]", duration, "tab:orange"),
    ]
    if _has(rec, "dext_us"):
        panels.append(("device read-to-write latency dext [µs]", _array(rec, "dext_us"), "tab:green"))
    for label, values, _ in panels:
        if not np.isfinite(values).any():
            raise ValueError(f"no finite samples for {label!r}")

    fig = _figure()
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    overruns = int(np.count_nonzero(interval > 1.5 * period_us))
    for i, (ax, (label, values, color)) in enumerate(zip(axes, panels, strict=True)):
        extra = f"overruns (> {1.5 * period_us:g} µs): {overruns}" if i == 0 else None
        _histogram(ax, values, color, extra)
        ax.set_xlabel(label)
        ax.set_title(f"n = {np.isfinite(values).sum()}", fontsize="small", loc="right")
    lo, hi = axes[0].get_xlim()
    if lo <= period_us <= hi:
        axes[0].axvline(period_us, color="tab:red", lw=1.2, label=f"period {period_us:g} µs")
    else:  # a wrong period_us (or a loop at another rate) must not pass unnoticed
        axes[0].plot([], [], " ", label=f"period {period_us:g} µs (outside the x range)")
    for ax in axes:
        ax.legend(loc="upper right", fontsize="small")
    fig.suptitle("Control loop timing")
    return _save(fig, path)


def plot_all(rec: RecordingLike, out_dir: PathLike, prefix: str = "demo", **kw: Any) -> list[Path]:
    """Writes ``{prefix}_tracking.png``, ``_wrench.png``, ``_deflection.png`` and ``_timing.png``
    into ``out_dir`` (created if needed) and returns their paths in that order.

    Keyword arguments go to the plots that take them: ``joint_names`` (tracking), ``push_window``
    (wrench, deflection), ``force_threshold_n`` (deflection), ``period_us`` (timing); any other
    raises TypeError.
    """
    known = {"joint_names", "push_window", "force_threshold_n", "period_us"}
    unknown = sorted(set(kw) - known)
    if unknown:
        raise TypeError(f"plot_all got unexpected keyword arguments: {', '.join(unknown)}")
    # Argument errors before the first file is written, so a bad call leaves no partial set behind.
    _check_window(kw.get("push_window"))
    _check_period(kw.get("period_us", 1000.0))
    rec = _materialize(rec)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    def pick(*names: str) -> dict[str, Any]:
        return {k: kw[k] for k in names if k in kw}

    return [
        plot_tracking(rec, out / f"{prefix}_tracking.png", **pick("joint_names")),
        plot_wrench(rec, out / f"{prefix}_wrench.png", **pick("push_window")),
        plot_deflection(rec, out / f"{prefix}_deflection.png", **pick("push_window", "force_threshold_n")),
        plot_timing(rec, out / f"{prefix}_timing.png", **pick("period_us")),
    ]
