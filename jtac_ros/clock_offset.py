"""The offset between the node's ROS clock and the controller clock, kept from paired readings.

A chunk on ``~/joint_trajectory`` is stamped with the ROS time of the observation it was computed
from; the stream places it on the controller clock (``ControllerState.time``, the robot's time). One
pair of readings taken when the message arrives would carry that reading's error into every chunk:
the controller clock is read from the last 1 ms cycle (0 to 1 ms behind) and the thread may be
preempted between the two reads. So the node reads the pair often (at every state publication and
every chunk), the controller clock first, and keeps the smallest ``ros − controller`` over a sliding
window: every reading errs the same way (the ROS clock read late), so the smallest is the tightest,
and the window follows a slow drift between the two clocks (a real robot's clock against the host's).
Integer nanoseconds on the ROS side: a float of ~1.7e9 s resolves only 0.24 µs.
"""

from __future__ import annotations

import threading
from collections import deque

#: How long a reading is kept [s]: long enough to hold readings taken right after a controller cycle
#: (a 100 Hz state timer gives 200), short enough to follow a drift of ppm between the clocks.
WINDOW_S = 2.0


class ClockOffset:
    """ROS time − controller time, the smallest of the readings of the last ``window_s``. Any thread."""

    def __init__(self, window_s: float = WINDOW_S) -> None:
        self._window_ns = int(window_s * 1e9)
        self._readings: deque[tuple[int, int]] = deque()  # (ROS time [ns], ROS − controller [ns])
        self._lock = threading.Lock()

    def add(self, ros_ns: int, controller_s: float) -> None:
        """A pair read together: the controller clock [s] first, then the ROS clock [ns]."""
        with self._lock:
            self._readings.append((int(ros_ns), int(ros_ns) - round(float(controller_s) * 1e9)))
            while self._readings[0][0] < ros_ns - self._window_ns:
                self._readings.popleft()

    def clear(self) -> None:
        with self._lock:
            self._readings.clear()

    @property
    def known(self) -> bool:
        return bool(self._readings)

    def offset_ns(self) -> int:
        """ROS time − controller time [ns]; ValueError before the first reading."""
        with self._lock:
            if not self._readings:
                raise ValueError("no reading of the two clocks yet")
            return min(offset for _, offset in self._readings)

    def to_controller_s(self, ros_ns: int) -> float:
        """A ROS time [ns] on the controller clock [s]."""
        return (int(ros_ns) - self.offset_ns()) * 1e-9

    def to_ros_ns(self, controller_s: float) -> int:
        """A controller time [s] on the ROS clock [ns]."""
        return round(float(controller_s) * 1e9) + self.offset_ns()


__all__ = ["WINDOW_S", "ClockOffset"]
