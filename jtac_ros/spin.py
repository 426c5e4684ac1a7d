"""Running one node until SIGINT/SIGTERM: its own context, a multi-threaded executor, a parameter
error as exit code 2 with its message, and the teardown in order whatever happened."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor

from jtac_py.parameters import ParameterError

EXECUTOR_THREADS = 8  # goals' execute callbacks wait on their results: one thread each, and the timers


def spin_node(
    args: Sequence[str],
    make_node: Callable[[rclpy.context.Context], Any],
    *,
    start: Callable[[Any], None],
    shut_down: Callable[[Any], None] = lambda node: None,
    program: str = "jtac",
) -> int:
    """Builds the node in a fresh context, `start(node)`, spins until SIGINT/SIGTERM; then
    `shut_down(node)`, destroys the node and the context. 0, or 2 on a ParameterError (printed)."""
    context = rclpy.context.Context()
    rclpy.init(args=list(args), context=context)
    node = None
    executor = MultiThreadedExecutor(num_threads=EXECUTOR_THREADS, context=context)
    try:
        node = make_node(context)
        executor.add_node(node)
        start(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ParameterError as error:
        print(f"{program}: {error}", file=sys.stderr)
        return 2
    finally:
        if node is not None:
            shut_down(node)
            executor.remove_node(node)
            node.destroy_node()
        executor.shutdown()
        if context.ok():
            rclpy.shutdown(context=context)
    return 0
