"""``~/record/start`` and ``~/record/stop``: the node's Controller records to .mcap (``jtac record``).

``~/record/start`` is an ``rcl_interfaces/srv/SetParameters`` call whose parameters are the request:
``path`` (string; default ``jtac_<YYYYmmdd_HHMMSS>.mcap``, or that name without the suffix as the
folder of a per-goal recording; relative to the node's working directory) and ``per_goal`` (bool: one
file per goal, ``<path>/goal_<id>.mcap``, named after the controller's goal id). The one result says
``successful`` and, as ``reason``, the path recorded to or why not. A standard type that carries a
string and a flag, so no interface package is built for it. ``~/record/stop`` (``std_srvs/srv/Trigger``)
ends the recording: the file complete, its message the cycles and files written.

The recording is the Controller's own (``Controller.record(path=...)``, docs/python_api.md): every
cycle's record, the standard ROS 2 channels and the controller's events, written in chunks by the
event pump, never on a real-time thread. It ends with the controller too (deactivate, shutdown).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jtac_py.controller import Controller
from jtac_py.recording import Recording

__all__ = ["RECORD_START_SERVICE", "RECORD_STOP_SERVICE", "RecordServer", "start_request_values"]

RECORD_START_SERVICE = "~/record/start"
RECORD_STOP_SERVICE = "~/record/stop"
#: Rows a per-goal recording holds before writing them (a goal's file is complete one chunk after it ends).
PER_GOAL_CHUNK_ROWS = 500


def start_request_values(parameters: list[Any]) -> dict[str, Any]:
    """{"path": str, "per_goal": bool} from a start request's parameters (rcl_interfaces Parameter);
    ValueError naming an unknown one."""
    values: dict[str, Any] = {"path": "", "per_goal": False}
    for parameter in parameters:
        if parameter.name == "path":
            values["path"] = parameter.value.string_value
        elif parameter.name == "per_goal":
            values["per_goal"] = bool(parameter.value.bool_value)
        else:
            raise ValueError(f"unknown record option '{parameter.name}' (path, per_goal)")
    return values


def _default_path(per_goal: bool) -> Path:
    stem = time.strftime("jtac_%Y%m%d_%H%M%S")
    return Path(stem if per_goal else f"{stem}.mcap")


def _checked_path(text: str, per_goal: bool) -> Path:
    """The path a start request names; ValueError when a session file is not .mcap or a per-goal
    folder has a suffix."""
    path = Path(text) if text else _default_path(per_goal)
    if per_goal and path.suffix:
        raise ValueError(f"a per-goal recording takes a folder, got '{path}'")
    if not per_goal and path.suffix != ".mcap":
        raise ValueError(f"a recording's path ends in .mcap, got '{path}'")
    return path


class RecordServer:
    """The two services and the one recording they control."""

    def __init__(self, node: Any, *, active_controller: Callable[[], Controller | None]) -> None:
        self._node = node
        self._active_controller = active_controller
        self.recording: Recording | None = None

    def create_services(self, callback_group: Any) -> list[Any]:
        from rcl_interfaces.srv import SetParameters
        from std_srvs.srv import Trigger

        return [
            self._node.create_service(
                SetParameters, RECORD_START_SERVICE, self._on_start, callback_group=callback_group
            ),
            self._node.create_service(
                Trigger, RECORD_STOP_SERVICE, self._on_stop, callback_group=callback_group
            ),
        ]

    def _on_start(self, request: Any, response: Any) -> Any:
        from rcl_interfaces.msg import SetParametersResult

        successful, reason = self._start(request.parameters)
        response.results = [SetParametersResult(successful=successful, reason=reason)]
        return response

    def _start(self, parameters: list[Any]) -> tuple[bool, str]:
        controller = self._active_controller()
        if controller is None:
            return False, "the controller is not active"
        if self.recording is not None:
            return False, f"already recording to {self.recording.path}"
        try:
            values = start_request_values(parameters)
            path = _checked_path(values["path"], values["per_goal"])
        except ValueError as error:
            return False, str(error)
        if values["per_goal"]:
            self.recording = controller.record(path=path, per_goal=True, chunk_rows=PER_GOAL_CHUNK_ROWS)
        else:
            self.recording = controller.record(path=path)
        kind = "a file per goal in" if values["per_goal"] else "recording to"
        return True, f"{kind} {path.resolve()}"

    def _on_stop(self, request: Any, response: Any) -> Any:
        recording = self.stop()
        response.success = recording is not None
        if recording is None:
            response.message = "not recording"
        elif recording.per_goal:
            files = ", ".join(p.name for p in recording.files) or "no goal ran"
            response.message = (
                f"{recording.rows} cycles, {len(recording.files)} goal files in {recording.path}: {files}"
            )
        else:
            response.message = f"{recording.rows} cycles to {recording.path.resolve()}"
        return response

    def stop(self) -> Recording | None:
        """Ends the recording (its files complete); the recording, None when there was none."""
        recording, self.recording = self.recording, None
        if recording is not None:
            recording.stop()
        return recording
