"""``jtac doctor``: can this machine hold jtac's 1 kHz loop to a Franka robot, and how to fix what cannot.

``run(robot_ip, seconds)`` checks the machine and returns a ``Report``: one ``Check`` per line with what
was found (``value``, with units), a verdict (``ok`` / ``warn`` / ``fail`` / ``skip``) and, on every
line that is not ``ok``, the command or setting that fixes it (``fix``). ``Report.exit_code`` is 0 when
no line failed and 1 otherwise; ``Report.format_table()`` is the aligned text the CLI prints,
``Report.to_json()`` / ``Report.from_json()`` the machine-readable form. No ROS, no new dependencies:
everything comes from /proc, /sys, the os/resource modules and ``ip route get``. The lines:

=================  =========================================================================================
jtac build         ``jtac_py._native`` imports; built with libfranka (``FrankaDevice``), the same version as
                   the installed pylibfranka
kernel             PREEMPT_RT (ok) / full preemption, "lowlatency" (warn) / generic (warn): libfranka's
                   ``RealtimeConfig.kEnforce`` refuses a kernel without PREEMPT_RT (jtac runs with kIgnore)
SCHED_FIFO         a throwaway thread asks for SCHED_FIFO 80 (jtac's ``realtime_priority``) and gives it
                   back; the rtprio limit, root, CAP_SYS_NICE. Refused: fail
memory locking     RLIMIT_MEMLOCK: unlimited or >= 64 MiB (or CAP_IPC_LOCK) ok, else warn
CPU governor       scaling_governor of every CPU: all "performance" ok, else warn; no cpufreq: skip
isolated CPUs      /sys/devices/system/cpu/isolated and nohz_full, the number of CPUs: none isolated warn
C-states           cpuidle states enabled and their exit latency, /dev/cpu_dma_latency: a wake-up > 10 µs warn
RT throttling      /proc/sys/kernel/sched_rt_runtime_us: -1 ok, a budget below the period warn, 0 fail
NMI watchdog       /proc/sys/kernel/nmi_watchdog: 0 ok, 1 warn
transparent huge   /sys/kernel/mm/transparent_hugepage/enabled: madvise or never ok, always warn
pages
PCIe ASPM          /sys/module/pcie_aspm/parameters/policy: performance ok, else warn
GPU driver         /proc/driver/nvidia/version, /proc/modules: a GPU driver on a PREEMPT_RT kernel warn
robot route        ``--robot-ip`` only: ``ip route get IP`` -> interface, source address, gateway (warn:
                   Franka wants a direct link), the interface's MTU (1500), speed and state from /sys
NIC interrupts     the robot's interface (else every physical one): its IRQs (/proc/interrupts, msi_irqs),
                   their smp_affinity_list (every CPU: warn), irqbalance running (warn)
NIC coalescing     ETHTOOL_GCOALESCE (what ``ethtool -c`` reads): rx-usecs > 0 or adaptive-rx warn
compatibility      the robot's protocol version from a Connect handshake (``--robot-ip``), libfranka,
                   pylibfranka, Python
state stream       ``--robot-ip``: pylibfranka ``read_once`` for ``seconds`` (never a motion): states lost
                   (steps of the robot's clock), arrival-interval jitter, the robot's mode before and after
wake-up jitter     a Python thread at SCHED_FIFO 80 sleeps to absolute 1 ms deadlines for ``seconds``:
                   lateness (wake - deadline) median / p99 / max [µs], periods later than 1 ms. p99 < 100 µs
                   ok, < 500 µs warn, else fail; a wake-up later than 1 ms is at least a warn. The Python
                   interpreter's own delays are included: an upper bound on what a native thread sees
native loop        jtac's own hardware thread (``_native.AsyncInterface``: SCHED_FIFO 80, clock_nanosleep to
                   absolute 1 ms ticks) serving the simulated FR3 in real time for ``seconds``: packets,
                   cycles missed, the largest interval between two commands
=================  =========================================================================================

Nothing leaves the machine: for ``robot_ip`` only ``ip route get`` (a routing-table lookup, no packet)
and /sys/class/net are consulted, and the address must be a literal IP (a host name would need DNS).
What each line means for the robot and how to fix it: docs/doctor.md.

The checks live one concern per module (report, build, kernel, scheduling, cpus, network, timing); this
package re-exports them and runs them in one pass.
"""

from __future__ import annotations

import datetime
import math
import os

from jtac_py.doctor.build import check_build
from jtac_py.doctor.compat import check_compatibility, parse_connect_response, robot_handshake
from jtac_py.doctor.cpus import check_governor, check_isolated_cpus, parse_cpu_list
from jtac_py.doctor.cstates import check_cstates
from jtac_py.doctor.gpu import check_gpu_driver
from jtac_py.doctor.kernel import check_kernel, classify_kernel
from jtac_py.doctor.network import Route, check_route, parse_route_get, robot_address
from jtac_py.doctor.nic import check_nic_coalescing, check_nic_interrupts, robot_interfaces, target_cpu
from jtac_py.doctor.report import CHECK_NAMES, VERDICTS, Check, Report, Verdict
from jtac_py.doctor.scheduling import FIFO_PRIORITY, check_memlock, check_sched_fifo, realtime_fix
from jtac_py.doctor.state_stream import check_state_stream, stream_stats, stream_verdict
from jtac_py.doctor.timing import (
    DEFAULT_SECONDS,
    PERIOD_NS,
    JitterStats,
    check_native_loop,
    check_wakeup_jitter,
    jitter_stats,
    jitter_verdict,
)
from jtac_py.doctor.tunables import (
    check_nmi_watchdog,
    check_pcie_aspm,
    check_rt_throttling,
    check_transparent_hugepages,
)

__all__ = [
    "CHECK_NAMES",
    "DEFAULT_SECONDS",
    "FIFO_PRIORITY",
    "PERIOD_NS",
    "VERDICTS",
    "Check",
    "JitterStats",
    "Report",
    "Route",
    "Verdict",
    "check_build",
    "check_compatibility",
    "check_cstates",
    "check_governor",
    "check_gpu_driver",
    "check_isolated_cpus",
    "check_kernel",
    "check_memlock",
    "check_native_loop",
    "check_nic_coalescing",
    "check_nic_interrupts",
    "check_nmi_watchdog",
    "check_pcie_aspm",
    "check_route",
    "check_rt_throttling",
    "check_sched_fifo",
    "check_state_stream",
    "check_transparent_hugepages",
    "check_wakeup_jitter",
    "classify_kernel",
    "jitter_stats",
    "jitter_verdict",
    "parse_connect_response",
    "parse_cpu_list",
    "parse_route_get",
    "robot_address",
    "robot_handshake",
    "run",
    "stream_stats",
    "stream_verdict",
]


def run(robot_ip: str | None, seconds: float = DEFAULT_SECONDS) -> Report:
    """Every check, in CHECK_NAMES order. seconds: duration of each timing measurement (the two on this
    machine, and the robot's state stream with robot_ip; 0 skips them). robot_ip: a literal IP address
    (ValueError otherwise) or None.

    For a program that should refuse to start on a bad machine: ``doctor.run(ip, 2.0).exit_code == 0``,
    or look at ``report.check(name).verdict`` for the lines it cares about."""
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ValueError(f"seconds must be a finite number >= 0, got {seconds!r}")
    if robot_ip is not None:
        robot_ip = robot_address(robot_ip)
    uname = os.uname()
    date_utc = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    build = check_build()
    kernel = check_kernel()
    fifo = check_sched_fifo()
    memlock = check_memlock()
    governor = check_governor()
    isolated = check_isolated_cpus()
    tuning = (
        check_cstates(),
        check_rt_throttling(),
        check_nmi_watchdog(),
        check_transparent_hugepages(),
        check_pcie_aspm(),
        check_gpu_driver(kernel.verdict == "ok"),
    )
    route = check_route(robot_ip)
    nics = _nic_checks(route, isolated)
    compatibility = check_compatibility(robot_ip)
    stream = check_state_stream(robot_ip, seconds, reachable="server_version" in compatibility.data)
    fifo_granted = fifo.verdict == "ok"
    fix = realtime_fix(fifo_granted, kernel.verdict == "ok", isolated.verdict == "ok")
    jitter = check_wakeup_jitter(seconds, fix)
    native = check_native_loop(seconds, fifo_granted, fix)
    return Report(
        checks=(
            build,
            kernel,
            fifo,
            memlock,
            governor,
            isolated,
            *tuning,
            route,
            *nics,
            compatibility,
            stream,
            jitter,
            native,
        ),
        host=f"{uname.sysname} {uname.release} {uname.machine}",
        date_utc=date_utc,
        seconds=float(seconds),
        robot_ip=robot_ip,
    )


def _nic_checks(route: Check, isolated: Check) -> tuple[Check, Check]:
    """The NIC lines for the robot's interface (or every physical one), pinned to jtac's CPU."""
    interfaces, which = robot_interfaces(route.data)
    cpu = target_cpu(isolated.data.get("isolated", []), isolated.data.get("online", []))
    online = isolated.data.get("online", [])
    return check_nic_interrupts(interfaces, cpu, online, which), check_nic_coalescing(interfaces, which)
