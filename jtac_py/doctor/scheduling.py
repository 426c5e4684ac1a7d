"""The "SCHED_FIFO" and "memory locking" lines, and the fix for late wake-ups that the timing lines print."""

from __future__ import annotations

import os
import re
import resource
import threading
from pathlib import Path

from jtac_py.doctor.report import Check
from jtac_py.doctor.sysfs import read_small_file

FIFO_PRIORITY = 80  # jtac's default realtime_priority (params/jtac_parameters.yaml)
MEMLOCK_OK_BYTES = 64 * 1024 * 1024
_CAP_IPC_LOCK = 14
_CAP_SYS_NICE = 23

FIX_RTPRIO = (
    "/etc/security/limits.d/jtac.conf: @realtime - rtprio 99 ; then sudo groupadd -f realtime && "
    "sudo usermod -aG realtime $USER and log in again (or sudo setcap cap_sys_nice+ep <the python binary>)"
)
FIX_MEMLOCK = (
    "/etc/security/limits.d/jtac.conf: @realtime - memlock unlimited ; then sudo groupadd -f realtime && "
    "sudo usermod -aG realtime $USER and log in again"
)


def _effective_caps(proc: Path) -> int | None:
    """CapEff of this process (a bit mask), from /proc/self/status."""
    status = read_small_file(proc / "self" / "status") or ""
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


def realtime_fix(fifo_granted: bool, kernel_rt: bool, isolated: bool) -> str:
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
