"""The "C-states" line: the CPU idle states a waiting real-time thread can be woken from, their exit
latency, and the PM QoS limit of /dev/cpu_dma_latency."""

from __future__ import annotations

import glob
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from jtac_py.doctor.report import Check
from jtac_py.doctor.sysfs import read_small_file

# A wake-up from a state with a longer exit latency eats this much of the 1 ms cycle: C1/C1E (1-10 µs)
# are harmless, C3/C6 and deeper (tens to hundreds of µs) are not.
EXIT_LATENCY_OK_US = 10
# /dev/cpu_dma_latency's value when nobody holds a limit (PM_QOS_DEFAULT_VALUE: 2000 s).
NO_LIMIT_US = 2_000_000_000
FIX_CSTATES = (
    f"keep the deep states off: sudo cpupower idle-set -D {EXIT_LATENCY_OK_US} (Debian: linux-cpupower; "
    "until reboot), or the boot parameters intel_idle.max_cstate=1 processor.max_cstate=1 "
    "(AMD: processor.max_cstate=1), or a process that holds /dev/cpu_dma_latency open with 0 written to it "
    "while the robot runs (the limit lasts as long as the file is open)"
)


@dataclass(frozen=True)
class IdleState:
    """One cpuidle state of one CPU."""

    cpu: int
    name: str
    exit_latency_us: int
    disabled: bool


def read_idle_states(sys_root: Path = Path("/sys")) -> list[IdleState]:
    """Every cpu*/cpuidle/state* (name, latency [µs], disable) under sys_root."""
    pattern = str(sys_root / "devices" / "system" / "cpu" / "cpu[0-9]*" / "cpuidle" / "state[0-9]*")
    states = []
    for path in sorted(glob.glob(pattern)):
        state_dir = Path(path)
        latency = read_small_file(state_dir / "latency")
        if latency is None or not latency.isdigit():
            continue
        states.append(
            IdleState(
                cpu=int(state_dir.parent.parent.name.removeprefix("cpu")),
                name=read_small_file(state_dir / "name") or state_dir.name,
                exit_latency_us=int(latency),
                disabled=read_small_file(state_dir / "disable") == "1",
            )
        )
    return states


def read_dma_latency_us(dev_root: Path = Path("/dev")) -> int | None:
    """The PM QoS CPU latency limit [µs] from /dev/cpu_dma_latency (None: unreadable, e.g. not root)."""
    try:
        fd = os.open(dev_root / "cpu_dma_latency", os.O_RDONLY)
    except OSError:
        return None
    try:
        raw = os.read(fd, 4)
    finally:
        os.close(fd)
    return struct.unpack("<i", raw)[0] if len(raw) == 4 else None


def _limit_text(dma_latency_us: int | None) -> str:
    if dma_latency_us is None:
        return "cpu_dma_latency unreadable"
    if dma_latency_us >= NO_LIMIT_US:
        return "cpu_dma_latency: no limit held"
    return f"cpu_dma_latency limit {dma_latency_us} µs"


def check_cstates(sys_root: Path = Path("/sys"), dev_root: Path = Path("/dev")) -> Check:
    """ok when no enabled idle state takes longer than EXIT_LATENCY_OK_US to leave (or a PM QoS limit
    keeps the CPUs out of them); warn otherwise; skip without cpuidle."""
    name = "C-states"
    driver = read_small_file(sys_root / "devices" / "system" / "cpu" / "cpuidle" / "current_driver")
    states = read_idle_states(sys_root)
    dma_latency_us = read_dma_latency_us(dev_root)
    limit = _limit_text(dma_latency_us)
    if not states:
        return Check(
            name,
            f"no cpuidle states (driver {driver or 'none'}); {limit}",
            "skip",
            "nothing to set here; on bare metal, limit C-states in the BIOS/UEFI (C1 at most)",
            {"driver": driver, "cpu_dma_latency_us": dma_latency_us},
        )
    enabled = [s for s in states if not s.disabled]
    deepest = max(enabled, key=lambda s: s.exit_latency_us, default=None)
    deepest_us = deepest.exit_latency_us if deepest else 0
    effective_us = min(deepest_us, dma_latency_us) if dma_latency_us is not None else deepest_us
    names = sorted({f"{s.name} {s.exit_latency_us} µs" for s in enabled}, key=lambda t: int(t.split()[-2]))
    cpus = len({s.cpu for s in states})
    value = (
        f"{cpus} CPUs, driver {driver or 'unknown'}; enabled idle states (exit latency): "
        f"{', '.join(names) or 'none'}; {limit}"
    )
    data = {
        "driver": driver,
        "deepest_enabled_exit_latency_us": deepest_us,
        "cpu_dma_latency_us": dma_latency_us,
        "enabled_states": names,
    }
    if effective_us <= EXIT_LATENCY_OK_US:
        return Check(name, value + f": a wake-up costs {effective_us} µs at most", "ok", "", data)
    value += f"; a CPU in {deepest.name} takes {deepest_us} µs to wake the real-time thread"
    return Check(name, value, "warn", FIX_CSTATES, data)
