"""``jtac tare``: zero the F/T sensor of one sensor frame (``<node>/zero_fts/<frame>``, std_srvs/Trigger)."""

from __future__ import annotations

import argparse

from jtac_py.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliError, seconds
from jtac_ros.cli.options import NO_NODE_HINT, node_option, wait_option
from jtac_ros.cli.session import SERVICE_TIMEOUT_S, RosSession

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``tare`` sub-parser."""
    p = sub.add_parser(
        "tare",
        parents=[node_option(), wait_option()],
        help="zero the F/T sensor of a sensor frame",
        description="Call <node>/zero_fts/FRAME (std_srvs/Trigger): the sensor's current reading "
        "becomes its zero. Keep the arm still and untouched.",
    )
    p.add_argument("frame", metavar="FRAME", help="sensor frame, e.g. fr3_ft_sensor")
    p.add_argument(
        "--timeout",
        type=seconds,
        default=SERVICE_TIMEOUT_S,
        metavar="S",
        help=f"how long to wait for the answer [s] (default: {SERVICE_TIMEOUT_S:g})",
    )
    p.set_defaults(func=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """Calls <node>/zero_fts/FRAME; exit 1 when the node refuses, 2 when there is no such service."""
    from std_srvs.srv import Trigger

    prefix = f"{args.node}/zero_fts/"
    service = prefix + args.frame
    with RosSession("tare") as ros:
        client = ros.node.create_client(Trigger, service)
        try:
            if not ros.wait_until(client.service_is_ready, args.wait):
                raise CliError(EXIT_USAGE, _missing_tare_service(ros, args.node, service))
            future = client.call_async(Trigger.Request())
            if not ros.wait(future, args.timeout):
                raise CliError(EXIT_FAILED, f"no answer from {service} within {args.timeout:g} s")
            response = future.result()
        finally:
            ros.node.destroy_client(client)
    print(response.message or ("tared" if response.success else "refused"))
    return EXIT_OK if response.success else EXIT_FAILED


def _missing_tare_service(ros: RosSession, node: str, service: str) -> str:
    """Why a zero_fts service is missing: no such node, or the frames the node does tare."""
    namespace, _, base = node.rpartition("/")
    namespace = namespace or "/"
    from rclpy.node import NodeNameNonExistentError

    # By node: the graph's plain service list also holds the clients' names (this one's included).
    prefix = f"{node}/zero_fts/"
    try:
        services = ros.node.get_service_names_and_types_by_node(base, namespace)
    except NodeNameNonExistentError:
        return f"no service {service} — {NO_NODE_HINT}"
    frames = sorted(name[len(prefix) :] for name, _ in services if name.startswith(prefix))
    if not frames:
        return f"no service {service}: {node} has no zero_fts services (no F/T sensor configured)"
    return f"no service {service}; {node} tares these sensor frames: {', '.join(frames)}"
