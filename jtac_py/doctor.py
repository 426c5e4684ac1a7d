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

Length: over 600 lines because every check carries its measurement, its verdict and the fix it
prints; they share one report model and run in one pass.
"""

from __future__ import annotations

import dataclasses
import datetime
import gc
import glob
import importlib.metadata
import ipaddress
import itertools
import json
import math
import os
import re
import resource
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "CHECK_NAMES",
    "DEFAULT_SECONDS",
    "VERDICTS",
    "Check",
    "JitterStats",
    "Report",
    "Route",
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

Verdict = Literal["ok", "warn", "fail", "skip"]
VERDICTS: tuple[Verdict, ...] = ("ok", "warn", "fail", "skip")
CHECK_NAMES = (
    "jtac build",
    "kernel",
    "SCHED_FIFO",
    "memory locking",
    "CPU governor",
    "isolated CPUs",
    "robot route",
    "wake-up jitter",
    "native loop",
)
DEFAULT_SECONDS = 10.0

FIFO_PRIORITY = 80  # jtac's default realtime_priority (params/jtac_parameters.yaml)
PERIOD_NS = 1_000_000  # the robot's 1 kHz cycle
JITTER_OK_P99_US = 100.0
JITTER_WARN_P99_US = 500.0
MEMLOCK_OK_BYTES = 64 * 1024 * 1024
EXPECTED_MTU = 1500
# franka-sim aborts a motion (communication_constraints_violation) after 20 cycles without a command; a
# real FCI may be stricter, so anything near this is a failure.
LOST_CYCLES_ABORT = 20
MISSED_FAIL_FRACTION = 0.01
_CAP_IPC_LOCK = 14
_CAP_SYS_NICE = 23
_IP_TIMEOUT_S = 5.0

FIX_RT_KERNEL = (
    "install a PREEMPT_RT kernel: Franka's FCI documentation, 'Setting up the real-time kernel' "
    "(Debian 12: sudo apt install linux-image-rt-amd64; Ubuntu: sudo pro enable realtime-kernel), reboot"
)
FIX_RTPRIO = (
    "/etc/security/limits.d/jtac.conf: @realtime - rtprio 99 ; then sudo groupadd -f realtime && "
    "sudo usermod -aG realtime $USER and log in again (or sudo setcap cap_sys_nice+ep <the python binary>)"
)
FIX_MEMLOCK = (
    "/etc/security/limits.d/jtac.conf: @realtime - memlock unlimited ; then sudo groupadd -f realtime && "
    "sudo usermod -aG realtime $USER and log in again"
)
FIX_GOVERNOR = (
    "sudo cpupower frequency-set -g performance (Debian: apt install linux-cpupower), or "
    "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; "
    "to keep it: GOVERNOR=performance in /etc/default/cpufrequtils"
)
FIX_NO_CPUFREQ = (
    "nothing to set here; on bare metal, choose the BIOS/UEFI power profile for maximum performance "
    "(no C-states deeper than C1)"
)


# ------------------------------------------------------------------------------------------------ records
@dataclass(frozen=True)
class Check:
    """One line of the report."""

    name: str
    value: str  # what was measured or found, with units
    verdict: Verdict
    fix: str = ""  # the command or setting that fixes a line that is not ok; "" on an ok line
    data: dict[str, Any] = field(default_factory=dict)  # the measured numbers, machine-readable

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


@dataclass(frozen=True)
class Report:
    """Every check of one ``run``, with where and when it ran."""

    checks: tuple[Check, ...]
    host: str  # uname -srm
    date_utc: str  # ISO 8601
    seconds: float  # duration of each timing measurement [s]
    robot_ip: str | None = None

    @property
    def exit_code(self) -> int:
        """0 when no line failed, 1 otherwise."""
        return 1 if any(c.verdict == "fail" for c in self.checks) else 0

    def check(self, name: str) -> Check:
        """The line called ``name`` (KeyError if there is none)."""
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def counts(self) -> dict[str, int]:
        """Lines per verdict, in VERDICTS order."""
        return {v: sum(c.verdict == v for c in self.checks) for v in VERDICTS}

    def format_table(self) -> str:
        """The aligned text table: check, verdict, value; each fix on the line below its check."""
        name_w = max(len("CHECK"), *(len(c.name) for c in self.checks))
        verdict_w = max(len(v) for v in (*VERDICTS, "VERDICT"))
        lines = [
            f"jtac doctor on {self.host}, {self.date_utc}"
            + (f", robot {self.robot_ip}" if self.robot_ip else ""),
            "",
            f"{'CHECK':<{name_w}}  {'VERDICT':<{verdict_w}}  VALUE",
        ]
        indent = " " * (name_w + verdict_w + 4)
        for c in self.checks:
            lines.append(f"{c.name:<{name_w}}  {c.verdict.upper():<{verdict_w}}  {c.value}")
            if c.fix:
                lines.append(f"{indent}fix: {c.fix}")
        counts = ", ".join(f"{n} {v}" for v, n in self.counts().items())
        lines += ["", f"{counts}; exit code {self.exit_code}"]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Plain types only (for JSON), with the exit code."""
        return {
            "host": self.host,
            "date_utc": self.date_utc,
            "seconds": self.seconds,
            "robot_ip": self.robot_ip,
            "exit_code": self.exit_code,
            "checks": [dataclasses.asdict(c) for c in self.checks],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Report:
        """The inverse of to_dict (the exit code is derived, not read)."""
        return cls(
            checks=tuple(Check(**c) for c in d["checks"]),
            host=d["host"],
            date_utc=d["date_utc"],
            seconds=float(d["seconds"]),
            robot_ip=d.get("robot_ip"),
        )

    @classmethod
    def from_json(cls, text: str) -> Report:
        return cls.from_dict(json.loads(text))


@dataclass(frozen=True)
class JitterStats:
    """Wake-up lateness (actual wake − deadline) over a run of 1 ms periods."""

    periods: int
    median_us: float
    p99_us: float
    max_us: float
    late_periods: int  # periods woken more than one period late: cycles a 1 kHz loop would miss


@dataclass(frozen=True)
class Route:
    """What ``ip route get`` says about one destination."""

    destination: str
    interface: str
    source: str | None
    gateway: str | None  # None: a direct link
    local: bool  # an address of this machine (served by the loopback interface)


# ---------------------------------------------------------------------------------------------- helpers
def _read(path: Path | str) -> str | None:
    """A small /proc or /sys file, stripped; None when it is absent or unreadable."""
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _effective_caps(proc: Path) -> int | None:
    """CapEff of this process (a bit mask), from /proc/self/status."""
    status = _read(proc / "self" / "status") or ""
    match = re.search(r"^CapEff:\s*([0-9a-fA-F]+)$", status, re.MULTILINE)
    return int(match.group(1), 16) if match else None


def _has_cap(caps: int | None, bit: int) -> bool:
    return caps is not None and bool(caps >> bit & 1)


def _limit_text(value: int, unit_bytes: bool = False) -> str:
    if value == resource.RLIM_INFINITY:
        return "unlimited"
    if unit_bytes:
        return f"{value / (1024 * 1024):g} MiB"
    return str(value)


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


def _try_fifo(priority: int) -> str | None:
    """Asks for SCHED_FIFO on a throwaway thread and gives it back: None if granted, else the reason."""
    outcome: dict[str, str | None] = {"error": "the test thread did not run"}

    def attempt() -> None:
        try:
            # pid 0 is the calling thread on Linux: the rest of the process is untouched.
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        except OSError as exc:
            outcome["error"] = exc.strerror or str(exc)
            return
        outcome["error"] = None
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))

    thread = threading.Thread(target=attempt, name="jtac-doctor-fifo")
    thread.start()
    thread.join()
    return outcome["error"]


def _realtime_fix(fifo_granted: bool, kernel_rt: bool, isolated: bool) -> str:
    """What to do about late wake-ups, the likeliest causes first."""
    steps = []
    if not fifo_granted:
        steps.append(f"allow SCHED_FIFO ({FIX_RTPRIO})")
    if not kernel_rt:
        steps.append("a PREEMPT_RT kernel (see the kernel line)")
    if not isolated:
        steps.append("isolate CPUs for the real-time threads (see the isolated CPUs line)")
    steps.append("keep other SCHED_FIFO work and heavy loads off those CPUs; on a VM, use bare metal")
    return "; ".join(steps)


# ------------------------------------------------------------------------------------------------ build
def check_build() -> Check:
    """jtac_py._native, its libfranka and the installed pylibfranka."""
    name = "jtac build"
    try:
        pylibfranka_version: str | None = importlib.metadata.version("pylibfranka")
    except importlib.metadata.PackageNotFoundError:
        pylibfranka_version = None
    try:
        from jtac_py import _native
    except ImportError as exc:
        return Check(
            name,
            f"jtac_py._native does not import ({exc})",
            "fail",
            "build it: scripts/setup.sh (or pip install --no-build-isolation -e . in the venv)",
        )
    have = bool(getattr(_native, "HAVE_LIBFRANKA", False))
    built_with = getattr(_native, "LIBFRANKA_VERSION", None)
    data = {
        "have_libfranka": have,
        "libfranka_version": built_with,
        "pylibfranka_version": pylibfranka_version,
    }
    pylib = f"pylibfranka {pylibfranka_version}" if pylibfranka_version else "pylibfranka not installed"
    if not have:
        return Check(
            name,
            f"_native built without libfranka: no FrankaDevice, simulated arm only; {pylib}",
            "warn",
            "pip install pylibfranka==0.21.3, then rebuild: scripts/setup.sh",
            data,
        )
    value = f"_native built with libfranka {built_with} (FrankaDevice available); {pylib}"
    if pylibfranka_version is None:
        return Check(name, value, "fail", f"pip install pylibfranka=={built_with}", data)
    if built_with and pylibfranka_version != built_with:
        return Check(
            name,
            value + " (versions differ)",
            "warn",
            f"pip install pylibfranka=={built_with}, or rebuild jtac against it: scripts/setup.sh",
            data,
        )
    return Check(name, value, "ok", "", data)


# ----------------------------------------------------------------------------------------------- kernel
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
        _read(sys_root / "kernel" / "realtime"),
        _active_preempt_mode(_read(sys_root / "kernel" / "debug" / "sched" / "preempt")),
        _read(proc_root / "cmdline") or "",
    )
    value = f"{kind}: {uname.release}, {how}"
    data = {"kind": kind, "release": uname.release, "version": uname.version}
    if kind == "PREEMPT_RT":
        return Check("kernel", value, "ok", "", data)
    value += "; libfranka's RealtimeConfig.kEnforce refuses it (jtac runs with kIgnore)"
    return Check("kernel", value, "warn", FIX_RT_KERNEL, data)


# ------------------------------------------------------------------------------------------- scheduling
def check_sched_fifo(proc_root: Path = Path("/proc")) -> Check:
    soft, hard = resource.getrlimit(resource.RLIMIT_RTPRIO)
    caps = _effective_caps(proc_root)
    root = os.geteuid() == 0
    sys_nice = _has_cap(caps, _CAP_SYS_NICE)
    error = _try_fifo(FIFO_PRIORITY)
    who = "root" if root else f"uid {os.geteuid()}"
    who += ", CAP_SYS_NICE effective" if sys_nice else ", no CAP_SYS_NICE"
    limits = f"rtprio limit {_limit_text(soft)} (hard {_limit_text(hard)})"
    data = {
        "granted": error is None,
        "priority": FIFO_PRIORITY,
        "rtprio_soft": soft,
        "rtprio_hard": hard,
        "root": root,
        "cap_sys_nice": sys_nice,
    }
    if error is None:
        return Check("SCHED_FIFO", f"SCHED_FIFO {FIFO_PRIORITY} granted; {limits}; {who}", "ok", "", data)
    value = f"SCHED_FIFO {FIFO_PRIORITY} refused ({error}); {limits}; {who}"
    if sys_nice:
        # The capability was there and the kernel still said no: a container or RT group scheduling.
        fix = (
            "in a container: docker run --cap-add=sys_nice --ulimit rtprio=99 (with cgroup v1 RT group "
            "scheduling also --cpu-rt-runtime=950000); else check /proc/sys/kernel/sched_rt_runtime_us"
        )
    elif hard != resource.RLIM_INFINITY and hard < FIFO_PRIORITY:
        fix = FIX_RTPRIO
    else:
        fix = f"the hard limit allows it: ulimit -r 99 in the shell that starts jtac; for good: {FIX_RTPRIO}"
    return Check("SCHED_FIFO", value, "fail", fix, data)


def check_memlock(proc_root: Path = Path("/proc")) -> Check:
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    ipc_lock = _has_cap(_effective_caps(proc_root), _CAP_IPC_LOCK)
    value = f"RLIMIT_MEMLOCK {_limit_text(soft, True)} (hard {_limit_text(hard, True)})"
    data = {"memlock_soft_bytes": soft, "memlock_hard_bytes": hard, "cap_ipc_lock": ipc_lock}
    if soft == resource.RLIM_INFINITY or soft >= MEMLOCK_OK_BYTES:
        return Check("memory locking", value, "ok", "", data)
    if ipc_lock:
        # mlock() checks CAP_IPC_LOCK before the limit.
        return Check(
            "memory locking", value + "; CAP_IPC_LOCK effective (the limit does not apply)", "ok", "", data
        )
    return Check("memory locking", value + f"; below {MEMLOCK_OK_BYTES >> 20} MiB", "warn", FIX_MEMLOCK, data)


# ---------------------------------------------------------------------------------------------------- CPUs
def _cpu_number(path: str) -> int:
    match = re.search(r"/cpu(\d+)/", path)
    return int(match.group(1)) if match else -1


def check_governor(sys_root: Path = Path("/sys")) -> Check:
    pattern = str(sys_root / "devices" / "system" / "cpu" / "cpu[0-9]*" / "cpufreq" / "scaling_governor")
    governors: dict[int, str] = {}
    for path in glob.glob(pattern):
        governor = _read(path)
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
    online = parse_cpu_list(_read(cpu_dir / "online")) or list(range(os.cpu_count() or 1))
    isolated = parse_cpu_list(_read(cpu_dir / "isolated"))
    nohz_full = parse_cpu_list(_read(cpu_dir / "nohz_full"))
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


# ---------------------------------------------------------------------------------------------- network
def robot_address(text: str) -> str:
    """The robot's address as a literal IPv4/IPv6 address (ValueError otherwise: no name lookups)."""
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        raise ValueError(
            f"{text!r} is not an IP address (give the robot's address, e.g. 172.16.0.2)"
        ) from None


def parse_route_get(destination: str, output: str) -> Route:
    """The first route of ``ip route get`` output (ValueError if it names no interface)."""
    tokens = output.split()
    values: dict[str, str] = {}
    for key, value in itertools.pairwise(tokens):
        if key in ("dev", "src", "via") and key not in values:
            values[key] = value
    if "dev" not in values:
        raise ValueError(f"no interface in 'ip route get {destination}': {output.strip()!r}")
    return Route(
        destination=destination,
        interface=values["dev"],
        source=values.get("src"),
        gateway=values.get("via"),
        local=(bool(tokens) and tokens[0] == "local") or values["dev"] == "lo",
    )


def _route_get(destination: str) -> Route:
    """Runs ``ip route get``: a routing-table lookup, nothing is sent."""
    ip = shutil.which("ip") or next((p for p in ("/usr/sbin/ip", "/sbin/ip") if os.access(p, os.X_OK)), None)
    if ip is None:
        raise FileNotFoundError("the ip command (iproute2) is not installed")
    result = subprocess.run(
        [ip, "route", "get", destination],
        capture_output=True,
        text=True,
        timeout=_IP_TIMEOUT_S,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError((result.stderr or result.stdout).strip() or f"exit status {result.returncode}")
    return parse_route_get(destination, result.stdout)


def check_route(robot_ip: str | None, sys_root: Path = Path("/sys")) -> Check:
    name = "robot route"
    if robot_ip is None:
        return Check(
            name,
            "not checked: no robot address given",
            "skip",
            "jtac doctor --robot-ip <the robot's address, e.g. 172.16.0.2>",
        )
    address = robot_address(robot_ip)
    try:
        route = _route_get(address)
    except FileNotFoundError as exc:
        return Check(name, str(exc), "warn", "sudo apt install iproute2")
    except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
        return Check(
            name,
            f"no route to {address}: {exc}",
            "fail",
            "give a dedicated network interface an address in the robot's subnet, e.g. "
            "sudo ip addr add 172.16.0.1/24 dev <interface> (robot at 172.16.0.2)",
        )
    net = sys_root / "class" / "net" / route.interface
    mtu_text = _read(net / "mtu")
    mtu = int(mtu_text) if mtu_text and mtu_text.isdigit() else None
    speed_text = _read(net / "speed")  # EINVAL on loopback and links without a speed
    speed_mb_s = int(speed_text) if speed_text and speed_text.lstrip("-").isdigit() else None
    if speed_mb_s is not None and speed_mb_s <= 0:
        speed_mb_s = None
    state = _read(net / "operstate")
    parts = [f"via {route.gateway} (routed)" if route.gateway else "direct link", f"dev {route.interface}"]
    if route.source:
        parts.append(f"src {route.source}")
    parts.append(f"MTU {mtu if mtu is not None else 'unknown'}")
    parts.append(f"speed {speed_mb_s} Mb/s" if speed_mb_s is not None else "speed unknown")
    if state:
        parts.append(f"state {state}")
    value = f"{address}: " + ", ".join(parts)
    data = dataclasses.asdict(route) | {"mtu": mtu, "speed_mb_s": speed_mb_s, "operstate": state}
    if route.local:
        value += " (loopback: an address of this machine, e.g. franka-sim; not a robot link)"
        return Check(name, value, "ok", "", data)
    if state == "down":
        return Check(
            name,
            value,
            "fail",
            f"plug the robot's cable in, or: sudo ip link set dev {route.interface} up",
            data,
        )
    if route.gateway:
        # The interface found leads to the gateway, not to the robot: its MTU and speed say nothing.
        return Check(
            name,
            value + "; routed through a gateway; Franka wants a direct connection",
            "warn",
            "connect the robot's control box directly to a dedicated interface and put both on one subnet, "
            "e.g. sudo ip addr add 172.16.0.1/24 dev <interface> (robot at 172.16.0.2)",
            data,
        )
    problems, fixes = [], []
    if mtu is not None and mtu != EXPECTED_MTU:
        problems.append(f"MTU {mtu}, {EXPECTED_MTU} expected")
        fixes.append(f"sudo ip link set dev {route.interface} mtu {EXPECTED_MTU}")
    if speed_mb_s is not None and speed_mb_s < 100:
        problems.append("slower than 100 Mb/s")
        fixes.append("a 100 Mb/s or 1 Gb/s port and cable")
    if problems:
        return Check(name, value + "; " + "; ".join(problems), "warn", "; ".join(fixes), data)
    return Check(name, value, "ok", "", data)


# ------------------------------------------------------------------------------------------------ timing
def jitter_stats(lateness_ns: Sequence[int], period_ns: int = PERIOD_NS) -> JitterStats:
    """Median, p99 (nearest rank) and max of the lateness [µs], and the periods later than one period."""
    if not lateness_ns:
        raise ValueError("no periods measured")
    ordered = sorted(lateness_ns)
    n = len(ordered)
    mid = n // 2
    median_ns = ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    p99_ns = ordered[max(0, math.ceil(0.99 * n) - 1)]
    return JitterStats(
        periods=n,
        median_us=median_ns / 1e3,
        p99_us=p99_ns / 1e3,
        max_us=ordered[-1] / 1e3,
        late_periods=sum(1 for x in ordered if x > period_ns),
    )


def jitter_verdict(stats: JitterStats) -> Verdict:
    """p99 < 100 µs ok, < 500 µs warn, else fail; a wake-up more than a period late is at least a warn."""
    if stats.p99_us >= JITTER_WARN_P99_US:
        return "fail"
    if stats.p99_us >= JITTER_OK_P99_US or stats.late_periods > 0:
        return "warn"
    return "ok"


def _measure_lateness(seconds: float, priority: int) -> tuple[list[int], bool]:
    """Lateness [ns] of each 1 ms deadline on a fresh thread; True if it ran at SCHED_FIFO."""
    periods = max(1, round(seconds * 1e9 / PERIOD_NS))
    lateness_ns = [0] * periods  # preallocated: the loop itself allocates nothing the GC would track
    fifo = {"granted": False}

    def loop() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
            fifo["granted"] = True
        except OSError:
            pass
        try:
            start_ns = time.monotonic_ns() + PERIOD_NS
            for k in range(periods):
                deadline_ns = start_ns + k * PERIOD_NS
                now_ns = time.monotonic_ns()
                if deadline_ns > now_ns:
                    # Since Python 3.11 time.sleep is clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)
                    # to now + timeout: the deadline, give or take the few hundred ns of this line.
                    time.sleep((deadline_ns - now_ns) * 1e-9)
                lateness_ns[k] = time.monotonic_ns() - deadline_ns
        finally:
            if fifo["granted"]:
                os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))

    gc_was_enabled = gc.isenabled()
    gc.disable()  # a collection in the middle would be counted as the machine's lateness
    try:
        thread = threading.Thread(target=loop, name="jtac-doctor-jitter")
        thread.start()
        thread.join()
    finally:
        if gc_was_enabled:
            gc.enable()
    return lateness_ns, fifo["granted"]


def check_wakeup_jitter(seconds: float, realtime_fix: str) -> Check:
    name = "wake-up jitter"
    if seconds <= 0:
        return Check(name, "not measured (--seconds 0)", "skip", f"jtac doctor --seconds {DEFAULT_SECONDS:g}")
    lateness_ns, fifo = _measure_lateness(seconds, FIFO_PRIORITY)
    stats = jitter_stats(lateness_ns)
    verdict = jitter_verdict(stats)
    priority = f"SCHED_FIFO {FIFO_PRIORITY}" if fifo else "normal priority (SCHED_FIFO refused)"
    value = (
        f"lateness median {stats.median_us:.1f} µs, p99 {stats.p99_us:.1f} µs, max {stats.max_us:.1f} µs "
        f"of a 1000 µs budget; {stats.late_periods} of {stats.periods} periods over 1 ms late; "
        f"Python thread at {priority} over {seconds:g} s (Python-level: an upper bound on a native thread)"
    )
    data = dataclasses.asdict(stats) | {"fifo": fifo, "seconds": seconds}
    return Check(name, value, verdict, "" if verdict == "ok" else realtime_fix, data)


def _native_loop(seconds: float, priority: int) -> dict[str, Any]:
    """Runs jtac's hardware thread over the simulated FR3 on its real-time clock for `seconds`."""
    from jtac_py import _native, robots

    device = _native.MujocoDevice(robots.mjcf_xml("fr3"), name_prefix="fr3", clock="realtime")
    interface = _native.AsyncInterface(device, fifo_priority=priority, late_commands="applied")
    started_s = time.monotonic()
    interface.start()
    try:
        time.sleep(seconds)
    finally:
        interface.stop()
    elapsed_s = time.monotonic() - started_s
    counters = interface.counters()
    ticks = interface.packet_trace()["tick"]
    # The device steps one tick per period of its own clock: ticks beyond the packets served are
    # cycles the thread did not answer.
    last_tick = int(ticks[-1]) if len(ticks) else int(counters["packets"])
    return {
        "packets": int(counters["packets"]),
        "missed_cycles": max(0, last_tick - int(counters["packets"])),
        "max_command_interval_ms": float(counters["max_write_interval_s"]) * 1e3,
        "device_errors": int(counters["device_errors"]),
        "exit_status": str(interface.exit_status).rsplit(".", 1)[-1],
        "elapsed_s": elapsed_s,
    }


def check_native_loop(seconds: float, fifo_granted: bool, realtime_fix: str) -> Check:
    name = "native loop"
    if seconds <= 0:
        return Check(name, "not measured (--seconds 0)", "skip", f"jtac doctor --seconds {DEFAULT_SECONDS:g}")
    priority = FIFO_PRIORITY if fifo_granted else 0  # 0: no refusal warning from the thread on stderr
    try:
        result = _native_loop(seconds, priority)
    except ImportError as exc:
        return Check(
            name, f"not measured: jtac_py._native does not import ({exc})", "skip", "scripts/setup.sh"
        )
    except (RuntimeError, ValueError, KeyError, AttributeError, TypeError) as exc:
        return Check(
            name,
            f"not measured: the simulated arm did not run ({type(exc).__name__}: {exc})",
            "warn",
            "check the build: scripts/setup.sh, then make test",
        )
    cycles = result["packets"] + result["missed_cycles"]
    at = f"SCHED_FIFO {FIFO_PRIORITY}" if priority else "normal priority (SCHED_FIFO refused)"
    value = (
        f"{result['packets']} packets, {result['missed_cycles']} cycles missed, largest interval between "
        f"commands {result['max_command_interval_ms']:.2f} ms; jtac's hardware thread at {at} serving the "
        f"simulated FR3 in real time for {result['elapsed_s']:.1f} s"
    )
    data = dict(result)
    if result["exit_status"] != "OK" or result["device_errors"]:
        value += f"; ended {result['exit_status']} with {result['device_errors']} device errors"
        return Check(name, value, "warn", "check the build: scripts/setup.sh, then make test", data)
    missed = result["missed_cycles"]
    if missed == 0:
        return Check(name, value, "ok", "", data)
    gap_cycles = result["max_command_interval_ms"] / (PERIOD_NS / 1e6)
    if missed > MISSED_FAIL_FRACTION * cycles or gap_cycles >= LOST_CYCLES_ABORT:
        return Check(name, value, "fail", realtime_fix, data)
    return Check(name, value, "warn", realtime_fix, data)


# ------------------------------------------------------------------------------------------------- run
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
    fix = _realtime_fix(fifo_granted, kernel.verdict == "ok", isolated.verdict == "ok")
    jitter = check_wakeup_jitter(seconds, fix)
    native = check_native_loop(seconds, fifo_granted, fix)
    return Report(
        checks=(build, kernel, fifo, memlock, governor, isolated, route, jitter, native),
        host=f"{uname.sysname} {uname.release} {uname.machine}",
        date_utc=date_utc,
        seconds=float(seconds),
        robot_ip=robot_ip,
    )
