"""Whether ROS 2 is importable, and the message a ROS verb prints when it is not (the ROS-free verbs and
every ``--help`` work without it)."""

from __future__ import annotations

import importlib.util

__all__ = ["is_ros_module", "needs_ros_message", "ros_available"]

# Top-level packages a ROS verb imports: rclpy, the interface packages (``jtac`` is jtac's own
# rosidl-generated one) and their runtime.
_ROS_PACKAGES = frozenset(
    {"rclpy", "jtac", "rpyutils", "rosidl_runtime_py", "rosidl_parser", "ament_index_python"}
)
_ROS_SUFFIXES = ("_msgs", "_srvs", "_interfaces")

_HOW_TO_GET_ROS = (
    "run `make setup` (it installs the ROS 2 Jazzy wheels and jtac's interfaces into .venv; then "
    "`source scripts/env.sh`), or source a ROS 2 Jazzy installation (`source /opt/ros/jazzy/setup.bash`)"
)


def is_ros_module(name: str | None) -> bool:
    """Whether a module that failed to import belongs to ROS 2 (rclpy, a message package, ...)."""
    root = (name or "").partition(".")[0]
    return root in _ROS_PACKAGES or root.endswith(_ROS_SUFFIXES)


def ros_available() -> bool:
    """Whether rclpy can be imported here (looked up, not imported: cheap)."""
    try:
        return importlib.util.find_spec("rclpy") is not None
    except (ImportError, ValueError):
        return False


def needs_ros_message(missing: str = "rclpy") -> str:
    """Why a ROS verb cannot run here, and how to get ROS 2."""
    return (
        f"needs ROS 2, and {missing} does not import in this Python environment: {_HOW_TO_GET_ROS}. "
        "The verbs demo, plot, convert, plot-admittance, doctor and why need no ROS."
    )
