"""jtac_ros: the ROS 2 (rclpy) adapter of jtac: the controller node, parameter declarations, CLI.

The public names, importable from ``jtac_ros`` (``from jtac_ros import JtacNode``):

- ``JtacNode``, ``DEFAULT_NODE_NAME``: the lifecycle controller node of one arm
  (``jtac run``, ``python -m jtac_ros.node``) and its default name.
- ``JtacPairNode``, ``DEFAULT_PAIR_NODE_NAME``: the node of a group of arms on one clock
  (``python -m jtac_ros.pair_node``) and its default name.
- ``spin_node``: runs a node until SIGINT/SIGTERM in its own context (what both nodes' ``main`` do).
- ``conversions``: the mapping between ROS messages and the Python API's types.

They are imported on first use, so that ``import jtac_ros`` (and the ``jtac`` verbs that need no
ROS) works where rclpy is not installed. The other modules are the node's parts, not an API.
The rosidl-generated interfaces are the separate package ``jtac`` (``jtac.action``, ``jtac.msg``);
no algorithm lives here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jtac_ros import conversions
    from jtac_ros.node import DEFAULT_NODE_NAME, JtacNode
    from jtac_ros.pair_node import DEFAULT_PAIR_NODE_NAME, JtacPairNode
    from jtac_ros.spin import spin_node

# Each public name and the module that defines it (imported on first use: they need rclpy).
_HOMES = {
    "JtacNode": "jtac_ros.node",
    "DEFAULT_NODE_NAME": "jtac_ros.node",
    "JtacPairNode": "jtac_ros.pair_node",
    "DEFAULT_PAIR_NODE_NAME": "jtac_ros.pair_node",
    "spin_node": "jtac_ros.spin",
}

__all__ = [
    "DEFAULT_NODE_NAME",
    "DEFAULT_PAIR_NODE_NAME",
    "JtacNode",
    "JtacPairNode",
    "conversions",
    "spin_node",
]


def __getattr__(name: str) -> Any:
    """Imports a public name's module on first use."""
    if name == "conversions":
        return importlib.import_module("jtac_ros.conversions")
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'jtac_ros' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names and the module's own."""
    return sorted(set(globals()) | set(__all__))
