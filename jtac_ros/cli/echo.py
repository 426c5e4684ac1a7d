"""``jtac echo``: print a topic's messages as YAML documents (what ``ros2 topic echo`` prints)."""

from __future__ import annotations

import argparse
from typing import Any

from jtac_py.cli.common import EXIT_OK, EXIT_USAGE, CliError, positive_int
from jtac_ros.cli.options import NO_NODE_HINT, node_option, wait_option
from jtac_ros.cli.session import RosSession

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``echo`` sub-parser."""
    p = sub.add_parser(
        "echo",
        parents=[node_option(), wait_option()],
        help="print a topic's messages as YAML",
        description="Print the messages of TOPIC, one YAML document each: controller_state, joint_states, "
        "robot_description, wrench/<frame>/raw or wrench/<frame>/filtered (resolved against the node), or an "
        "absolute name.",
    )
    p.add_argument(
        "topic", metavar="TOPIC", help="e.g. controller_state, joint_states, wrench/fr3_ft_sensor/raw"
    )
    p.add_argument(
        "--count", type=positive_int, metavar="N", help="exit after N messages (default: until Ctrl-C)"
    )
    p.set_defaults(func=handle)
    return p


def _message_dict(msg: Any) -> Any:
    """A ROS message as plain dicts, lists and numbers (what `ros2 topic echo` prints)."""
    if hasattr(msg, "get_fields_and_field_types"):
        return {name: _message_dict(getattr(msg, name)) for name in msg.get_fields_and_field_types()}
    if isinstance(msg, list | tuple) or hasattr(msg, "tolist"):
        values = msg.tolist() if hasattr(msg, "tolist") else list(msg)
        return [_message_dict(v) for v in values]
    if isinstance(msg, bytes):
        return list(msg)
    return msg


def _topic_name(node: str, topic: str) -> str:
    """`topic` as the node publishes it: absolute as given; joint_states and robot_description in the
    node's namespace; anything else under the node (controller_state, wrench/<frame>/raw, ...)."""
    if topic.startswith("/"):
        return topic
    namespace = node.rpartition("/")[0]
    if topic in ("joint_states", "robot_description"):
        return f"{namespace}/{topic}"
    return f"{node}/{topic}"


def _message_class(type_name: str) -> Any:
    """The message class of a type name such as ``sensor_msgs/msg/JointState``."""
    import importlib

    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def handle(args: argparse.Namespace) -> int:
    """Prints TOPIC's messages as YAML documents until --count or Ctrl-C."""
    import yaml
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    topic = _topic_name(args.node, args.topic)
    received = 0

    def on_message(msg: Any) -> None:
        nonlocal received
        if args.count is None or received < args.count:
            received += 1
            print(yaml.safe_dump(_message_dict(msg), sort_keys=False, width=110).rstrip(), flush=True)
            print("---", flush=True)

    with RosSession("echo") as ros:
        if not ros.wait_until(lambda: ros.node.count_publishers(topic) > 0, args.wait):
            raise CliError(EXIT_USAGE, f"no publisher on {topic} — {NO_NODE_HINT}")
        publishers = ros.node.get_publishers_info_by_topic(topic)
        msg_type = _message_class(publishers[0].topic_type)
        # A latched topic (robot_description) is read as latched; the rest best effort, which matches
        # reliable and best-effort publishers alike.
        latched = any(p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in publishers)
        qos = (
            QoSProfile(
                depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
            )
            if latched
            else QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
        )
        ros.node.create_subscription(msg_type, topic, on_message, qos)
        while args.count is None or received < args.count:
            ros.spin_once()
    return EXIT_OK
