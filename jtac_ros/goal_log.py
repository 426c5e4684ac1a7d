"""The node's goal log: one line per goal outcome, rate-limited, with notes said once a minute.

Every part of the node (goal servers, stream server, controller_manager stand-in) logs through the
one GoalLog the node owns, so one storm of goals or chunks shares one budget and one suppression
count.
"""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["LOG_BURST_LINES", "LOG_LINES_PER_S", "NOTE_REPEAT_S", "GoalLog"]

#: Goal log lines: a burst this long passes at once, then this many per second; the rest are counted
#: and reported in one line (a 30 Hz goal storm must not bury everything else in the log).
LOG_BURST_LINES = 20
LOG_LINES_PER_S = 5.0
#: A note about an ignored field (MoveIt sends the same on every goal) is logged once per this [s].
NOTE_REPEAT_S = 60.0


class GoalLog:
    """The node's goal log: one line per outcome, rate-limited by a token bucket (LOG_BURST_LINES,
    then LOG_LINES_PER_S). Suppressed lines are counted and reported in one WARN line as soon as the
    bucket allows (flush() is called from the state timer too), so a storm shows its size without
    flooding, and nothing is dropped silently."""

    def __init__(
        self,
        logger: Any,
        burst: int = LOG_BURST_LINES,
        lines_per_s: float = LOG_LINES_PER_S,
        clock: Any = time.monotonic,
    ) -> None:
        self._logger = logger
        self._burst = float(burst)
        self._rate = float(lines_per_s)
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()
        self._suppressed = 0
        self._suppressed_since = 0.0
        self._notes: dict[str, float] = {}
        self._lock = threading.Lock()

    def _take(self) -> bool:
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    def _report_suppressed(self) -> None:
        if self._suppressed and self._take():
            elapsed = self._clock() - self._suppressed_since
            self._logger.warning(
                f"{self._suppressed} goal log lines suppressed in the last {elapsed:.1f} s "
                f"(more than {self._rate:g} per second)"
            )
            self._suppressed = 0

    def log(self, level: str, text: str) -> bool:
        """`level`: 'info', 'warning' or 'error'. False when rate-limited (counted)."""
        with self._lock:
            self._report_suppressed()
            if not self._take():
                if not self._suppressed:
                    self._suppressed_since = self._clock()
                self._suppressed += 1
                return False
            # One call site per severity: rclpy refuses a call site whose severity changes.
            if level == "info":
                self._logger.info(text)
            elif level == "warning":
                self._logger.warning(text)
            else:
                self._logger.error(text)
            return True

    def note(self, text: str) -> None:
        """A WARN note, once per NOTE_REPEAT_S for the same text."""
        now = self._clock()
        with self._lock:
            last = self._notes.get(text)
            if last is not None and now - last < NOTE_REPEAT_S:
                return
            self._notes[text] = now
            if len(self._notes) > 1000:
                self._notes = {k: v for k, v in self._notes.items() if now - v < NOTE_REPEAT_S}
        self.log("warning", text)

    def flush(self) -> None:
        with self._lock:
            self._report_suppressed()
