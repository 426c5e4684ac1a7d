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
robot route        ``--robot-ip`` only: ``ip route get IP`` -> interface, source address, gateway (warn:
                   Franka wants a direct link), the interface's MTU (1500), speed and state from /sys
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
from jtac_py.doctor.cpus import check_governor, check_isolated_cpus, parse_cpu_list
from jtac_py.doctor.kernel import check_kernel, classify_kernel
from jtac_py.doctor.network import Route, check_route, parse_route_get, robot_address
from jtac_py.doctor.report import CHECK_NAMES, VERDICTS, Check, Report, Verdict
from jtac_py.doctor.scheduling import FIFO_PRIORITY, check_memlock, check_sched_fifo, realtime_fix
from jtac_py.doctor.timing import (
    DEFAULT_SECONDS,
    PERIOD_NS,
    JitterStats,
    check_native_loop,
    check_wakeup_jitter,
    jitter_stats,
    jitter_verdict,
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
    "check_governor",
    "check_isolated_cpus",
    "check_kernel",
    "check_memlock",
    "check_native_loop",
    "check_route",
    "check_sched_fifo",
    "check_wakeup_jitter",
    "classify_kernel",
    "jitter_stats",
    "jitter_verdict",
    "parse_cpu_list",
    "parse_route_get",
    "robot_address",
    "run",
]


def run(robot_ip: str | None, seconds: float = DEFAULT_SECONDS) -> Report:
    """Every check, in CHECK_NAMES order. seconds: duration of each of the two timing measurements
    (0 skips them). robot_ip: a literal IP address (ValueError otherwise) or None."""
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
    route = check_route(robot_ip)
    fifo_granted = fifo.verdict == "ok"
    fix = realtime_fix(fifo_granted, kernel.verdict == "ok", isolated.verdict == "ok")
    jitter = check_wakeup_jitter(seconds, fix)
    native = check_native_loop(seconds, fifo_granted, fix)
    return Report(
        checks=(build, kernel, fifo, memlock, governor, isolated, route, jitter, native),
        host=f"{uname.sysname} {uname.release} {uname.machine}",
        date_utc=date_utc,
        seconds=float(seconds),
        robot_ip=robot_ip,
    )
