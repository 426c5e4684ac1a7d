"""jtac: the command line of the joint trajectory admittance controller (the wheels have no ``ros2`` CLI).

Subcommands (``jtac <command> --help`` for the options)::

    jtac run [--params-file F] [--node NAME] [-- NODE_ARGS...]   start the controller node
    jtac send-goal FILE.yaml [--moveit] [--timeout S]         execute a goal file, show progress
    jtac cancel [--moveit]                                    cancel every goal of the node's action
    jtac tare FRAME                                           zero the F/T sensor of FRAME
    jtac time-scale [PERCENT]                                 set (or show) time_scale_percentage
    jtac state [--count N]                                    echo the controller state
    jtac echo TOPIC [--count N]                               print a topic's messages (controller_state,
                                                              joint_states, wrench/<frame>/raw, ...)
    jtac param list [PREFIX] | get NAME... | set NAME VALUE   the node's parameters
    jtac lifecycle get | set TRANSITION                       the node's lifecycle state, a transition
    jtac list-controllers [--verbose]                         the controller, its type and state
    jtac switch [--activate NAME] [--deactivate NAME]         activate / deactivate the controller
    jtac plot RECORD.npz [--out DIR]                          write the four plots of a recording
    jtac plot-admittance --mass M --stiffness K [--damping D] [--rate HZ] [--out FILE]
                                                              check an admittance set at a rate and plot
                                                              its continuous vs discrete step response
    jtac doctor [--robot-ip IP] [--seconds S] [--json]        can this machine hold the 1 kHz loop?

Every command that talks to the node takes ``--node NAME`` (default
``joint_trajectory_admittance_controller``) and ``--wait S``, how long to wait for the node's action,
service or topic to be discovered. Goal files are described in jtac_ros/goal_file.py.

``jtac plot-admittance`` needs no node and no ROS either: it runs goal intake's stability check
(jtac_py.admittance, docs/admittance.md), prints one line per axis and exits 1 when goal intake would
reject the set.

``jtac doctor`` needs no node and no ROS (jtac_py/doctor.py, docs/doctor.md): it checks the kernel,
scheduling limits, CPUs and the route to the robot, measures wake-up lateness, and names the fix of
every line that is not ok.

Exit status: 0 done (goal SUCCESSFUL; doctor: no line failed); 1 the goal failed or the node refused the
request (doctor: a line failed); 2 bad usage, a bad file or value, or no node; 130 interrupted (Ctrl-C;
send-goal cancels its goal first).

Length: over 600 lines because each subcommand is short but there are many (every one a ROS user
reaches for, with its --help); they share one node, one client set-up and one output format.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_NODE", "build_parser", "main"]

DEFAULT_NODE = "joint_trajectory_admittance_controller"
DEFAULT_WAIT_S = 5.0
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
_SERVICE_TIMEOUT_S = 10.0  # answer time of a service the node has (rclpy can be slow under load)
_CANCEL_TIMEOUT_S = 2.0  # how long an interrupted send-goal waits for its cancel to be acknowledged
_SPIN_STEP_S = 0.1  # executor wait per step: Ctrl-C is seen within this
_NAME_RE = re.compile(r"^/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
_HINT = "is the node running? (jtac run)"


class CliError(Exception):
    """A failure to report as one line on stderr, with its exit status."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


# ------------------------------------------------------------------------------------------- argument types
def _node_name(text: str) -> str:
    """A ROS node name, optionally with a namespace; returned fully qualified (``/ns/name``)."""
    if not _NAME_RE.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a ROS node name (letters, digits and _, not starting with a digit; "
            "an optional /namespace/ prefix)"
        )
    return text if text.startswith("/") else f"/{text}"


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0.0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number of seconds >= 0")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected an integer >= 1")
    return value


def _percent(text: str) -> float:
    """time_scale_percentage, checked by the parameter schema's own rule (same message as the node)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (a percentage, 0 to 100)") from None
    from jtac_py.parameters import ParameterError, default_schema

    try:
        return default_schema().spec("time_scale_percentage").check(value)
    except ParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# -------------------------------------------------------------------------------------------- rclpy session
class _Ros:
    """A fresh rclpy context with one node and a single-threaded executor, shut down on exit."""

    def __init__(self, role: str):
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        self.context = Context()
        # No signal handlers on a non-default context: Ctrl-C stays a KeyboardInterrupt.
        rclpy.init(args=["jtac"], context=self.context)
        try:
            self.node = rclpy.create_node(
                f"jtac_cli_{role}_{os.getpid()}",
                context=self.context,
                enable_rosout=False,
                start_parameter_services=False,
            )
            self.executor = SingleThreadedExecutor(context=self.context)
            self.executor.add_node(self.node)
        except BaseException:
            self.context.try_shutdown()
            raise

    def __enter__(self) -> _Ros:
        return self

    def __exit__(self, *exc: object) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self.context.try_shutdown()

    def wait(self, future: Any, timeout_s: float | None) -> bool:
        """Spin until the future is done or timeout_s passes (None: no limit); True if done."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not future.done():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            self.executor.spin_once(timeout_sec=_SPIN_STEP_S)
        return True

    def wait_until(self, ready: Callable[[], bool], timeout_s: float) -> bool:
        """Poll ready() (a discovery check) until it holds or timeout_s passes."""
        deadline = time.monotonic() + timeout_s
        while not ready():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def call(self, srv_type: Any, name: str, request: Any, wait_s: float, missing: str) -> Any:
        """Call a service: exit 2 with ``missing`` if it is not found within wait_s."""
        client = self.node.create_client(srv_type, name)
        try:
            if not self.wait_until(client.service_is_ready, wait_s):
                raise CliError(EXIT_USAGE, missing)
            future = client.call_async(request)
            if not self.wait(future, _SERVICE_TIMEOUT_S):
                raise CliError(EXIT_FAILED, f"no answer from {name} within {_SERVICE_TIMEOUT_S:g} s")
            return future.result()
        finally:
            self.node.destroy_client(client)


def _action_name(node: str, moveit: bool) -> str:
    return f"{node}/moveit/follow_joint_trajectory" if moveit else f"{node}/follow_joint_trajectory"


def _constant_names(cls: type) -> dict[int, str]:
    """Integer constants of a message class by value (SUCCESSFUL, INVALID_GOAL, ...)."""
    return {
        value: name
        for name, value in vars(cls).items()
        if name.isupper() and isinstance(value, int) and not isinstance(value, bool)
    }


def _seconds_of(duration: Any) -> float:
    return duration.sec + duration.nanosec * 1e-9


# ------------------------------------------------------------------------------------------------------ run
def _cmd_run(args: argparse.Namespace) -> int:
    if args.params_file is not None and not Path(args.params_file).is_file():
        raise CliError(EXIT_USAGE, f"{args.params_file}: no such parameters file")
    try:
        from jtac_ros import node as node_module
    except ModuleNotFoundError as exc:
        if exc.name != "jtac_ros.node":
            raise
        raise CliError(
            EXIT_USAGE, "the controller node (jtac_ros.node) is not installed in this environment"
        ) from None
    namespace, _, base = args.node.rpartition("/")
    extra = list(args.node_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    ros_args = ["--ros-args", "-r", f"__node:={base}"]
    if namespace:
        ros_args += ["-r", f"__ns:={namespace}"]
    if args.params_file is not None:
        ros_args += ["--params-file", str(args.params_file)]
    return int(node_module.main([*extra, *ros_args]) or 0)


# ------------------------------------------------------------------------------------------------ send-goal
class _Progress:
    """A one-line progress bar on stderr from the goal's feedback (a line per 10 % when not a terminal)."""

    WIDTH = 30

    def __init__(self, stream: Any, duration_s: float, start_ns: int):
        self.stream = stream
        self.duration_s = duration_s
        self.start_ns = start_ns  # trajectory start in ROS time: the goal stamp, else the sending time
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.bucket = -1
        self.drawn = False
        self.closed = False

    def _elapsed(self, feedback: Any) -> float:
        """Trajectory time of a feedback: desired.time_from_start, else header stamp minus start."""
        t = _seconds_of(feedback.desired.time_from_start)
        if t > 0.0:
            return t
        stamp_ns = feedback.header.stamp.sec * 1_000_000_000 + feedback.header.stamp.nanosec
        if stamp_ns > 0:
            return (stamp_ns - self.start_ns) * 1e-9
        return time.monotonic() - self.started

    def update(self, message: Any) -> None:
        if self.closed:
            return
        feedback = message.feedback
        elapsed = self._elapsed(feedback)
        fraction = 1.0 if self.duration_s <= 0.0 else min(max(elapsed / self.duration_s, 0.0), 1.0)
        errors = list(feedback.error.positions) or [
            d - a for d, a in zip(feedback.desired.positions, feedback.actual.positions, strict=False)
        ]
        text = ""
        if errors:
            worst = max(range(len(errors)), key=lambda i: abs(errors[i]))
            names = list(feedback.joint_names)
            joint = names[worst] if worst < len(names) else f"joint {worst}"
            text = f"  max|desired-actual| {abs(errors[worst]):.4f} rad ({joint})"
        filled = round(fraction * self.WIDTH)
        line = (
            f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {fraction * 100:3.0f}%"
            f"  {max(elapsed, 0.0):.1f}/{self.duration_s:.1f} s{text}"
        )
        if self.tty:
            self.stream.write(f"\r{line}\x1b[K")
            self.drawn = True
        else:
            bucket = int(fraction * 10)
            if bucket == self.bucket:
                return
            self.bucket = bucket
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """Ends the bar (a newline on a terminal); later feedback is ignored."""
        self.closed = True
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


def _cmd_send_goal(args: argparse.Namespace) -> int:
    from jtac_ros.goal_file import GoalFileError, read_goal_file

    try:
        spec = read_goal_file(args.file)
        if args.moveit:
            spec.moveit_goal()  # the jtac-only keys fail here, before any ROS traffic
    except GoalFileError as exc:
        raise CliError(EXIT_USAGE, str(exc)) from None

    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from jtac.action import FollowJointTrajectoryWithAdmittance
    from rclpy.action import ActionClient
    from unique_identifier_msgs.msg import UUID

    action_type = FollowJointTrajectory if args.moveit else FollowJointTrajectoryWithAdmittance
    name = _action_name(args.node, args.moveit)
    status_names = {v: k.removeprefix("STATUS_") for v, k in _constant_names(GoalStatus).items()}
    deadline = None if args.timeout is None else time.monotonic() + args.timeout

    def remaining() -> float | None:
        return None if deadline is None else max(deadline - time.monotonic(), 0.0)

    with _Ros("send_goal") as ros:
        client = ActionClient(ros.node, action_type, name)
        progress = None
        goal_id = None
        try:
            if not client.wait_for_server(timeout_sec=args.wait):
                raise CliError(EXIT_USAGE, f"no action server {name} — {_HINT}")
            now_ns = ros.node.get_clock().now().nanoseconds
            goal = spec.moveit_goal(now_ns) if args.moveit else spec.jtac_goal(now_ns)
            stamp = goal.trajectory.header.stamp
            start_ns = (stamp.sec * 1_000_000_000 + stamp.nanosec) or now_ns
            progress = _Progress(sys.stderr, spec.duration_s, start_ns)
            print(
                f"sending {args.file} to {name}: {len(goal.trajectory.points)} points, "
                f"{len(goal.trajectory.joint_names)} joints, {spec.duration_s:g} s",
                file=sys.stderr,
            )
            # Our own goal id: a Ctrl-C before the goal response (which rclpy can delay) still cancels it.
            goal_id = UUID(uuid=list(uuid.uuid4().bytes))
            send_future = client.send_goal_async(goal, feedback_callback=progress.update, goal_uuid=goal_id)
            if not ros.wait(send_future, remaining()):
                progress.finish()
                _cancel(ros, name, goal_id)  # in case it was accepted after all
                raise CliError(EXIT_FAILED, f"timeout: {name} did not answer the goal; cancel requested")
            handle = send_future.result()
            if not handle.accepted:
                print(f"REJECTED: {name} rejected the goal")
                return EXIT_FAILED
            result_future = handle.get_result_async()
            if not ros.wait(result_future, remaining()):
                progress.finish()
                _cancel(ros, name, goal_id)
                raise CliError(EXIT_FAILED, f"timeout: no result after {args.timeout:g} s; cancel requested")
            goal_id = None  # done: nothing to cancel any more
        except KeyboardInterrupt:
            if progress is not None:
                progress.finish()
            if goal_id is not None:
                print("interrupted: canceling the goal", file=sys.stderr)
                _cancel(ros, name, goal_id)
            raise
        finally:
            client.destroy()
        progress.finish()
        response = result_future.result()
        result = response.result
        code = result.error_code
        message = result.error_string if args.moveit else result.error_message
        text = f"RESULT {code} {_constant_names(type(result)).get(code, 'UNKNOWN')}"
        if message:
            text += f": {message}"
        if response.status != GoalStatus.STATUS_SUCCEEDED:
            text += f" (goal {status_names.get(response.status, response.status)})"
        print(text, flush=True)
        return EXIT_OK if code == 0 and response.status == GoalStatus.STATUS_SUCCEEDED else EXIT_FAILED


def _cancel(ros: _Ros, action: str, goal_id: Any) -> None:
    """Ask the action server to cancel one goal (by id); wait briefly for the acknowledgement."""
    from action_msgs.srv import CancelGoal

    client = ros.node.create_client(CancelGoal, f"{action}/_action/cancel_goal")
    try:
        request = CancelGoal.Request()
        request.goal_info.goal_id = goal_id
        if not ros.wait(client.call_async(request), _CANCEL_TIMEOUT_S):
            print(f"no answer to the cancel request within {_CANCEL_TIMEOUT_S:g} s", file=sys.stderr)
    finally:
        ros.node.destroy_client(client)


# --------------------------------------------------------------------------------------------------- cancel
def _cmd_cancel(args: argparse.Namespace) -> int:
    from action_msgs.srv import CancelGoal

    action = _action_name(args.node, args.moveit)
    service = f"{action}/_action/cancel_goal"
    with _Ros("cancel") as ros:
        # A zero goal id with a zero stamp cancels every goal of the server (action_msgs semantics).
        response = ros.call(
            CancelGoal, service, CancelGoal.Request(), args.wait, f"no action server {action} — {_HINT}"
        )
    count = len(response.goals_canceling)
    if count == 0:
        # No goal running (the server then answers ERROR_REJECTED): nothing to do is not a failure.
        print(f"0 goals canceling on {action} (no active goal)")
        return EXIT_OK
    print(f"{count} goal{'s' if count != 1 else ''} canceling on {action}")
    if response.return_code != CancelGoal.Response.ERROR_NONE:
        code_name = _constant_names(CancelGoal.Response).get(response.return_code, response.return_code)
        print(f"cancel return code {code_name}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


# ----------------------------------------------------------------------------------------------------- tare
def _cmd_tare(args: argparse.Namespace) -> int:
    from std_srvs.srv import Trigger

    prefix = f"{args.node}/zero_fts/"
    service = prefix + args.frame
    with _Ros("tare") as ros:
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


def _missing_tare_service(ros: _Ros, node: str, service: str) -> str:
    """Why a zero_fts service is missing: no such node, or the frames the node does tare."""
    namespace, _, base = node.rpartition("/")
    namespace = namespace or "/"
    from rclpy.node import NodeNameNonExistentError

    # By node: the graph's plain service list also holds the clients' names (this one's included).
    prefix = f"{node}/zero_fts/"
    try:
        services = ros.node.get_service_names_and_types_by_node(base, namespace)
    except NodeNameNonExistentError:
        return f"no service {service} — {_HINT}"
    frames = sorted(name[len(prefix) :] for name, _ in services if name.startswith(prefix))
    if not frames:
        return f"no service {service}: {node} has no zero_fts services (no F/T sensor configured)"
    return f"no service {service}; {node} tares these sensor frames: {', '.join(frames)}"


# ----------------------------------------------------------------------------------------------- time-scale
_TIME_SCALE = "time_scale_percentage"


def _cmd_time_scale(args: argparse.Namespace) -> int:
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import GetParameters, SetParameters

    missing = f"no parameter services on {args.node} — {_HINT}"
    with _Ros("time_scale") as ros:
        if args.percent is None:
            response = ros.call(
                GetParameters,
                f"{args.node}/get_parameters",
                GetParameters.Request(names=[_TIME_SCALE]),
                args.wait,
                missing,
            )
            value = response.values[0] if response.values else None
            if value is None or value.type != ParameterType.PARAMETER_DOUBLE:
                print(f"{args.node} has no double parameter {_TIME_SCALE}", file=sys.stderr)
                return EXIT_FAILED
            print(f"{_TIME_SCALE} = {value.double_value:g}")
            return EXIT_OK
        parameter = Parameter(
            name=_TIME_SCALE,
            value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=args.percent),
        )
        response = ros.call(
            SetParameters,
            f"{args.node}/set_parameters",
            SetParameters.Request(parameters=[parameter]),
            args.wait,
            missing,
        )
    result = response.results[0] if response.results else None
    if result is None or not result.successful:
        reason = result.reason if result is not None and result.reason else "no reason given"
        print(f"{args.node} refused {_TIME_SCALE} = {args.percent:g}: {reason}", file=sys.stderr)
        return EXIT_FAILED
    print(f"{_TIME_SCALE} = {args.percent:g}")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------------- state
def _state_line(msg: Any) -> str:
    """One compact line of a JointTrajectoryControllerState: stamp, speed scaling, |error| per joint."""
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    errors = [abs(e) for e in msg.error.positions]
    line = f"t {stamp:.3f}  scale {msg.speed_scaling_factor:.3f}"
    if errors:
        worst = max(range(len(errors)), key=errors.__getitem__)
        names = list(msg.joint_names)
        joint = names[worst] if worst < len(names) else str(worst)
        line += f"  |err| [{' '.join(f'{e:.4f}' for e in errors)}] rad  max {errors[worst]:.4f} ({joint})"
    return line


def _cmd_state(args: argparse.Namespace) -> int:
    from control_msgs.msg import JointTrajectoryControllerState
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    topic = f"{args.node}/controller_state"
    received = 0

    def on_state(msg: Any) -> None:
        nonlocal received
        if args.count is None or received < args.count:
            received += 1
            print(_state_line(msg), flush=True)

    with _Ros("state") as ros:
        # Best effort matches both reliable and best-effort publishers.
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
        ros.node.create_subscription(JointTrajectoryControllerState, topic, on_state, qos)
        if not ros.wait_until(lambda: ros.node.count_publishers(topic) > 0, args.wait):
            raise CliError(EXIT_USAGE, f"no publisher on {topic} — {_HINT}")
        while args.count is None or received < args.count:
            ros.executor.spin_once(timeout_sec=_SPIN_STEP_S)
    return EXIT_OK


# ----------------------------------------------------------------------------------------------------- echo
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
    import importlib

    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def _cmd_echo(args: argparse.Namespace) -> int:
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

    with _Ros("echo") as ros:
        if not ros.wait_until(lambda: ros.node.count_publishers(topic) > 0, args.wait):
            raise CliError(EXIT_USAGE, f"no publisher on {topic} — {_HINT}")
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
            ros.executor.spin_once(timeout_sec=_SPIN_STEP_S)
    return EXIT_OK


# ---------------------------------------------------------------------------------------------------- param
def _parameter_text(value: Any) -> str:
    """A ParameterValue as text: the value of its type (lists as YAML flow sequences)."""
    from rcl_interfaces.msg import ParameterType as T

    fields = {
        T.PARAMETER_BOOL: "bool_value",
        T.PARAMETER_INTEGER: "integer_value",
        T.PARAMETER_DOUBLE: "double_value",
        T.PARAMETER_STRING: "string_value",
        T.PARAMETER_BYTE_ARRAY: "byte_array_value",
        T.PARAMETER_BOOL_ARRAY: "bool_array_value",
        T.PARAMETER_INTEGER_ARRAY: "integer_array_value",
        T.PARAMETER_DOUBLE_ARRAY: "double_array_value",
        T.PARAMETER_STRING_ARRAY: "string_array_value",
    }
    if value.type not in fields:
        return "(not set)"
    data = getattr(value, fields[value.type])
    if isinstance(data, str):
        return repr(data) if data == "" or data.strip() != data else data
    if isinstance(data, bool | int | float):
        return str(data).lower() if isinstance(data, bool) else repr(data)
    return "[" + ", ".join(_parameter_text_item(v) for v in list(data)) + "]"


def _parameter_text_item(item: Any) -> str:
    if isinstance(item, bool):
        return str(item).lower()
    return repr(item) if isinstance(item, str | float) else str(item)


def _parameter_value(text: str, type_id: int, name: str) -> Any:
    """VALUE (YAML, as `ros2 param set` reads it) as a ParameterValue of the declared type; CliError
    naming the parameter, the value and the type when it does not fit."""
    import yaml
    from rcl_interfaces.msg import ParameterType as T
    from rcl_interfaces.msg import ParameterValue

    try:
        data = yaml.safe_load(text) if type_id != T.PARAMETER_STRING else text
    except yaml.YAMLError:
        data = text
    value = ParameterValue(type=type_id)
    bad = CliError(EXIT_USAGE, f"{name}: {text!r} is not a {_TYPE_NAMES.get(type_id, 'value')}")
    scalar = {
        T.PARAMETER_BOOL: ("bool_value", lambda v: isinstance(v, bool), bool),
        T.PARAMETER_INTEGER: ("integer_value", lambda v: isinstance(v, int) and not isinstance(v, bool), int),
        T.PARAMETER_DOUBLE: (
            "double_value",
            lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            float,
        ),
        T.PARAMETER_STRING: ("string_value", lambda v: isinstance(v, str), str),
    }
    arrays = {
        T.PARAMETER_BOOL_ARRAY: T.PARAMETER_BOOL,
        T.PARAMETER_INTEGER_ARRAY: T.PARAMETER_INTEGER,
        T.PARAMETER_DOUBLE_ARRAY: T.PARAMETER_DOUBLE,
        T.PARAMETER_STRING_ARRAY: T.PARAMETER_STRING,
    }
    if type_id in scalar:
        field, fits, cast = scalar[type_id]
        if not fits(data):
            raise bad
        setattr(value, field, cast(data))
        return value
    if type_id in arrays:
        field, fits, cast = scalar[arrays[type_id]]
        if not isinstance(data, list) or not all(fits(v) for v in data):
            raise bad
        setattr(value, field.replace("_value", "_array_value"), [cast(v) for v in data])
        return value
    raise bad


_TYPE_NAMES = {
    1: "bool",
    2: "integer",
    3: "double",
    4: "string",
    5: "byte array",
    6: "bool array",
    7: "integer array",
    8: "double array",
    9: "string array",
}


def _cmd_param(args: argparse.Namespace) -> int:
    from rcl_interfaces.msg import Parameter
    from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters, SetParameters

    missing = f"no parameter services on {args.node} — {_HINT}"
    with _Ros("param") as ros:
        if args.action == "list":
            response = ros.call(
                ListParameters, f"{args.node}/list_parameters", ListParameters.Request(), args.wait, missing
            )
            names = sorted(n for n in response.result.names if n.startswith(args.prefix or ""))
            for name in names:
                print(name)
            return EXIT_OK if names or not args.prefix else EXIT_FAILED
        if args.action == "get":
            response = ros.call(
                GetParameters,
                f"{args.node}/get_parameters",
                GetParameters.Request(names=args.names),
                args.wait,
                missing,
            )
            if len(response.values) != len(args.names):  # one unknown name empties the answer
                known = ros.call(
                    ListParameters,
                    f"{args.node}/list_parameters",
                    ListParameters.Request(),
                    args.wait,
                    missing,
                ).result.names
                unknown = [n for n in args.names if n not in known]
                raise CliError(EXIT_FAILED, f"{args.node} has no parameter {', '.join(unknown)}")
            for name, value in zip(args.names, response.values, strict=True):
                print(f"{name} = {_parameter_text(value)}")
            return EXIT_OK
        described = ros.call(
            DescribeParameters,
            f"{args.node}/describe_parameters",
            DescribeParameters.Request(names=[args.name]),
            args.wait,
            missing,
        )
        if not described.descriptors:
            raise CliError(EXIT_FAILED, f"{args.node} has no parameter {args.name}")
        descriptor = described.descriptors[0]
        value = _parameter_value(args.value, descriptor.type, args.name)
        response = ros.call(
            SetParameters,
            f"{args.node}/set_parameters",
            SetParameters.Request(parameters=[Parameter(name=args.name, value=value)]),
            args.wait,
            missing,
        )
    result = response.results[0] if response.results else None
    if result is None or not result.successful:
        reason = result.reason if result is not None and result.reason else "no reason given"
        print(f"{args.node} refused {args.name} = {args.value}: {reason}", file=sys.stderr)
        return EXIT_FAILED
    print(f"{args.name} = {_parameter_text(value)}")
    return EXIT_OK


# ------------------------------------------------------------------------------------------------ lifecycle
def _lifecycle_state(ros: _Ros, node: str, wait_s: float) -> tuple[int, str]:
    from lifecycle_msgs.srv import GetState

    response = ros.call(
        GetState,
        f"{node}/get_state",
        GetState.Request(),
        wait_s,
        f"no lifecycle services on {node} — {_HINT}",
    )
    return response.current_state.id, response.current_state.label


def _lifecycle_transition(ros: _Ros, node: str, label: str, wait_s: float) -> None:
    """Triggers transition `label` (configure, activate, deactivate, cleanup, shutdown); CliError
    naming the transitions available from the current state when it is not one of them."""
    from lifecycle_msgs.srv import ChangeState, GetAvailableTransitions

    missing = f"no lifecycle services on {node} — {_HINT}"
    available = ros.call(
        GetAvailableTransitions,
        f"{node}/get_available_transitions",
        GetAvailableTransitions.Request(),
        wait_s,
        missing,
    ).available_transitions
    matches = [t.transition for t in available if t.transition.label == label]
    if not matches:
        _, state = _lifecycle_state(ros, node, wait_s)
        labels = ", ".join(sorted({t.transition.label for t in available})) or "none"
        raise CliError(
            EXIT_FAILED, f"{node} is {state}: no transition '{label}' from there (available: {labels})"
        )
    response = ros.call(
        ChangeState, f"{node}/change_state", ChangeState.Request(transition=matches[0]), wait_s, missing
    )
    if not response.success:
        _, state = _lifecycle_state(ros, node, wait_s)
        raise CliError(
            EXIT_FAILED, f"{node}: transition '{label}' failed; now {state} (the node's log says why)"
        )


def _cmd_lifecycle(args: argparse.Namespace) -> int:
    with _Ros("lifecycle") as ros:
        if args.action == "set":
            _lifecycle_transition(ros, args.node, args.transition, args.wait)
        state_id, label = _lifecycle_state(ros, args.node, args.wait)
    print(f"{label} [{state_id}]")
    return EXIT_OK


# ------------------------------------------------------------------------------------ controllers (switch)
CONTROLLER_TYPE = "jtac/JointTrajectoryAdmittanceController"


def _controller_joints(ros: _Ros, node: str, wait_s: float) -> list[str]:
    """The controlled joints: the `joints` parameter, else the robot's."""
    from rcl_interfaces.srv import GetParameters

    response = ros.call(
        GetParameters,
        f"{node}/get_parameters",
        GetParameters.Request(names=["joints", "robot"]),
        wait_s,
        f"no parameter services on {node} — {_HINT}",
    )
    if len(response.values) == 2 and list(response.values[0].string_array_value):
        return list(response.values[0].string_array_value)
    from jtac_py import robots

    robot = response.values[1].string_value if len(response.values) == 2 else "fr3"
    return list(robots.joint_names(robot or "fr3"))


def _cmd_list_controllers(args: argparse.Namespace) -> int:
    name = args.node.rpartition("/")[2]
    with _Ros("list_controllers") as ros:
        _, state = _lifecycle_state(ros, args.node, args.wait)
        joints = _controller_joints(ros, args.node, args.wait) if args.verbose else []
    print(f"{name:<40} {CONTROLLER_TYPE:<42} {state}")
    if args.verbose:
        interfaces = [f"{j}/position" for j in joints]
        claimed = interfaces if state == "active" else []
        print(f"  claimed interfaces: {', '.join(claimed) or '(none)'}")
        print(f"  required command interfaces: {', '.join(interfaces)}")
        states = [f"{j}/{k}" for j in joints for k in ("position", "velocity")]
        print(f"  required state interfaces: {', '.join(states)}")
    return EXIT_OK


def _cmd_switch(args: argparse.Namespace) -> int:
    name = args.node.rpartition("/")[2]
    requested = [*args.deactivate, *args.activate]
    if not requested:
        raise CliError(EXIT_USAGE, "nothing to switch: give --activate NAME and/or --deactivate NAME")
    unknown = [n for n in requested if n.rpartition("/")[2] != name]
    if unknown:
        raise CliError(EXIT_FAILED, f"no controller {', '.join(unknown)} (this node runs '{name}')")
    with _Ros("switch") as ros:
        for target, label in (("inactive", "deactivate"), ("active", "activate")):
            if not (args.deactivate if label == "deactivate" else args.activate):
                continue
            _, state = _lifecycle_state(ros, args.node, args.wait)
            if state == target:
                print(f"{name} is already {target}")
                continue
            if label == "activate" and state == "unconfigured":
                raise CliError(EXIT_FAILED, f"{name} is unconfigured: jtac lifecycle set configure first")
            _lifecycle_transition(ros, args.node, label, args.wait)
            print(f"{name}: {state} -> {target}")
    return EXIT_OK


# ----------------------------------------------------------------------------------------------------- plot
def _cmd_plot(args: argparse.Namespace) -> int:
    import zipfile

    import numpy as np

    path = Path(args.record)
    if not path.is_file():
        raise CliError(EXIT_USAGE, f"{path}: no such file")
    try:
        from jtac_py.plots import plot_all
    except ImportError as exc:
        raise CliError(
            EXIT_USAGE, f"plotting needs matplotlib ({exc}): pip install 'jtac-py[plot]'"
        ) from None
    out = Path(args.out) if args.out is not None else path.parent
    try:
        with np.load(path, allow_pickle=False) as record:
            if not isinstance(record, np.lib.npyio.NpzFile):
                raise CliError(EXIT_USAGE, f"{path}: not an .npz archive of recording arrays")
            written = plot_all(record, out, prefix=args.prefix or path.stem, period_us=args.period_us)
    except (KeyError, ValueError, OSError, zipfile.BadZipFile) as exc:
        detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise CliError(EXIT_USAGE, f"{path}: {detail}") from None
    for p in written:
        print(p)
    return EXIT_OK


def _cmd_plot_admittance(args: argparse.Namespace) -> int:
    # jtac_py only: a gain check needs no ROS.
    from jtac_py import admittance

    def six(values: list[float] | None, name: str) -> Any:
        if values is None:
            return None
        if len(values) not in (1, 6):
            raise CliError(EXIT_USAGE, f"--{name} takes 1 or 6 values [x y z rx ry rz], got {len(values)}")
        return values[0] if len(values) == 1 else values

    axes = [True] * 6
    if args.axes is not None:
        unknown = set(args.axes) - set(admittance.AXIS_NAMES)
        if unknown:
            raise CliError(EXIT_USAGE, f"--axes: unknown axis {sorted(unknown)} (x y z rx ry rz)")
        axes = [name in args.axes for name in admittance.AXIS_NAMES]
    try:
        result = admittance.check(
            six(args.mass, "mass"),
            six(args.stiffness, "stiffness"),
            six(args.damping, "damping"),
            args.rate,
            joint_damping_per_s=args.joint_damping,
            selected_axes=axes,
        )
    except ValueError as exc:
        raise CliError(EXIT_USAGE, str(exc)) from None
    print(f"rate {result.rate_hz:g} Hz, joint damping {result.joint_damping_per_s:g}/s: {result.verdict}")
    for a in result.axes:
        print(
            f"  {a.name:>2}: {a.verdict:<14} radius {a.spectral_radius:.6f}  K_max {a.max_stiffness:.6g}  "
            f"wn {a.natural_frequency_rad_s:.4g} rad/s  zeta {a.damping_ratio:.3g}  "
            f"settling {a.settling_time_s:.4g} s (discrete {a.discrete_settling_time_s:.4g} s)"
        )
        if a.message:
            print(f"      {a.message}")
    try:
        written = admittance.plot_step_response(result, args.out, force=args.force, duration_s=args.duration)
    except ImportError as exc:
        raise CliError(
            EXIT_USAGE, f"plotting needs matplotlib ({exc}): pip install 'jtac-py[plot]'"
        ) from None
    except (ValueError, OSError) as exc:
        raise CliError(EXIT_USAGE, str(exc)) from None
    print(written)
    return EXIT_OK if result.accepted else EXIT_FAILED


# --------------------------------------------------------------------------------------------------- doctor
def _robot_ip(text: str) -> str:
    from jtac_py.doctor import robot_address

    try:
        return robot_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _cmd_doctor(args: argparse.Namespace) -> int:
    # jtac_py only: the doctor must run where ROS is not installed.
    from jtac_py import doctor

    report = doctor.run(args.robot_ip, args.seconds)
    print(report.to_json() if args.json else report.format_table(), flush=True)
    return report.exit_code


# --------------------------------------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``jtac`` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="jtac",
        description="Command line of the jtac joint trajectory admittance controller (ROS 2 node).",
        epilog="Exit status: 0 ok; 1 goal failed, request refused or a doctor line failed; 2 bad usage, "
        "file or value, or no node; 130 interrupted.",
    )
    node_help = f"controller node name, optionally /namespace/name (default: {DEFAULT_NODE})"
    # Accepted before and after the command; the subcommand's copy only sets it when given.
    parser.add_argument("--node", type=_node_name, default=f"/{DEFAULT_NODE}", metavar="NAME", help=node_help)
    node_opt = argparse.ArgumentParser(add_help=False)
    node_opt.add_argument(
        "--node", type=_node_name, default=argparse.SUPPRESS, metavar="NAME", help=node_help
    )
    wait_opt = argparse.ArgumentParser(add_help=False)
    wait_opt.add_argument(
        "--wait",
        type=_seconds,
        default=DEFAULT_WAIT_S,
        metavar="S",
        help=f"how long to wait for the node to be discovered [s] (default: {DEFAULT_WAIT_S:g})",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "run",
        parents=[node_opt],
        help="start the controller node (simulated arm, or as a parameters file configures it)",
        description="Start the controller node; it configures and activates itself and runs until "
        "Ctrl-C. Arguments after -- go to the node unchanged.",
    )
    p.add_argument("--params-file", metavar="F", help="ROS parameters file (YAML) for the node")
    p.add_argument("node_args", nargs=argparse.REMAINDER, metavar="-- NODE_ARGS", help="passed to the node")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "send-goal",
        parents=[node_opt, wait_opt],
        help="execute a goal file: progress on stderr, RESULT line on stdout",
        description="Send a goal file (format: jtac_ros/goal_file.py) and wait for the result; print "
        "'RESULT <code> <NAME>: <message>'. Exit 0 only on SUCCESSFUL. Ctrl-C cancels the goal.",
    )
    p.add_argument("file", metavar="FILE.yaml", help="goal file")
    p.add_argument(
        "--moveit",
        action="store_true",
        help="send as control_msgs/FollowJointTrajectory to <node>/moveit/follow_joint_trajectory "
        "(no admittance or thresholds in the file)",
    )
    p.add_argument(
        "--timeout", type=_seconds, metavar="S", help="cancel and exit 1 without a result after S seconds"
    )
    p.set_defaults(func=_cmd_send_goal)

    p = sub.add_parser(
        "cancel",
        parents=[node_opt, wait_opt],
        help="cancel every goal of the node's action",
        description="Cancel every goal of <node>/follow_joint_trajectory (the arm stops along its "
        "stop_accelerations).",
    )
    p.add_argument(
        "--moveit", action="store_true", help="cancel the goals of <node>/moveit/follow_joint_trajectory"
    )
    p.set_defaults(func=_cmd_cancel)

    p = sub.add_parser(
        "tare",
        parents=[node_opt, wait_opt],
        help="zero the F/T sensor of a sensor frame",
        description="Call <node>/zero_fts/FRAME (std_srvs/Trigger): the sensor's current reading "
        "becomes its zero. Keep the arm still and untouched.",
    )
    p.add_argument("frame", metavar="FRAME", help="sensor frame, e.g. fr3_ft_sensor")
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=_SERVICE_TIMEOUT_S,
        metavar="S",
        help=f"how long to wait for the answer [s] (default: {_SERVICE_TIMEOUT_S:g})",
    )
    p.set_defaults(func=_cmd_tare)

    p = sub.add_parser(
        "time-scale",
        parents=[node_opt, wait_opt],
        help="set time_scale_percentage (0-100), or show it",
        description="Set the node's time_scale_percentage: 100 = as planned, 50 = half speed, 0 = halt "
        "along the path. Without PERCENT, print the current value.",
    )
    p.add_argument("percent", type=_percent, nargs="?", metavar="PERCENT", help="0 to 100")
    p.set_defaults(func=_cmd_time_scale)

    p = sub.add_parser(
        "state",
        parents=[node_opt, wait_opt],
        help="echo the controller state, one line per message",
        description="Echo <node>/controller_state: stamp, speed scaling factor, |position error| "
        "per joint and its maximum.",
    )
    p.add_argument(
        "--count", type=_positive_int, metavar="N", help="exit after N messages (default: until Ctrl-C)"
    )
    p.set_defaults(func=_cmd_state)

    p = sub.add_parser(
        "echo",
        parents=[node_opt, wait_opt],
        help="print a topic's messages as YAML",
        description="Print the messages of TOPIC, one YAML document each: controller_state, joint_states, "
        "robot_description, wrench/<frame>/raw or wrench/<frame>/filtered (resolved against the node), or an "
        "absolute name.",
    )
    p.add_argument(
        "topic", metavar="TOPIC", help="e.g. controller_state, joint_states, wrench/fr3_ft_sensor/raw"
    )
    p.add_argument(
        "--count", type=_positive_int, metavar="N", help="exit after N messages (default: until Ctrl-C)"
    )
    p.set_defaults(func=_cmd_echo)

    p = sub.add_parser(
        "param",
        help="list, get or set the node's parameters",
        description="The node's parameters (params/jtac_parameters.yaml): list [PREFIX], get NAME..., "
        "set NAME VALUE (VALUE in YAML, converted to the declared type; the node validates it and a refusal "
        "prints its reason, exit 1).",
    )
    param_sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    q = param_sub.add_parser(
        "list", parents=[node_opt, wait_opt], help="parameter names (optionally those starting with PREFIX)"
    )
    q.add_argument("prefix", nargs="?", metavar="PREFIX")
    q = param_sub.add_parser("get", parents=[node_opt, wait_opt], help="print NAME = VALUE")
    q.add_argument("names", nargs="+", metavar="NAME")
    q = param_sub.add_parser("set", parents=[node_opt, wait_opt], help="set NAME to VALUE")
    q.add_argument("name", metavar="NAME")
    q.add_argument("value", metavar="VALUE", help="YAML: 50, 0.5, true, [4.0, 4.0, ...], text")
    p.set_defaults(func=_cmd_param)

    p = sub.add_parser(
        "lifecycle",
        help="show the node's lifecycle state, or trigger a transition",
        description="get: print the lifecycle state (unconfigured, inactive, active, finalized). set "
        "TRANSITION: configure, activate, deactivate, cleanup or shutdown, then print the new state.",
    )
    lifecycle_sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    lifecycle_sub.add_parser("get", parents=[node_opt, wait_opt], help="print the current state")
    q = lifecycle_sub.add_parser("set", parents=[node_opt, wait_opt], help="trigger a transition")
    q.add_argument(
        "transition",
        choices=["configure", "activate", "deactivate", "cleanup", "shutdown"],
        metavar="TRANSITION",
    )
    p.set_defaults(func=_cmd_lifecycle)

    p = sub.add_parser(
        "list-controllers",
        parents=[node_opt, wait_opt],
        help="the controller this node runs: name, type, state",
        description=f"Print '<name> {CONTROLLER_TYPE} <state>' like `ros2 control list_controllers`; "
        "--verbose adds the claimed and required interfaces (<joint>/position).",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="print the interfaces too")
    p.set_defaults(func=_cmd_list_controllers)

    p = sub.add_parser(
        "switch",
        parents=[node_opt, wait_opt],
        help="activate or deactivate the controller (its lifecycle)",
        description="Deactivate, then activate, the named controllers (this node's name) through the "
        "node's lifecycle. A goal running at deactivation ends INVALID_STATE (-9).",
    )
    p.add_argument("--activate", nargs="+", default=[], metavar="NAME", help="controllers to activate")
    p.add_argument("--deactivate", nargs="+", default=[], metavar="NAME", help="controllers to deactivate")
    p.set_defaults(func=_cmd_switch)

    p = sub.add_parser(
        "plot",
        help="plot a controller recording (.npz): tracking, wrench, deflection, timing",
        description="Write <prefix>_tracking.png, _wrench.png, _deflection.png and _timing.png "
        "(jtac_py.plots.plot_all) and print their paths.",
    )
    p.add_argument("record", metavar="RECORD.npz", help="recording saved by the controller")
    p.add_argument("--out", metavar="DIR", help="output folder (default: the recording's folder)")
    p.add_argument("--prefix", help="file name prefix (default: the recording's name)")
    p.add_argument(
        "--period-us",
        type=float,
        default=1000.0,
        metavar="US",
        help="nominal controller period for the timing plot [µs] (default: 1000)",
    )
    p.set_defaults(func=_cmd_plot)

    p = sub.add_parser(
        "plot-admittance",
        help="is an admittance set stable at a rate? plot its continuous vs discrete step response",
        description="Run goal intake's stability check (jtac integrates M·ë + D·ė + K·e = F with "
        "semi-implicit Euler at update_rate; docs/admittance.md) on one tip's set, print each axis's "
        "verdict, spectral radius, largest stable stiffness, natural frequency, damping ratio and settling "
        "time, and plot the predicted step response beside the discrete one. Exit 1 when goal intake "
        "would reject the set.",
    )
    p.add_argument("--mass", type=float, nargs="+", required=True, metavar="M", help="[kg, kg·m²]: 1 or 6")
    p.add_argument("--stiffness", type=float, nargs="+", required=True, metavar="K", help="[N/m, N·m/rad]")
    p.add_argument(
        "--damping", type=float, nargs="+", metavar="D", help="[N·s/m, N·m·s/rad] (default: critical)"
    )
    p.add_argument(
        "--rate", type=float, default=1000.0, metavar="HZ", help="update_rate [Hz] (default: 1000)"
    )
    p.add_argument("--joint-damping", type=float, default=0.0, metavar="PER_S", help="[1/s] (default: 0)")
    p.add_argument(
        "--axes", nargs="+", metavar="AXIS", help="compliant axes among x y z rx ry rz (default: all)"
    )
    p.add_argument("--force", type=float, default=1.0, metavar="F", help="step [N, N·m] (default: 1)")
    p.add_argument(
        "--duration", type=_seconds, metavar="S", help="plotted time [s] (default: 2 settling times)"
    )
    p.add_argument(
        "--out", default="admittance_step.png", metavar="FILE", help="image (default: admittance_step.png)"
    )
    p.set_defaults(func=_cmd_plot_admittance)

    from jtac_py.doctor import DEFAULT_SECONDS  # standard library only: cheap, and no ROS

    p = sub.add_parser(
        "doctor",
        help="can this machine hold the 1 kHz loop to a Franka robot? what to fix (no ROS needed)",
        description="Check the kernel, SCHED_FIFO and memory-lock limits, CPU governor and isolation, the "
        "route to the robot, and measure wake-up lateness at 1 kHz; print one line per check with the "
        "fix of every line that is not ok (docs/doctor.md). Exit 0 when no line failed, 1 otherwise. "
        "Sends nothing to the robot.",
    )
    p.add_argument(
        "--robot-ip",
        type=_robot_ip,
        metavar="IP",
        help="the robot's address (a literal IP): check the route and link to it (ip route get, /sys)",
    )
    p.add_argument(
        "--seconds",
        type=_seconds,
        default=DEFAULT_SECONDS,
        metavar="S",
        help=f"duration of each of the two timing measurements [s] (default: {DEFAULT_SECONDS:g}; 0 skips "
        "them)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    p.set_defaults(func=_cmd_doctor)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``jtac``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except CliError as exc:
        print(f"jtac {args.command}: {exc.message}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `jtac state | head`: the reader left; exit quietly (and keep Python from complaining at exit).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
