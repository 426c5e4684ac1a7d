"""The NIC lines: "NIC interrupts" (which CPUs the network card's interrupts go to, and irqbalance) and
"NIC coalescing" (how long the card holds a received packet back before it interrupts).

The interface is the one the route to the robot leaves by; without a robot address (or with one on
this machine) every physical interface (one with a device behind /sys/class/net/<if>/device).
Coalescing is read with the ETHTOOL_GCOALESCE ioctl, what ``ethtool -c`` asks, so ethtool need not be
installed; the other facts come from /proc and /sys.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import socket
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jtac_py.doctor.cpus import _cpu_list_text, parse_cpu_list
from jtac_py.doctor.report import Check
from jtac_py.doctor.sysfs import read_small_file

_SIOCETHTOOL = 0x8946
_ETHTOOL_GCOALESCE = 0x0E
#: struct ethtool_coalesce (linux/ethtool.h): cmd and 22 more u32 fields.
_COALESCE = struct.Struct("=23I")
_IFNAMSIZ = 16
_TRIGGERS = ("-edge", "-fasteoi", "-level", "-eoi")
VERIFIED_NIC = (
    "rules tested on fake /proc and /sys trees; the readers on a development VM's virtio NIC (the "
    "coalescing ioctl agrees with ethtool -c there); a physical NIC (igb, e1000e, ...) is unverified"
)


@dataclass(frozen=True)
class NicIrq:
    """One interrupt line of a network interface."""

    irq: int
    name: str  # the device column of /proc/interrupts, e.g. "enp3s0-TxRx-0"
    cpus: list[int]  # /proc/irq/<irq>/smp_affinity_list
    count: int  # interrupts so far, all CPUs together


@dataclass(frozen=True)
class Coalescing:
    """What ETHTOOL_GCOALESCE says about received packets."""

    rx_usecs: int
    rx_max_frames: int
    adaptive_rx: bool


def physical_interfaces(sys_root: Path = Path("/sys")) -> list[str]:
    """Interfaces backed by a device (not lo, bridges, tunnels, ifb)."""
    net = sys_root / "class" / "net"
    try:
        names = sorted(p.name for p in net.iterdir())
    except OSError:
        return []
    return [n for n in names if (net / n / "device").exists()]


def robot_interfaces(route_data: dict, sys_root: Path = Path("/sys")) -> tuple[list[str], str]:
    """The interfaces to check and why: the robot's route's, or every physical one."""
    interface = route_data.get("interface")
    if interface and not route_data.get("local"):
        return [interface], f"{interface} (the route to the robot)"
    why = "the robot's address is on this machine" if route_data.get("local") else "no robot address given"
    return physical_interfaces(sys_root), f"every physical interface ({why})"


def parse_interrupts(text: str) -> dict[int, tuple[str, int]]:
    """/proc/interrupts as {irq: (device names, total count)}; named rows (NMI, LOC) are left out."""
    lines = text.splitlines()
    if not lines:
        return {}
    ncpus = len(lines[0].split())
    rows: dict[int, tuple[str, int]] = {}
    for line in lines[1:]:
        label, _, rest = line.partition(":")
        if not label.strip().isdigit():
            continue
        fields = rest.split()
        counts = [int(f) for f in fields[:ncpus] if f.isdigit()]
        rows[int(label)] = (_device_names(fields[ncpus:]), sum(counts))
    return rows


def _device_names(columns: list[str]) -> str:
    """The device list of a /proc/interrupts row: what follows the trigger column ("0-edge",
    "16-fasteoi"), e.g. "i801_smbus, eth0" for a shared line; the last column if there is no trigger."""
    triggers = [k for k, c in enumerate(columns) if c.endswith(_TRIGGERS)]
    start = triggers[-1] + 1 if triggers else len(columns) - 1
    return " ".join(columns[max(0, start) :])


def names_interface(names: str, interface: str) -> bool:
    """True when a device list names the interface itself or one of its queues ("eth1-TxRx-0"), not
    another interface that merely starts alike ("eth10")."""
    devices = [d.strip() for d in names.split(",")]
    return any(d == interface or d.startswith((f"{interface}-", f"{interface}:")) for d in devices)


def _msi_irqs(sys_root: Path, interface: str) -> set[int]:
    """The MSI vectors of the interface's PCI device (the device itself, or its parent for virtio)."""
    device = sys_root / "class" / "net" / interface / "device"
    for candidate in (device / "msi_irqs", device / ".." / "msi_irqs"):
        try:
            return {int(p.name) for p in candidate.iterdir() if p.name.isdigit()}
        except OSError:
            continue
    return set()


def nic_irqs(interface: str, sys_root: Path = Path("/sys"), proc_root: Path = Path("/proc")) -> list[NicIrq]:
    """The interface's interrupts: rows of /proc/interrupts that name it, and its device's MSI vectors."""
    rows = parse_interrupts(read_small_file(proc_root / "interrupts") or "")
    wanted = _msi_irqs(sys_root, interface) | {
        irq for irq, (names, _) in rows.items() if names_interface(names, interface)
    }
    irqs = []
    for irq in sorted(wanted):
        name, count = rows.get(irq, ("", 0))
        cpus = parse_cpu_list(read_small_file(proc_root / "irq" / str(irq) / "smp_affinity_list"))
        irqs.append(NicIrq(irq, name, cpus, count))
    return irqs


def irqbalance_running(proc_root: Path = Path("/proc")) -> bool:
    """True when a process named irqbalance runs (it moves interrupts between CPUs every 10 s)."""
    try:
        entries = [p for p in proc_root.iterdir() if p.name.isdigit()]
    except OSError:
        return False
    return any(read_small_file(p / "comm") == "irqbalance" for p in entries)


def _irq_text(irq: NicIrq) -> str:
    names = irq.name.replace(", ", "+") or "?"  # a shared line's devices, kept apart from the list's commas
    return f"IRQ {irq.irq} {names} -> CPU {_cpu_list_text(irq.cpus) or '?'}"


def check_nic_interrupts(
    interfaces: Sequence[str],
    target_cpu: int,
    online_cpus: Sequence[int],
    which: str,
    sys_root: Path = Path("/sys"),
    proc_root: Path = Path("/proc"),
) -> Check:
    """ok when every interrupt of the interfaces is pinned to fewer than all CPUs and irqbalance is off.

    target_cpu: the CPU the fix pins them to (jtac's hardware thread's, so the state's interrupt and the
    thread waiting for it share a CPU and its cache)."""
    name = "NIC interrupts"
    balancing = irqbalance_running(proc_root)
    per_interface = {i: nic_irqs(i, sys_root, proc_root) for i in interfaces}
    irqs = [irq for found in per_interface.values() for irq in found]
    balance_text = "irqbalance running" if balancing else "irqbalance not running"
    data = {
        "interfaces": {i: [vars(q) for q in found] for i, found in per_interface.items()},
        "irqbalance": balancing,
        "verified": VERIFIED_NIC,
    }
    if not irqs:
        value = f"{which}: no interrupts found in /proc/interrupts; {balance_text}"
        return Check(name, value, "skip", "check by hand: grep <interface> /proc/interrupts", data)
    all_cpus = set(online_cpus)
    spread = [q for q in irqs if not q.cpus or set(q.cpus) >= all_cpus]
    parts = [f"{i}: " + ", ".join(_irq_text(q) for q in found) for i, found in per_interface.items() if found]
    value = f"{which}; " + "; ".join(parts) + f"; {balance_text}"
    if not spread and not balancing:
        return Check(name, value + ": pinned", "ok", "", data)
    fixes = []
    if spread:
        value += f"; {len(spread)} of {len(irqs)} on every CPU (not pinned)"
        numbers = " ".join(str(q.irq) for q in spread)
        fixes.append(
            f"for n in {numbers}; do echo {target_cpu} | sudo tee /proc/irq/$n/smp_affinity_list; done "
            f"(CPU {target_cpu}: jtac's hardware thread's)"
        )
    if balancing:
        value += " (it moves interrupts between CPUs)"
        fixes.append(
            "sudo systemctl disable --now irqbalance, or keep it off these IRQs: "
            'IRQBALANCE_ARGS="--banirq=N" per IRQ in /etc/default/irqbalance'
        )
    return Check(name, value, "warn", "; ".join(fixes), data)


def parse_coalescing(raw: bytes) -> Coalescing:
    """struct ethtool_coalesce as ETHTOOL_GCOALESCE filled it."""
    fields = _COALESCE.unpack(raw[: _COALESCE.size])
    return Coalescing(rx_usecs=fields[1], rx_max_frames=fields[2], adaptive_rx=bool(fields[10]))


def read_coalescing(interface: str) -> Coalescing:
    """ETHTOOL_GCOALESCE on the interface (OSError when the driver does not answer it)."""
    buffer = ctypes.create_string_buffer(_COALESCE.pack(_ETHTOOL_GCOALESCE, *([0] * 22)), _COALESCE.size)
    request = struct.pack(f"{_IFNAMSIZ}sP", interface.encode()[: _IFNAMSIZ - 1], ctypes.addressof(buffer))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock.fileno(), _SIOCETHTOOL, request)
    return parse_coalescing(buffer.raw)


def _coalescing_text(interface: str, c: Coalescing) -> str:
    adaptive = "on" if c.adaptive_rx else "off"
    return f"{interface}: rx-usecs {c.rx_usecs}, rx-frames {c.rx_max_frames}, adaptive-rx {adaptive}"


def check_nic_coalescing(
    interfaces: Sequence[str], which: str, reader: Callable[[str], Coalescing] = read_coalescing
) -> Check:
    """ok when no interface holds received packets back (rx-usecs 0, adaptive-rx off)."""
    name = "NIC coalescing"
    found: dict[str, Coalescing] = {}
    unknown: dict[str, str] = {}
    for interface in interfaces:
        try:
            found[interface] = reader(interface)
        except OSError as exc:
            unsupported = exc.errno in (errno.EOPNOTSUPP, errno.ENOTSUP)
            unknown[interface] = "the driver reports none" if unsupported else (exc.strerror or str(exc))
    data = {
        "interfaces": {i: vars(c) for i, c in found.items()},
        "unknown": unknown,
        "verified": VERIFIED_NIC,
    }
    parts = [_coalescing_text(i, c) for i, c in found.items()]
    parts += [f"{i}: not read (ETHTOOL_GCOALESCE: {why})" for i, why in unknown.items()]
    value = f"{which}; " + ("; ".join(parts) or "no interface")
    held = [i for i, c in found.items() if c.rx_usecs > 0 or c.adaptive_rx]
    if held:
        value += (
            f"; {', '.join(held)} holds a received state back up to rx-usecs before it interrupts "
            "(adaptive: as the driver sees fit)"
        )
        fix = "; ".join(f"sudo ethtool -C {i} adaptive-rx off rx-usecs 0" for i in held)
        return Check(name, value, "warn", fix, data)
    if not found:
        names = " ".join(interfaces) or "<interface>"
        return Check(name, value, "skip", f"check with ethtool -c {names} (apt install ethtool)", data)
    return Check(name, value + ": every packet interrupts at once", "ok", "", data)


def target_cpu(isolated: Sequence[int], online: Sequence[int]) -> int:
    """The CPU jtac's hardware thread would take: the first isolated one, else the last online one."""
    if isolated:
        return isolated[0]
    return online[-1] if online else max(0, (os.cpu_count() or 1) - 1)
