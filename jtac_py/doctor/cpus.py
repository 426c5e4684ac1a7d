"""The "CPU governor" and "isolated CPUs" lines, and kernel CPU lists ("0-3,5")."""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from pathlib import Path

from jtac_py.doctor.report import Check
from jtac_py.doctor.sysfs import read_small_file

FIX_GOVERNOR = (
    "sudo cpupower frequency-set -g performance (Debian: apt install linux-cpupower), or "
    "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; "
    "to keep it: GOVERNOR=performance in /etc/default/cpufrequtils"
)
FIX_NO_CPUFREQ = (
    "nothing to set here; on bare metal, choose the BIOS/UEFI power profile for maximum performance "
    "(no C-states deeper than C1)"
)


def parse_cpu_list(text: str | None) -> list[int]:
    """A kernel CPU list ("0-3,5", "", "(null)") as CPU numbers."""
    cpus: list[int] = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part or not part[0].isdigit():
            continue
        first, _, last = part.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def _cpu_list_text(cpus: Sequence[int]) -> str:
    """CPU numbers as a kernel CPU list (ranges collapsed)."""
    ranges: list[str] = []
    start = prev = None
    for cpu in sorted(cpus):
        if prev is not None and cpu == prev + 1:
            prev = cpu
            continue
        if start is not None:
            ranges.append(f"{start}-{prev}" if prev != start else f"{start}")
        start = prev = cpu
    if start is not None:
        ranges.append(f"{start}-{prev}" if prev != start else f"{start}")
    return ",".join(ranges)


def _cpu_number(path: str) -> int:
    match = re.search(r"/cpu(\d+)/", path)
    return int(match.group(1)) if match else -1


def check_governor(sys_root: Path = Path("/sys")) -> Check:
    pattern = str(sys_root / "devices" / "system" / "cpu" / "cpu[0-9]*" / "cpufreq" / "scaling_governor")
    governors: dict[int, str] = {}
    for path in glob.glob(pattern):
        governor = read_small_file(path)
        if governor is not None:
            governors[_cpu_number(path)] = governor
    if not governors:
        return Check("CPU governor", "no cpufreq: a VM or fixed clock", "skip", FIX_NO_CPUFREQ)
    by_governor: dict[str, list[int]] = {}
    for cpu, governor in sorted(governors.items()):
        by_governor.setdefault(governor, []).append(cpu)
    value = "; ".join(f"{g} on CPU {_cpu_list_text(cpus)}" for g, cpus in sorted(by_governor.items()))
    data = {"governors": {str(cpu): g for cpu, g in sorted(governors.items())}}
    if set(by_governor) == {"performance"}:
        return Check("CPU governor", value, "ok", "", data)
    value += " (a slow clock or a frequency change stretches a cycle)"
    return Check("CPU governor", value, "warn", FIX_GOVERNOR, data)


def check_isolated_cpus(sys_root: Path = Path("/sys")) -> Check:
    cpu_dir = sys_root / "devices" / "system" / "cpu"
    online = parse_cpu_list(read_small_file(cpu_dir / "online")) or list(range(os.cpu_count() or 1))
    isolated = parse_cpu_list(read_small_file(cpu_dir / "isolated"))
    nohz_full = parse_cpu_list(read_small_file(cpu_dir / "nohz_full"))
    value = (
        f"{len(online)} CPUs online ({_cpu_list_text(online)}); isolated: "
        f"{_cpu_list_text(isolated) or 'none'}; nohz_full: {_cpu_list_text(nohz_full) or 'none'}"
    )
    data = {"online": online, "isolated": isolated, "nohz_full": nohz_full}
    if isolated:
        return Check("isolated CPUs", value + f" (set cpu_affinity: {isolated[:2]})", "ok", "", data)
    if len(online) < 2:
        return Check(
            "isolated CPUs", value, "warn", "one CPU cannot be shared out: use a machine with 2 or more", data
        )
    # jtac has two real-time threads (hardware, controller); give them the last CPUs, away from CPU 0,
    # which usually takes most interrupts.
    chosen = online[-2:] if len(online) >= 4 else online[-1:]
    cpus = _cpu_list_text(chosen)
    fix = (
        f"kernel boot parameters isolcpus={cpus} nohz_full={cpus} rcu_nocbs={cpus} (add to "
        "GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, sudo update-grub, reboot), then jtac's "
        f"parameter cpu_affinity: {chosen}"
    )
    return Check("isolated CPUs", value, "warn", fix, data)
