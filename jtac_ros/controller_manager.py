"""ros2_control's controller manager services, answered for the one controller the node is.

rclcpp and ros2_control are on no registry here, so the node stands in for the manager MoveIt and
the ros2 control tools talk to: ``controller_manager/list_controllers`` reports the node as one
controller (its lifecycle state, interfaces and update rate), and
``controller_manager/switch_controller`` drives the node's lifecycle with ros2_control's strictness.
Both answer in every lifecycle state (a manager answers for unconfigured and inactive controllers
too), in the node's namespace (/controller_manager/... with the default one, where MoveIt and tools
look).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn

from jtac_ros.goal_log import GoalLog

__all__ = [
    "CONTROLLER_TYPE",
    "LIST_CONTROLLERS_SERVICE",
    "SWITCH_CONTROLLER_SERVICE",
    "ControllerManagerStandIn",
]

LIST_CONTROLLERS_SERVICE = "controller_manager/list_controllers"
SWITCH_CONTROLLER_SERVICE = "controller_manager/switch_controller"
#: The controller's type as list_controllers reports it (ros2_control's <package>/<class> form).
CONTROLLER_TYPE = "jtac/JointTrajectoryAdmittanceController"


class ControllerManagerStandIn:
    """list_controllers and switch_controller for the node's one controller.

    node: the lifecycle node (its name, state and transitions are the controller's);
    joint_names(): the controller's joints now; update_rate_hz(): the update_rate parameter [Hz];
    log: the node's goal log, which says every switch."""

    def __init__(
        self,
        node: LifecycleNode,
        *,
        joint_names: Callable[[], list[str]],
        update_rate_hz: Callable[[], int],
        log: GoalLog,
        callback_group: Any,
    ) -> None:
        self._node = node
        self._joint_names = joint_names
        self._update_rate_hz = update_rate_hz
        self._log = log
        self._serve(callback_group)

    def _serve(self, callback_group: Any) -> None:
        try:
            from controller_manager_msgs.srv import ListControllers, SwitchController
        except ImportError:
            self._node.get_logger().warning(
                "controller_manager_msgs is not installed: no controller_manager services (make setup)"
            )
            return
        self._node.create_service(
            ListControllers, LIST_CONTROLLERS_SERVICE, self._list_controllers, callback_group=callback_group
        )
        self._node.create_service(
            SwitchController,
            SWITCH_CONTROLLER_SERVICE,
            self._switch_controller,
            callback_group=callback_group,
        )

    def _state(self) -> str:
        return self._node._state_machine.current_state[1]

    def _list_controllers(self, request: Any, response: Any) -> Any:
        from controller_manager_msgs.msg import ControllerState

        state = self._state()
        joints = self._joint_names()
        commands = [f"{joint}/position" for joint in joints]
        response.controller = [
            ControllerState(
                name=self._node.get_name(),
                state=state,
                type=CONTROLLER_TYPE,
                is_async=True,  # its own native thread at update_rate, not a manager's loop
                update_rate=int(self._update_rate_hz()),
                claimed_interfaces=commands if state == "active" else [],
                required_command_interfaces=commands,
                required_state_interfaces=[
                    f"{j}/{kind}" for j in joints for kind in ("position", "velocity")
                ],
                is_chainable=False,
                is_chained=False,
            )
        ]
        return response

    def _switch_controller(self, request: Any, response: Any) -> Any:
        """Deactivates, then activates, this controller through its lifecycle, with ros2_control's
        strictness: STRICT (and AUTO, FORCE_AUTO: a single controller has no chain to resolve) fails on an
        unknown name or a controller not in the state the transition starts from; BEST_EFFORT (and 0,
        as the controller manager reads it) skips those."""
        name = self._node.get_name()
        strict = request.strictness in (
            type(request).STRICT,
            getattr(type(request), "AUTO", -1),
            getattr(type(request), "FORCE_AUTO", -1),
        )

        def answer(ok: bool, message: str) -> Any:
            response.ok = ok
            if hasattr(response, "message"):
                response.message = message
            self._log.log("info" if ok else "warning", f"switch_controller: {message}")
            return response

        unknown = sorted({*request.activate_controllers, *request.deactivate_controllers} - {name})
        if unknown and strict:
            return answer(
                False, f"no controller {', '.join(unknown)} (this manager holds '{name}'); nothing switched"
            )
        done: list[str] = []
        for wanted, start, transition in (
            (request.deactivate_controllers, "active", self._node.trigger_deactivate),
            (request.activate_controllers, "inactive", self._node.trigger_activate),
        ):
            if name not in wanted:
                continue
            failure = self._transition(name, start, transition, strict, done)
            if failure:
                return answer(False, failure)
        if unknown:
            done.append(f"skipped unknown {', '.join(unknown)}")
        return answer(True, "; ".join(done) or "nothing to switch")

    def _transition(
        self, name: str, start: str, transition: Callable[[], Any], strict: bool, done: list[str]
    ) -> str:
        """One transition from `start`; what went wrong ("" when it went through or was skipped)."""
        state = self._state()
        target = "inactive" if start == "active" else "active"
        if state == target and not strict:
            done.append(f"'{name}' already {target}")
            return ""
        if state != start:
            return f"'{name}' is {state}, not {start}: cannot make it {target}"
        if transition() != TransitionCallbackReturn.SUCCESS:
            return f"'{name}' failed to become {target} (now {self._state()}; the log says why)"
        done.append(f"'{name}' {start} -> {target}")
        return ""
