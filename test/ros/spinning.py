"""An executor spun on its own thread that can be stopped without racing rclpy's shutdown.

rclpy's ``Executor.shutdown()`` called from another thread destroys the executor's guard condition
while the spinning thread may be building its next wait set from it; that thread then raises
(``'NoneType' object has no attribute 'handle'``), which pytest reports as an error of whichever test
tears down. Here the thread spins in short waits and leaves the executor before it is shut down.
"""

from __future__ import annotations

import threading
from typing import Any

# Each wait of the spinning thread [s]: a stop takes at most this long unless a callback hangs.
_WAIT_S = 0.02


class Spinner:
    """Spins ``executor`` on a daemon thread from construction until ``stop()``."""

    def __init__(self, executor: Any) -> None:
        self._executor = executor
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        context = self._executor.context
        while not self._stop.is_set() and context.ok():
            self._executor.spin_once(timeout_sec=_WAIT_S)

    def stop(self, timeout_s: float) -> None:
        """Leave the executor (waiting up to timeout_s for the thread), then shut it down."""
        self._stop.set()
        self.thread.join(timeout=timeout_s)
        self._executor.shutdown(timeout_sec=timeout_s)
