"""The kernel settings the published real-time tuning lists check, one line each: "RT throttling"
(sched_rt_runtime_us), "NMI watchdog", "transparent huge pages" and "PCIe ASPM"."""

from __future__ import annotations

import re
from pathlib import Path

from jtac_py.doctor.report import Check
from jtac_py.doctor.sysfs import read_small_file

FIX_RT_THROTTLING = (
    "echo -1 | sudo tee /proc/sys/kernel/sched_rt_runtime_us; to keep it: kernel.sched_rt_runtime_us = -1 "
    "in /etc/sysctl.d/60-jtac.conf (the safety net goes: a SCHED_FIFO thread that spins can then hang its "
    "CPU)"
)
FIX_NMI_WATCHDOG = (
    "sudo sysctl kernel.nmi_watchdog=0; to keep it: kernel.nmi_watchdog = 0 in /etc/sysctl.d/60-jtac.conf "
    "(or the boot parameter nmi_watchdog=0)"
)
FIX_THP = (
    "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled; to keep it: the boot parameter "
    "transparent_hugepage=madvise (or never)"
)
FIX_ASPM = (
    "echo performance | sudo tee /sys/module/pcie_aspm/parameters/policy; to keep it: the boot parameter "
    "pcie_aspm.policy=performance (or pcie_aspm=off), or switch ASPM off in the BIOS/UEFI"
)


def bracketed_choice(text: str | None) -> str | None:
    """The active entry of a sysfs choice list ("always [madvise] never" -> "madvise")."""
    match = re.search(r"\[([^\]]+)\]", text or "")
    return match.group(1) if match else None


def check_rt_throttling(proc_root: Path = Path("/proc")) -> Check:
    """sched_rt_runtime_us of sched_rt_period_us: -1 (no throttling) ok; a budget below the period warn."""
    name = "RT throttling"
    runtime_text = read_small_file(proc_root / "sys" / "kernel" / "sched_rt_runtime_us")
    period_text = read_small_file(proc_root / "sys" / "kernel" / "sched_rt_period_us")
    if runtime_text is None or not runtime_text.lstrip("-").isdigit():
        return Check(
            name, "sched_rt_runtime_us unreadable", "skip", "cat /proc/sys/kernel/sched_rt_runtime_us"
        )
    runtime_us = int(runtime_text)
    period_us = int(period_text) if period_text and period_text.isdigit() else None
    data = {"sched_rt_runtime_us": runtime_us, "sched_rt_period_us": period_us}
    if runtime_us < 0:
        return Check(name, "sched_rt_runtime_us = -1: real-time threads are never throttled", "ok", "", data)
    period_text = f"{period_us} µs" if period_us is not None else "its period"
    value = f"sched_rt_runtime_us = {runtime_us} of sched_rt_period_us = {period_text}: SCHED_FIFO threads "
    if runtime_us == 0:
        value += "may not run at all"
        return Check(name, value, "fail", FIX_RT_THROTTLING, data)
    throttled_us = (period_us - runtime_us) if period_us is not None else None
    held = f"{throttled_us} µs" if throttled_us is not None else "the rest"
    value += (
        f"are held off for {held} of each period once they used up their budget (a CPU busy with "
        "real-time work, e.g. a spinning thread, stalls jtac's 1 kHz thread with it)"
    )
    return Check(name, value, "warn", FIX_RT_THROTTLING, data)


def check_nmi_watchdog(proc_root: Path = Path("/proc")) -> Check:
    """kernel.nmi_watchdog: 0 ok; 1 warn (a non-maskable interrupt on every CPU, periodically)."""
    name = "NMI watchdog"
    text = read_small_file(proc_root / "sys" / "kernel" / "nmi_watchdog")
    if text is None:
        return Check(
            name, "/proc/sys/kernel/nmi_watchdog absent: no hard-lockup detector", "skip", "nothing to set"
        )
    data = {"nmi_watchdog": text}
    if text == "0":
        return Check(name, "kernel.nmi_watchdog = 0: no periodic NMI", "ok", "", data)
    value = (
        f"kernel.nmi_watchdog = {text}: a periodic non-maskable interrupt on every CPU (the hard-lockup "
        "detector) interrupts the real-time threads too"
    )
    return Check(name, value, "warn", FIX_NMI_WATCHDOG, data)


def check_transparent_hugepages(sys_root: Path = Path("/sys")) -> Check:
    """transparent_hugepage/enabled: never or madvise ok; always warn (compaction and huge-page faults)."""
    name = "transparent huge pages"
    text = read_small_file(sys_root / "kernel" / "mm" / "transparent_hugepage" / "enabled")
    mode = bracketed_choice(text)
    if mode is None:
        return Check(name, "transparent_hugepage/enabled absent: a kernel without THP", "ok", "", {})
    defrag = bracketed_choice(read_small_file(sys_root / "kernel" / "mm" / "transparent_hugepage" / "defrag"))
    data = {"enabled": mode, "defrag": defrag}
    value = f"transparent_hugepage enabled = {mode}" + (f", defrag = {defrag}" if defrag else "")
    if mode in ("never", "madvise"):
        return Check(name, value + ": only memory that asks for huge pages gets them", "ok", "", data)
    value += (
        ": every process's memory may be collapsed into huge pages (a page fault that zeroes 2 MiB, "
        "compaction and khugepaged stall the thread that touches it)"
    )
    return Check(name, value, "warn", FIX_THP, data)


def check_pcie_aspm(sys_root: Path = Path("/sys")) -> Check:
    """The pcie_aspm policy: performance ok; default, powersave, powersupersave warn."""
    name = "PCIe ASPM"
    policy = bracketed_choice(read_small_file(sys_root / "module" / "pcie_aspm" / "parameters" / "policy"))
    if policy is None:
        return Check(
            name,
            "/sys/module/pcie_aspm/parameters/policy absent: a kernel without ASPM support (or a VM)",
            "skip",
            "on bare metal: switch PCIe ASPM off in the BIOS/UEFI, or boot with pcie_aspm=off",
        )
    data = {"policy": policy}
    if policy == "performance":
        return Check(name, "pcie_aspm policy = performance: PCIe links never sleep", "ok", "", data)
    what = "the firmware's setting (often L0s/L1 on)" if policy == "default" else "power saving"
    value = (
        f"pcie_aspm policy = {policy}, {what}: a PCIe link (the NIC's) may sleep between packets, and "
        "waking it delays each received state by microseconds"
    )
    return Check(name, value, "warn", FIX_ASPM, data)
