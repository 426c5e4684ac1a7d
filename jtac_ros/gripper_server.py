"""The Franka Hand's ROS interfaces: ``~/gripper_cmd`` (control_msgs/action/GripperCommand, the name
and type of ros2_controllers' gripper_action_controller) and franka_ros2's per-command interfaces
``~/gripper/move``, ``~/gripper/grasp``, ``~/gripper/homing`` (franka_msgs actions) and
``~/gripper/stop`` (std_srvs/Trigger).

No algorithm lives here: each goal becomes one command of ``Controller.gripper``
(``jtac_py.gripper.Gripper``), whose checks, preemption and results are what clients see.

GripperCommand is mapped as franka_ros2's franka_gripper maps it (gripper_action_server.cpp):
``command.position`` is one finger's joint position, so the width is ``2 * position``; a width
within 0.1 mm of the current one succeeds at once; a wider one is a *move* at ``DEFAULT_SPEED_M_S``,
a narrower one a *grasp* at ``max_effort`` newtons (``DEFAULT_FORCE_N`` when ``max_effort`` is 0 or
less: MoveIt sends 0 for "no limit") with ``DEFAULT_EPSILON_M`` both ways. The result's ``position``
is the finger position at the end (width / 2, the command's unit), ``reached_goal`` is the command's
success, ``stalled`` says the fingers stopped on something (a move blocked, a grasp that holds or
stopped wider than its band) and ``effort`` is the grasp force while the fingers hold an object.

Goal rules, as for the trajectory actions: goals are taken only while the node is active and the
arm has a hand (a rejection's reason is in the log; the action level carries none). A new goal on
any of the gripper actions preempts the running one, which ends ABORTED (ros2_controllers marks it
canceled, which rclpy allows only after a cancel request), and a cancel stops the hand (the goal
ends CANCELED).
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node

from jtac_py.controller import Controller
from jtac_ros.action_qos import action_qos
from jtac_ros.goal_log import GoalLog

__all__ = [
    "DEFAULT_EPSILON_M",
    "DEFAULT_FORCE_N",
    "DEFAULT_SPEED_M_S",
    "GRIPPER_ACTION",
    "GRIPPER_GRASP_ACTION",
    "GRIPPER_HOMING_ACTION",
    "GRIPPER_MOVE_ACTION",
    "GRIPPER_STOP_SERVICE",
    "HAND_LIMIT_TEXT",
    "SAME_WIDTH_M",
    "GripperServer",
    "hand_limit_parameters",
]

GRIPPER_ACTION = "~/gripper_cmd"
GRIPPER_MOVE_ACTION = "~/gripper/move"
GRIPPER_GRASP_ACTION = "~/gripper/grasp"
GRIPPER_HOMING_ACTION = "~/gripper/homing"
GRIPPER_STOP_SERVICE = "~/gripper/stop"

#: franka_gripper's defaults for GripperCommand goals (its parameters default_speed and
#: default_grasp_epsilon.inner/outer): the width rate [m/s] and the grasp band either way [m].
DEFAULT_SPEED_M_S = 0.1
DEFAULT_EPSILON_M = 0.005
#: A GripperCommand grasp's force when max_effort is 0 or less [N]: the Gripper's default grasp force.
DEFAULT_FORCE_N = 20.0
#: A GripperCommand width this close to the current one succeeds without a command [m] (franka_gripper's
#: kSamePositionThreshold).
SAME_WIDTH_M = 1e-4
#: How long a goal waits for its stop after a cancel before it reports what it has [s].
_STOP_WAIT_S = 5.0


#: What each hand limit parameter is, with its unit.
HAND_LIMIT_TEXT = {
    "hand_limits.max_width_m": "stroke, the widest opening between the fingers [m]",
    "hand_limits.max_speed_m_s": "fastest width rate [m/s] (half of it per finger)",
    "hand_limits.max_force_n": "peak grasp force [N]",
    "hand_limits.continuous_force_n": "continuous grasp force [N]",
}


def hand_limit_parameters(limits: Any) -> dict[str, float]:
    """The read-only parameters the node publishes for a hand's limits (jtac_py.gripper.HandLimits)."""
    return {
        "hand_limits.max_width_m": float(limits.max_width_m),
        "hand_limits.max_speed_m_s": float(limits.max_speed_m_s),
        "hand_limits.max_force_n": float(limits.max_force_n),
        "hand_limits.continuous_force_n": float(limits.continuous_force_n),
    }


@dataclass
class _Command:
    """What one goal asks of the gripper: the call, and how to describe it in the log."""

    name: str  # "move" | "grasp" | "home"
    issue: Callable[[Any], Any]  # gripper -> GripperHandle (raises ValueError on a bad value)
    text: str  # "grasp 0.0300 m at 20 N"
    width_m: float = math.nan  # the target width [m] (nan for home)
    force_n: float = 0.0  # the grasp force [N] (0 for a move)
    epsilon_outer_m: float = 0.0  # the band above the target [m] (grasp)


class GripperServer:
    """The hand's actions and stop service (see the module docstring).

    node: the ROS node; active_controller(): the Controller while the node is active, else None;
    lifecycle_state(): the node's state's label (for a rejection's log line); feedback_period_s(): the
    feedback period [s]; log: the node's goal log."""

    def __init__(
        self,
        node: Node,
        *,
        active_controller: Callable[[], Controller | None],
        lifecycle_state: Callable[[], str],
        feedback_period_s: Callable[[], float],
        log: GoalLog,
    ) -> None:
        self._node = node
        self._active_controller = active_controller
        self._lifecycle_state = lifecycle_state
        self._feedback_period_s = feedback_period_s
        self._log = log
        self._lock = threading.Lock()
        self._handles: dict[bytes, Any] = {}  # action goal UUID -> its running GripperHandle

    def create_interfaces(self, callback_group: Any) -> list[Any]:
        """The action servers and the stop service, created at configure; the node destroys them."""
        from control_msgs.action import GripperCommand
        from std_srvs.srv import Trigger

        servers: list[Any] = [
            self._server(GripperCommand, GRIPPER_ACTION, self._execute_gripper_command, callback_group),
            self._node.create_service(
                Trigger, GRIPPER_STOP_SERVICE, self._on_stop, callback_group=callback_group
            ),
        ]
        try:
            from franka_msgs.action import Grasp, Homing, Move
        except ImportError:  # our franka_msgs subset is built by make setup; without it, GripperCommand only
            self._node.get_logger().warning(
                "franka_msgs is not installed: ~/gripper/move, grasp and homing are not served"
            )
            return servers
        servers += [
            self._server(Move, GRIPPER_MOVE_ACTION, self._execute_move, callback_group),
            self._server(Grasp, GRIPPER_GRASP_ACTION, self._execute_grasp, callback_group),
            self._server(Homing, GRIPPER_HOMING_ACTION, self._execute_homing, callback_group),
        ]
        return servers

    def _server(self, action_type: Any, name: str, execute: Callable, callback_group: Any) -> ActionServer:
        short = name.removeprefix("~/")
        return ActionServer(
            self._node,
            action_type,
            name,
            execute_callback=execute,
            goal_callback=lambda _goal: self._on_goal_request(short),
            cancel_callback=self._on_cancel_request,
            callback_group=callback_group,
            **action_qos(),
        )

    # ---------------------------------------------------------------------------------- requests
    def _gripper(self) -> Any | None:
        """The hand's Gripper while the node is active and the arm has a hand, else None."""
        controller = self._active_controller()
        if controller is None:
            return None
        gripper = controller.gripper
        return gripper if gripper.present else None

    def _unavailable(self) -> str:
        """Why gripper goals are refused now ("" when they are not)."""
        controller = self._active_controller()
        if controller is None:
            return f"the controller is not active (lifecycle state '{self._lifecycle_state()}')"
        if not controller.gripper.present:
            return "the arm has no hand (parameter hand is false)"
        return ""

    def _on_goal_request(self, action: str) -> GoalResponse:
        reason = self._unavailable()
        if not reason:
            return GoalResponse.ACCEPT
        self._log.log("warning", f"goal on {action} rejected: {reason}")
        return GoalResponse.REJECT

    def _on_cancel_request(self, goal_handle: Any) -> CancelResponse:
        """Stops the hand at once when the goal's command is the one running (a Stop is how libfranka
        ends a running command); the goal then ends CANCELED with the width it reached."""
        with self._lock:
            handle = self._handles.get(bytes(goal_handle.goal_id.uuid))
        gripper = self._gripper()
        if handle is not None and not handle.done() and gripper is not None:
            gripper.stop()
        return CancelResponse.ACCEPT

    def _on_stop(self, request: Any, response: Any) -> Any:
        """~/gripper/stop (std_srvs/Trigger, franka_gripper's): stops the running command; success
        once the hand has stopped."""
        gripper = self._gripper()
        if gripper is None:
            response.success, response.message = False, self._unavailable()
            return response
        try:
            result = gripper.stop().result(timeout=_STOP_WAIT_S)
        except TimeoutError:
            response.success = False
            response.message = f"the hand did not confirm the stop within {_STOP_WAIT_S:g} s"
            return response
        response.success = result.success
        response.message = result.message or f"stopped at {result.width_m:.4f} m"
        return response

    # ---------------------------------------------------------------------------------- GripperCommand
    def _execute_gripper_command(self, goal_handle: Any) -> Any:
        from control_msgs.action import GripperCommand

        command = goal_handle.request.command
        gripper = self._gripper()
        result = GripperCommand.Result()
        label = self._label(goal_handle, "gripper_cmd")
        if gripper is None:
            return self._refuse(goal_handle, result, label, self._unavailable())
        width_m = 2.0 * float(command.position)
        limit_m = gripper.limits.max_width_m
        if not (math.isfinite(width_m) and 0.0 <= width_m <= limit_m):
            return self._refuse(
                goal_handle,
                result,
                label,
                f"command.position {command.position!r} m is a width of {width_m!r} m, outside "
                f"0..{limit_m:g} m (position is one finger's joint: width / 2)",
            )
        current_m = gripper.state.width_m
        if abs(width_m - current_m) < SAME_WIDTH_M:
            self._fill_gripper_result(result, current_m, reached=True, stalled=gripper.state.is_grasped)
            self._log.log("info", f"{label}: width {width_m:.4f} m: already there ({current_m:.4f} m)")
            goal_handle.succeed()
            return result
        return self._run(
            goal_handle, GripperCommand, label, self._gripper_command(command, width_m, current_m)
        )

    @staticmethod
    def _gripper_command(command: Any, width_m: float, current_m: float) -> _Command:
        """Opening (or not closing) is a move; closing a grasp at max_effort (franka_gripper's rule)."""
        if not width_m < current_m:  # nan (unknown width) moves, as franka_gripper compares
            return _Command(
                "move",
                lambda g: g.move(width_m, DEFAULT_SPEED_M_S),
                f"move to {width_m:.4f} m",
                width_m,
            )
        effort = float(command.max_effort)
        force_n = DEFAULT_FORCE_N if effort <= 0.0 else effort  # nan goes on to be refused
        return _Command(
            "grasp",
            lambda g: g.grasp(
                width_m,
                DEFAULT_SPEED_M_S,
                force_n,
                epsilon_inner_m=DEFAULT_EPSILON_M,
                epsilon_outer_m=DEFAULT_EPSILON_M,
            ),
            f"grasp {width_m:.4f} m at {force_n:g} N",
            width_m,
            force_n,
            DEFAULT_EPSILON_M,
        )

    @staticmethod
    def _fill_gripper_result(
        result: Any, width_m: float, *, reached: bool, stalled: bool, effort_n: float = 0.0
    ) -> None:
        result.position = width_m / 2.0 if math.isfinite(width_m) else math.nan
        result.effort = effort_n
        result.reached_goal = reached
        result.stalled = stalled

    # ---------------------------------------------------------------------------------- franka_msgs
    def _execute_move(self, goal_handle: Any) -> Any:
        from franka_msgs.action import Move

        goal = goal_handle.request
        command = _Command(
            "move", lambda g: g.move(goal.width, goal.speed), f"move to {goal.width:.4f} m", goal.width
        )
        return self._run_franka(goal_handle, Move, "gripper/move", command)

    def _execute_grasp(self, goal_handle: Any) -> Any:
        from franka_msgs.action import Grasp

        goal = goal_handle.request
        command = _Command(
            "grasp",
            lambda g: g.grasp(
                goal.width,
                goal.speed,
                goal.force,
                epsilon_inner_m=goal.epsilon.inner,
                epsilon_outer_m=goal.epsilon.outer,
            ),
            f"grasp {goal.width:.4f} m at {goal.force:g} N",
            goal.width,
            goal.force,
            goal.epsilon.outer,
        )
        return self._run_franka(goal_handle, Grasp, "gripper/grasp", command)

    def _execute_homing(self, goal_handle: Any) -> Any:
        from franka_msgs.action import Homing

        command = _Command("home", lambda g: g.home(), "home")
        return self._run_franka(goal_handle, Homing, "gripper/homing", command)

    def _run_franka(self, goal_handle: Any, action_type: Any, action: str, command: _Command) -> Any:
        return self._run(goal_handle, action_type, self._label(goal_handle, action), command)

    # ---------------------------------------------------------------------------------- one goal
    def _run(self, goal_handle: Any, action_type: Any, label: str, command: _Command) -> Any:
        """Issues the command (preempting the running one), follows it with feedback, passes a cancel
        on as a stop, and ends the goal from the command's GripperResult."""
        result = action_type.Result()
        gripper = self._gripper()
        if gripper is None:  # deactivated between acceptance and execution
            return self._refuse(goal_handle, result, label, self._unavailable())
        try:
            handle = command.issue(gripper)
        except ValueError as error:
            return self._refuse(goal_handle, result, label, str(error))
        key = bytes(goal_handle.goal_id.uuid)
        with self._lock:
            self._handles[key] = handle
        try:
            if goal_handle.is_cancel_requested:  # canceled while it was issued
                gripper.stop()
            self._follow(goal_handle, action_type, gripper, handle)
        finally:
            with self._lock:
                self._handles.pop(key, None)
        outcome = handle.result(timeout=0.0)
        return self._finish(goal_handle, result, label, command, outcome, gripper.state)

    def _follow(self, goal_handle: Any, action_type: Any, gripper: Any, handle: Any) -> None:
        """Until the command is done: feedback (the width) at the feedback period."""
        period_s = self._feedback_period_s()
        while not handle.done():
            if goal_handle.is_active:
                goal_handle.publish_feedback(self._feedback(action_type, gripper.state.width_m))
            with contextlib.suppress(TimeoutError):
                handle.result(timeout=period_s)

    @staticmethod
    def _feedback(action_type: Any, width_m: float) -> Any:
        message = action_type.Feedback()
        if hasattr(message, "current_width"):  # franka_msgs
            message.current_width = float(width_m)
        else:  # GripperCommand: the finger position, as the command gives it
            message.position = float(width_m) / 2.0
        return message

    def _finish(
        self, goal_handle: Any, result: Any, label: str, command: _Command, outcome: Any, state: Any
    ) -> Any:
        from jtac_py.gripper import GripperResultCode

        code = outcome.code
        text = f"{label}: {command.text}: {code.name.lower()}"
        detail = f"{outcome.width_m:.4f} m in {outcome.duration_s:.2f} s"
        text += f" ({outcome.message}; {detail})" if outcome.message else f" ({detail})"
        self._fill_result(result, command, outcome, state)
        if code is GripperResultCode.SUCCEEDED:
            self._log.log("info", text)
            goal_handle.succeed()
        elif code is GripperResultCode.PREEMPTED and goal_handle.is_cancel_requested:
            self._log.log("info", text.replace(": preempted", ": canceled", 1))
            goal_handle.canceled()
        elif code is GripperResultCode.PREEMPTED:  # a newer command, or the node deactivated
            self._log.log("info", text)
            goal_handle.abort()
        else:
            # Nothing held or an object in the way is the task's outcome; a failure of the hand is an error.
            ordinary = code in (GripperResultCode.NOT_GRASPED, GripperResultCode.BLOCKED)
            self._log.log("warning" if ordinary else "error", text)
            goal_handle.abort()
        return result

    @staticmethod
    def _fill_result(result: Any, command: _Command, outcome: Any, state: Any) -> None:
        from jtac_py.gripper import GripperResultCode

        code = outcome.code
        if hasattr(result, "success"):  # franka_msgs
            result.success = outcome.success
            result.error = outcome.message or ("" if outcome.success else code.name.lower())
            return
        held = command.name == "grasp" and outcome.success
        # Stopped on something: a move blocked, a grasp holding, or one stopped wider than its band.
        stalled = (
            code is GripperResultCode.BLOCKED
            or held
            or (
                code is GripperResultCode.NOT_GRASPED
                and outcome.width_m > command.width_m + command.epsilon_outer_m
            )
        )
        GripperServer._fill_gripper_result(
            result,
            outcome.width_m,
            reached=outcome.success,
            stalled=stalled,
            effort_n=command.force_n if held else 0.0,
        )

    def _refuse(self, goal_handle: Any, result: Any, label: str, reason: str) -> Any:
        """A goal that issued nothing: ABORTED, the reason in the log (and franka_msgs' error)."""
        self._log.log("warning", f"{label}: refused: {reason}")
        if hasattr(result, "error"):
            result.success, result.error = False, reason
        else:
            result.position, result.reached_goal = math.nan, False
        goal_handle.abort()
        return result

    @staticmethod
    def _label(goal_handle: Any, action: str) -> str:
        return f"gripper goal {bytes(goal_handle.goal_id.uuid).hex()[:8]} ({action})"

    # ---------------------------------------------------------------------------------- joint states
    @staticmethod
    def finger_positions(controller: Controller) -> tuple[list[str], list[float]] | None:
        """The finger joints' names and positions (width / 2 each) for joint_states, None without a
        hand. The names follow the arm's prefix, as robot_description's fingers do."""
        gripper = controller.gripper
        if not gripper.present:
            return None
        prefix = controller.joint_names[0].rsplit("_joint", 1)[0]
        half_m = float(gripper.state.width_m) / 2.0
        return [f"{prefix}_finger_joint1", f"{prefix}_finger_joint2"], [half_m, half_m]
