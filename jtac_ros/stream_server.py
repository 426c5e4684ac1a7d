"""The node's stream server: ``~/stream`` opens and closes a stream, and while one is open every
``~/joint_trajectory`` message is an action chunk (docs/ros_node.md).

``~/stream`` true opens ``Controller.stream()``; until it is closed, goals end INVALID_STATE and each
``~/joint_trajectory`` message goes, as a ``jtac_py.chunks.Chunk``, to the same ``Stream.send_chunk``
the Python API uses: ``header.stamp`` = the ROS time of the observation the chunk was computed from
(zero = on arrival), each point's ``time_from_start`` = its time after that observation. The stamp is
put on the controller clock through the offset between the two clocks kept here
(``clock_offset.ClockOffset``). Closed (the default), the topic keeps JTC's semantics (the goal
servers). The stream's own counters (stale chunks, brakes) are read by the state timer and logged,
so that a brake no message explained still shows in the log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from rclpy.node import Node

from jtac_py.controller import Controller
from jtac_ros.chunk_messages import chunk_from_msg, chunk_notes
from jtac_ros.clock_offset import ClockOffset
from jtac_ros.goal_log import GoalLog
from jtac_ros.result_codes import GoalConversionError
from jtac_ros.ros_time import time_to_s

__all__ = ["STREAM_REST_SPEED_RAD_S", "STREAM_SERVICE", "StreamServer"]

#: std_srvs/SetBool: true opens a stream (~/joint_trajectory messages become action chunks), false
#: closes it (the arm brakes to rest first) and the topic is JTC's command topic again.
STREAM_SERVICE = "~/stream"
#: Below this commanded speed of every joint [rad/s] a stream that runs out of chunks ends at rest (an
#: INFO line) rather than braking (a WARN line).
STREAM_REST_SPEED_RAD_S = 1e-3
_CHUNK_LABEL = "~/joint_trajectory chunk"


class StreamServer:
    """~/stream and the chunks of ~/joint_trajectory while a stream is open.

    node: the ROS node (its clock and its service); active_controller(): the Controller while the
    node is active, else None; log: the node's goal log."""

    def __init__(
        self, node: Node, *, active_controller: Callable[[], Controller | None], log: GoalLog
    ) -> None:
        self._node = node
        self._active_controller = active_controller
        self._log = log
        self._lock = threading.RLock()
        self._stream: Any = None  # None = JTC semantics on ~/joint_trajectory
        self._clock_offset = ClockOffset()
        self._seen = {"stale": 0, "brakes": 0, "own": 0}  # the stream's counters at the last look
        self._stale_logged = 0  # stale chunks logged by the server since the last look
        self._own_brakes = 0  # brakes the server asked for (an empty message, closing)
        self._last_message_ns = 0  # ROS time [ns] of the last chunk's arrival
        self._last_end_s = 0.0  # controller time [s] of the last chunk's last point

    @property
    def stream(self) -> Any:
        """The open ``jtac_py.streaming.Stream``, or None."""
        return self._stream

    def create_service(self, callback_group: Any) -> Any:
        """~/stream (std_srvs/SetBool), created at configure; the node destroys it at cleanup."""
        from std_srvs.srv import SetBool

        return self._node.create_service(
            SetBool, STREAM_SERVICE, self._on_request, callback_group=callback_group
        )

    def _ros_now_ns(self) -> int:
        return self._node.get_clock().now().nanoseconds

    def read_clocks(self, controller: Controller) -> None:
        """One reading of the two clocks for the offset: the controller's first, so that a delay
        between the reads makes the ROS reading late, which the offset's minimum discards."""
        controller_s = controller.controller_time()
        self._clock_offset.add(self._ros_now_ns(), controller_s)

    def state_stamp_ns(self, state_time_s: float) -> int | None:
        """While a stream is open, the ROS time [ns] of a state at controller time `state_time_s`: a
        policy uses the stamp of the state it observed as its chunk's header.stamp, so the chunk lands
        where the observation was (not where the executor published it). None while none is open."""
        if self._stream is None:
            return None
        return self._clock_offset.to_ros_ns(state_time_s)

    def forget(self) -> None:
        """Drops the stream without closing it (Controller.stop() closes it)."""
        with self._lock:
            self._stream = None

    def _on_request(self, request: Any, response: Any) -> Any:
        """~/stream (std_srvs/SetBool): true opens a stream, false closes it (after braking to rest)."""
        controller = self._active_controller()
        with self._lock:
            if controller is None:
                response.success, response.message = False, "the controller is not active"
            elif request.data:
                response.success, response.message = True, self._open(controller)
            else:
                response.success, response.message = True, self._close()
        self._log.log("info" if response.success else "warning", f"~/stream: {response.message}")
        return response

    def _open(self, controller: Controller) -> str:
        if self._stream is not None:
            return "a stream is already open"
        stream = controller.stream()  # a goal still moving brakes to rest and ends INVALID_STATE
        self._seen = {"stale": 0, "brakes": 0, "own": 0}
        self._stale_logged = self._own_brakes = 0
        self._last_message_ns = self._ros_now_ns()
        self._last_end_s = stream.now()
        self.read_clocks(controller)
        self._stream = stream
        return (
            "stream open: ~/joint_trajectory messages are action chunks (header.stamp = the ROS time of "
            "the observation, time_from_start = each point's time after it); goals are refused until "
            "it is closed"
        )

    def _close(self) -> str:
        stream = self._stream
        if stream is None:
            return "no stream is open"
        # Stream.close() hands the arm back by the hand-over rule: it brakes to rest within
        # stop_accelerations and returns once trajectory execution runs (the next goal is accepted).
        self.watch()
        try:
            stream.close()
        except RuntimeError as error:
            self._stream = None
            return f"stream closed, but {error}"
        counts = (
            f"{stream.chunks_taken} chunk(s) taken, {stream.stale_chunks} stale, "
            f"{stream.brakes} brake(s), {stream.refused} refused"
        )
        self._stream = None
        return f"stream closed at rest ({counts}); ~/joint_trajectory is JTC's command topic again"

    def on_chunk_msg(self, controller: Controller, msg: Any) -> None:
        """~/joint_trajectory while a stream is open: the message is an action chunk (see the module
        docstring); an empty one brakes the arm to rest (Stream.brake(): the stream stays open and
        follows the next chunk)."""
        arrived_ns = self._ros_now_ns()
        with self._lock:
            stream = self._stream
            if stream is None:
                self._log.log("warning", f"{_CHUNK_LABEL} ignored: the stream was closed")
                return
            if not len(msg.points):
                stream.brake()
                self._own_brakes += 1
                self._log.log("info", f"{_CHUNK_LABEL} with no points: braking to rest (minimum-time stop)")
                return
            self._send(controller, stream, msg, arrived_ns)

    def _send(self, controller: Controller, stream: Any, msg: Any, arrived_ns: int) -> None:
        """A chunk message with points: placed after its observation (the stamp on the controller
        clock; a zero stamp = now, the one reading of the stream's clock the stale check uses too),
        checked once and sent; a chunk already over when it arrives is logged as stale."""
        self.read_clocks(controller)
        now_s = stream.now()
        stamp = msg.header.stamp
        observed_s = now_s
        if stamp.sec or stamp.nanosec:
            observed_s = self._clock_offset.to_controller_s(stamp.sec * 1_000_000_000 + stamp.nanosec)
        try:
            chunk = chunk_from_msg(msg, controller.joint_names, observed_at_s=observed_s)
        except GoalConversionError as error:  # nothing reached the robot
            self._log.log("warning", f"{_CHUNK_LABEL} refused: {error}")
            return
        for note in chunk_notes(msg):
            self._log.note(note)
        try:
            stream.send_chunk(chunk)
        except ValueError as error:  # the native guard (e.g. more points than it holds)
            self._log.log("warning", f"{_CHUNK_LABEL} refused: INVALID_GOAL (-1): {error}")
            return
        end_s = observed_s + chunk.duration_s
        self._last_message_ns = arrived_ns
        self._last_end_s = end_s
        if end_s <= now_s + 1.0 / controller.update_rate_hz:
            self._stale_logged += 1
            self._log.log(
                "warning",
                f"{_CHUNK_LABEL} stale: header.stamp = {time_to_s(stamp):.6f} s, observed "
                f"{now_s - observed_s:.3f} s before it arrived; its last point (time_from_start "
                f"{chunk.duration_s:.3f} s) ended {now_s - end_s:.3f} s ago: braking "
                "to rest within stop_accelerations",
            )

    def watch(self) -> None:
        """Logs, from the stream's counters, the brakes no message has explained: stale chunks the
        server did not see coming (judged a cycle later by the loop) and inputs that stopped (the last
        chunk ran out, or none came for the stream's timeout)."""
        with self._lock:  # the state timer may run on two executor threads at once
            stream = self._stream
            if stream is None:
                return
            brakes, stale = stream.brakes, stream.stale_chunks
            new_brakes = brakes - self._seen["brakes"]
            new_stale = stale - self._seen["stale"]
            # Brakes the server asked for (an empty message) are logged where they were asked for.
            new_own = self._own_brakes - self._seen["own"]
            unlogged_stale = max(new_stale - self._stale_logged, 0)
            self._seen = {"stale": stale, "brakes": brakes, "own": self._own_brakes}
            self._stale_logged = max(self._stale_logged - new_stale, 0)
            if unlogged_stale:
                self._log.log(
                    "warning",
                    f"stream: {unlogged_stale} chunk(s) ended before the loop took them: braking to rest "
                    "within stop_accelerations",
                )
            if new_brakes > new_stale + new_own:  # each stale chunk taken while following starts one brake
                self._log_ran_out(stream)

    def _log_ran_out(self, stream: Any) -> None:
        silent_s = (self._ros_now_ns() - self._last_message_ns) * 1e-9
        ran_out_s = stream.now() - self._last_end_s
        why = (
            f"no chunk to follow (the last arrived {silent_s:.3f} s ago; its last point was "
            f"{ran_out_s:.3f} s ago)"
        )
        controller = self._active_controller()
        state = controller.state if controller is not None else None
        # A policy's last chunk that ends at rest is how a stream normally ends: said at INFO.
        if state is not None and np.abs(state.dq_cmd).max() < STREAM_REST_SPEED_RAD_S:
            self._log.log("info", f"stream: {why}: at rest, holding")
        else:
            self._log.log("warning", f"stream: {why}: braking to rest within stop_accelerations")
