"""Fixtures for tests over real DDS: an rclpy context, nodes and a spinning executor thread."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture
def ros():
    """An initialised rclpy context with a multi-threaded executor spinning in a thread.

    Yields an object with ``.node(name)`` to create nodes on it. Teardown stops and joins the
    executor before destroying nodes (otherwise rclpy prints tracebacks after the last test).
    """
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor
    from spinning import Spinner

    context = Context()
    rclpy.init(context=context)
    executor = MultiThreadedExecutor(num_threads=4, context=context)
    nodes = []

    class _Ros:
        def node(self, name):
            n = rclpy.create_node(name, context=context)
            nodes.append(n)
            executor.add_node(n)
            return n

    spinner = Spinner(executor)
    try:
        yield _Ros()
    finally:
        spinner.stop(timeout_s=60.0)
        for n in nodes:
            n.destroy_node()
        rclpy.shutdown(context=context)


@pytest.fixture(scope="module")
def echo_server():
    """Starts test/ros/echo_action_server.py in its own process (real DDS between processes)."""
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "echo_action_server.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ),
    )
    # The server prints READY once its action servers exist.
    deadline = time.monotonic() + 60.0
    line = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "READY" in line or proc.poll() is not None:
            break
    if "READY" not in line:
        proc.kill()
        proc.wait()
        pytest.fail(f"echo server did not start: {line}{proc.stdout.read()}")
    yield proc
    proc.send_signal(signal.SIGINT)  # rclpy's handler turns it into a clean shutdown
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()


@pytest.fixture
def rig():
    """The controller node, configured and active, and a client on another context (node_rig.Rig)."""
    from node_rig import Rig

    r = Rig({"default_path_tolerance": 0.3, "default_goal_time_tolerance": 0.5}).activate()
    yield r
    r.close()
