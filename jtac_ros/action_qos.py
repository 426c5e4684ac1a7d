"""The request queues of jtac's action servers (and of its own clients).

ROS's default service QoS keeps the last 10 requests: when a burst of goals (a script, a storm of
refused goals, two planners at once) arrives while the node's executor is busy, the eleventh request
replaces the first, and that client waits for an answer that never comes. jtac's servers keep
ACTION_REQUEST_DEPTH requests per service instead, so every goal, cancel and result request is
answered; the goal callback itself costs microseconds, so the queue drains as soon as the executor
runs.
"""

from __future__ import annotations

from typing import Any

ACTION_REQUEST_DEPTH = 100  # requests per service kept while the executor is busy


def action_qos() -> dict[str, Any]:
    """Keyword arguments for rclpy's ActionServer and ActionClient: the goal, result and cancel
    services reliable with ACTION_REQUEST_DEPTH requests kept (feedback and status as ROS's defaults)."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    def deep() -> QoSProfile:
        return QoSProfile(depth=ACTION_REQUEST_DEPTH, reliability=ReliabilityPolicy.RELIABLE)

    return {
        "goal_service_qos_profile": deep(),
        "result_service_qos_profile": deep(),
        "cancel_service_qos_profile": deep(),
    }
