"""The "kernel" line: PREEMPT_RT, full preemption ("lowlatency") or generic, and how it was told."""

from __future__ import annotations

import os
import re
from pathlib import Path

from jtac_py.doctor.report import Check
from jtac_py.doctor.sysfs import read_small_file

FIX_RT_KERNEL = (
    "install a PREEMPT_RT kernel: Franka's FCI documentation, 'Setting up the real-time kernel' "
    "(Debian 12: sudo apt install linux-image-rt-amd64; Ubuntu: sudo pro enable realtime-kernel), reboot"
)


def classify_kernel(
    version: str, realtime_flag: str | None, preempt_mode: str | None, cmdline: str
) -> tuple[str, str]:
    """(kind, how it was told): kind is "PREEMPT_RT", "lowlatency" (full preemption) or "generic".

    version: ``uname -v``; realtime_flag: /sys/kernel/realtime; preempt_mode: the active mode of
    /sys/kernel/debug/sched/preempt (e.g. "full"); cmdline: /proc/cmdline.
    """
    if realtime_flag == "1":
        return "PREEMPT_RT", "/sys/kernel/realtime = 1"
    if re.search(r"PREEMPT[_ ]RT", version):  # older RT patches wrote "PREEMPT RT"
        return "PREEMPT_RT", "uname -v says PREEMPT_RT"
    if "PREEMPT_DYNAMIC" in version:
        boot = re.search(r"(?:^|\s)preempt=(\S+)", cmdline)
        if preempt_mode is not None:
            mode, source = preempt_mode, "/sys/kernel/debug/sched/preempt"
        elif boot is not None:
            mode, source = boot.group(1), "boot parameter preempt="
        else:
            return "generic", (
                "PREEMPT_DYNAMIC, preemption mode unknown (/sys/kernel/debug/sched/preempt unreadable, "
                "no preempt= boot parameter)"
            )
        kind = "lowlatency" if mode == "full" else "generic"
        return kind, f"PREEMPT_DYNAMIC, mode {mode} ({source})"
    if re.search(r"\bPREEMPT\b", version):
        return "lowlatency", "uname -v says PREEMPT (full preemption)"
    return "generic", "no PREEMPT in uname -v (voluntary preemption at most)"


def _active_preempt_mode(text: str | None) -> str | None:
    """The parenthesised entry of /sys/kernel/debug/sched/preempt ("none voluntary (full)" -> "full")."""
    match = re.search(r"\((\w+)\)", text or "")
    return match.group(1) if match else None


def check_kernel(sys_root: Path = Path("/sys"), proc_root: Path = Path("/proc")) -> Check:
    uname = os.uname()
    kind, how = classify_kernel(
        uname.version,
        read_small_file(sys_root / "kernel" / "realtime"),
        _active_preempt_mode(read_small_file(sys_root / "kernel" / "debug" / "sched" / "preempt")),
        read_small_file(proc_root / "cmdline") or "",
    )
    value = f"{kind}: {uname.release}, {how}"
    data = {"kind": kind, "release": uname.release, "version": uname.version}
    if kind == "PREEMPT_RT":
        return Check("kernel", value, "ok", "", data)
    value += "; libfranka's RealtimeConfig.kEnforce refuses it (jtac runs with kIgnore)"
    return Check("kernel", value, "warn", FIX_RT_KERNEL, data)
