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
