"""Helpers shared by the Python benchmarks in bench/ (imported from the scripts' own folder)."""

from __future__ import annotations

import os


def fifo_priorities() -> list[int] | None:
    """SCHED_FIFO priorities of this process's threads, highest first (Linux); None if unreadable."""
    fifo = []
    try:
        for tid in os.listdir("/proc/self/task"):
            if os.sched_getscheduler(int(tid)) == os.SCHED_FIFO:
                fifo.append(os.sched_getparam(int(tid)).sched_priority)
    except (OSError, AttributeError):
        return None
    return sorted(fifo, reverse=True)


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, for a benchmark's table header ("?" if unknown)."""
    try:
        with open("/proc/cpuinfo") as info:
            return next(
                (line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "?"
            )
    except OSError:
        return "?"
