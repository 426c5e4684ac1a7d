"""The one-line progress bar ``jtac send-goal`` draws on stderr from the goal's feedback."""

from __future__ import annotations

import time
from typing import Any

from jtac_ros.cli.session import seconds_of

__all__ = ["GoalProgress"]


class GoalProgress:
    """A one-line progress bar on stderr from the goal's feedback (a line per 10 % when not a terminal)."""

    WIDTH = 30

    def __init__(self, stream: Any, duration_s: float, start_ns: int):
        self.stream = stream
        self.duration_s = duration_s
        self.start_ns = start_ns  # trajectory start in ROS time: the goal stamp, else the sending time
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.bucket = -1
        self.drawn = False
        self.closed = False

    def _elapsed(self, feedback: Any) -> float:
        """Trajectory time of a feedback: desired.time_from_start, else header stamp minus start."""
        t = seconds_of(feedback.desired.time_from_start)
        if t > 0.0:
            return t
        stamp_ns = feedback.header.stamp.sec * 1_000_000_000 + feedback.header.stamp.nanosec
        if stamp_ns > 0:
            return (stamp_ns - self.start_ns) * 1e-9
        return time.monotonic() - self.started

    def update(self, message: Any) -> None:
        """Redraws the bar from one feedback message (a feedback callback)."""
        if self.closed:
            return
        feedback = message.feedback
        elapsed = self._elapsed(feedback)
        fraction = 1.0 if self.duration_s <= 0.0 else min(max(elapsed / self.duration_s, 0.0), 1.0)
        errors = list(feedback.error.positions) or [
            d - a for d, a in zip(feedback.desired.positions, feedback.actual.positions, strict=False)
        ]
        text = ""
        if errors:
            worst = max(range(len(errors)), key=lambda i: abs(errors[i]))
            names = list(feedback.joint_names)
            joint = names[worst] if worst < len(names) else f"joint {worst}"
            text = f"  max|desired-actual| {abs(errors[worst]):.4f} rad ({joint})"
        filled = round(fraction * self.WIDTH)
        line = (
            f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {fraction * 100:3.0f}%"
            f"  {max(elapsed, 0.0):.1f}/{self.duration_s:.1f} s{text}"
        )
        if self.tty:
            self.stream.write(f"\r{line}\x1b[K")
            self.drawn = True
        else:
            bucket = int(fraction * 10)
            if bucket == self.bucket:
                return
            self.bucket = bucket
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """Ends the bar (a newline on a terminal); later feedback is ignored."""
        self.closed = True
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False
