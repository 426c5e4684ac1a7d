"""The ROS 2 controller node: jtac's native loop behind actions, services, topics and parameters.

rclcpp and ros2_control are on no registry here, so this rclpy lifecycle node *is* the
ros2_control-style wrapper: it owns the hardware and the loop (``jtac_py.controller.Controller``) and
has a controller's lifecycle. No algorithm lives here: goals are converted (``conversions``) and handed
to the core, whose validation, stitching, stops and results are what clients see.

Interfaces (``~`` = the node's name, default ``joint_trajectory_admittance_controller``):

=====================================  ==========================================================
``~/follow_joint_trajectory``          action ``jtac/action/FollowJointTrajectoryWithAdmittance``
``~/moveit/follow_joint_trajectory``   action ``control_msgs/action/FollowJointTrajectory`` (stock
                                       MoveIt: controller name ``<node>/moveit``, action_ns
                                       ``follow_joint_trajectory``); no admittance
``~/zero_fts/<sensor_frame>``          service ``std_srvs/srv/Trigger``, one per sensor frame
``~/controller_state``                 ``control_msgs/msg/JointTrajectoryControllerState``
``joint_states``                       ``sensor_msgs/msg/JointState``
``~/wrench/<sensor_frame>/raw``,       ``geometry_msgs/msg/WrenchStamped``, sensor frame
``~/wrench/<sensor_frame>/filtered``
parameters                             every entry of ``params/jtac_parameters.yaml``
=====================================  ==========================================================

Lifecycle: parameters are declared at construction (read_only ones refused at run time in every
state); configure builds the hardware and the loop and creates the interfaces; activate starts the
threads; deactivate stops them at once — a goal still running ends ABORTED with INVALID_STATE (-9)
and no hold command is sent; cleanup releases everything.

Goals are accepted at the action level and answered with a result (so a refused goal carries its
code and message, which an action-level rejection could not): INVALID_GOAL / INVALID_JOINTS / … from
the core, INVALID_STATE while the node is not active. Every accepted goal gets exactly one result,
after the arm has stopped.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import rclpy
from rcl_interfaces.msg import SetParametersResult
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.lifecycle import LifecycleNode, State, TransitionCallbackReturn
from rclpy.parameter import Parameter

from jtac_py import _native
from jtac_py.controller import Controller
from jtac_py.hardware import SimulatedArm
from jtac_py.parameters import ParameterError, default_schema
from jtac_ros import conversions
from jtac_ros import parameters as ros_parameters

DEFAULT_NODE_NAME = "joint_trajectory_admittance_controller"
ADMITTANCE_ACTION = "~/follow_joint_trajectory"
MOVEIT_ACTION = "~/moveit/follow_joint_trajectory"

ResultCode = _native.ResultCode


def _now_s(node: LifecycleNode) -> float:
    return node.get_clock().now().nanoseconds * 1e-9


class JtacNode(LifecycleNode):
    """The controller node (see the module docstring)."""

    def __init__(self, node_name: str = DEFAULT_NODE_NAME, **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self._schema = default_schema()
        self._values = ros_parameters.declare_parameters(self, self._schema)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        for name in ros_parameters.undeclared_overrides(self):
            self.get_logger().warning(f"parameter '{name}' is not a jtac parameter: ignored (a typo?)")
        self._group = ReentrantCallbackGroup()
        self._controller: Controller | None = None
        self._active = False
        self._entities: list[Any] = []  # servers, services, timers made by configure
        self._topics: dict[str, Any] = {}
        self._goal_lock = threading.Lock()
        self._goals_in_flight = 0

    # ---------------------------------------------------------------------------------- lifecycle
    def on_configure(self, state: State) -> TransitionCallbackReturn:
        try:
            self._controller = self._make_controller()
        except (ParameterError, ValueError, RuntimeError) as error:
            self.get_logger().error(f"configure failed: {error}")
            self._controller = None
            return TransitionCallbackReturn.FAILURE
        from control_msgs.action import FollowJointTrajectory
        from control_msgs.msg import JointTrajectoryControllerState
        from geometry_msgs.msg import WrenchStamped
        from jtac.action import FollowJointTrajectoryWithAdmittance
        from sensor_msgs.msg import JointState
        from std_srvs.srv import Trigger

        self._entities = [
            ActionServer(
                self,
                FollowJointTrajectoryWithAdmittance,
                ADMITTANCE_ACTION,
                execute_callback=self._execute_admittance,
                goal_callback=lambda _goal: GoalResponse.ACCEPT,
                cancel_callback=lambda _goal: CancelResponse.ACCEPT,
                callback_group=self._group,
            ),
            ActionServer(
                self,
                FollowJointTrajectory,
                MOVEIT_ACTION,
                execute_callback=self._execute_moveit,
                goal_callback=lambda _goal: GoalResponse.ACCEPT,
                cancel_callback=lambda _goal: CancelResponse.ACCEPT,
                callback_group=self._group,
            ),
        ]
        for frame in self._controller.sensor_frames:
            self._entities.append(
                self.create_service(
                    Trigger,
                    f"~/zero_fts/{frame}",
                    lambda request, response, frame=frame: self._zero_fts(frame, response),
                    callback_group=self._group,
                )
            )
        self._topics = {
            "state": self.create_lifecycle_publisher(
                JointTrajectoryControllerState, "~/controller_state", 10
            ),
            "joints": self.create_lifecycle_publisher(JointState, "joint_states", 10),
        }
        for frame in self._controller.sensor_frames:
            for kind in ("raw", "filtered"):
                self._topics[f"{kind}:{frame}"] = self.create_lifecycle_publisher(
                    WrenchStamped, f"~/wrench/{frame}/{kind}", 10
                )
        rate = int(self._values["state_publish_rate"])
        self._entities.append(self.create_timer(1.0 / rate, self._publish_state, callback_group=self._group))
        c = self._controller
        self.get_logger().info(
            f"configured: {len(c.joint_names)} joints, sensors {c.sensor_frames}, "
            f"update_rate {c.update_rate_hz} Hz, hardware {self._values['hardware']}"
        )
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: State) -> TransitionCallbackReturn:
        try:
            if self._controller is None:  # a real arm's motion ended at the last deactivation
                self._controller = self._make_controller()
            self._controller.start()
        except (RuntimeError, ValueError) as error:
            self.get_logger().error(f"activate failed: {error}")
            return TransitionCallbackReturn.FAILURE
        self._active = True
        return super().on_activate(state)

    def on_deactivate(self, state: State) -> TransitionCallbackReturn:
        self._active = False
        if self._controller is not None:
            # The core resolves the pending goal at once (ABORTED, INVALID_STATE) and commands nothing more.
            self._controller.stop()
            if self._values["hardware"] == "franka":
                # A real arm's motion ends with the loop; the next activation starts a new one.
                close = getattr(self._controller.hardware, "close", None)
                if close is not None:
                    close()
                self._controller = None
        return super().on_deactivate(state)

    def on_cleanup(self, state: State) -> TransitionCallbackReturn:
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: State) -> TransitionCallbackReturn:
        self._active = False
        if self._controller is not None:
            self._controller.stop()
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: State) -> TransitionCallbackReturn:
        self._active = False
        if self._controller is not None:
            self._controller.stop()
        return TransitionCallbackReturn.SUCCESS

    def _release(self) -> None:
        for entity in self._entities:
            if isinstance(entity, ActionServer):
                entity.destroy()
            elif hasattr(entity, "cancel"):  # a timer
                entity.cancel()
                self.destroy_timer(entity)
            else:
                self.destroy_service(entity)
        self._entities = []
        for publisher in self._topics.values():
            self.destroy_lifecycle_publisher(publisher)
        self._topics = {}
        self._controller = None

    def _make_controller(self) -> Controller:
        values = self._values
        if values["hardware"] == "franka":
            from jtac_py.hardware import FrankaArm

            # Connects to the control unit at robot_ip; the motion starts with Controller.start().
            arm = FrankaArm(values["robot_ip"], robot=values["robot"], late_commands=values["late_commands"])
        else:
            arm = SimulatedArm(values["robot"], clock="realtime")
        # Only what differs from the schema's defaults counts as set: the simulated arm then supplies
        # its F/T sensor (admittance on) unless ft_sensor_name was given.
        defaults = self._schema.defaults(values)
        given = {name: value for name, value in values.items() if defaults.get(name, object()) != value}
        return Controller(arm, given)

    # ---------------------------------------------------------------------------------- parameters
    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        """Schema validation (read_only refused in every state), then applied to the running core at
        its next cycle boundary; a value the core refuses is refused here too."""
        current = dict(self._values)
        updates = {p.name: p.value for p in params if p.name in self._schema.expand(current)}
        if not updates:
            return SetParametersResult(successful=True)
        try:
            new_values = self._schema.validate_update(current, updates)
            if self._controller is not None:
                self._controller.set_parameters(updates)
        except ParameterError as error:
            return SetParametersResult(successful=False, reason=str(error))
        self._values = new_values
        return SetParametersResult(successful=True)

    # ---------------------------------------------------------------------------------- services
    def _zero_fts(self, frame: str, response: Any) -> Any:
        controller = self._controller
        if controller is None or not self._active:
            response.success = False
            response.message = "the controller is not active"
            return response
        try:
            tare = controller.zero_fts(frame)
        except (RuntimeError, ValueError, TimeoutError) as error:
            response.success = False
            response.message = str(error)
            return response
        response.success = tare.ok
        response.message = tare.message
        return response

    # ---------------------------------------------------------------------------------- state topics
    def _publish_state(self) -> None:
        controller = self._controller
        if controller is None or not self._active:
            return
        state = controller.state
        if state is None:
            return
        stamp = self.get_clock().now().to_msg()
        names = controller.joint_names
        self._topics["state"].publish(
            conversions.controller_state_msg(state, names, stamp, speed_scaling_factor=state.time_scale)
        )
        self._topics["joints"].publish(conversions.joint_state_msg(state, names, stamp))
        if controller.sensor_frames:
            frame = controller.sensor_frames[0]  # the loop reports tip 0's sensor
            self._topics[f"raw:{frame}"].publish(conversions.wrench_stamped(state.wrench_raw, frame, stamp))
            self._topics[f"filtered:{frame}"].publish(
                conversions.wrench_stamped(state.wrench_filtered, frame, stamp)
            )

    # ---------------------------------------------------------------------------------- goals
    def _execute_admittance(self, goal_handle: Any) -> Any:
        from jtac.action import FollowJointTrajectoryWithAdmittance

        def convert(controller: Controller) -> dict[str, Any]:
            return conversions.core_goal_from_admittance_goal(
                goal_handle.request,
                controller_joint_names=controller.joint_names,
                ros_now_s=_now_s(self),
                controller_now_s=controller.controller_time(),
            )

        return self._execute(goal_handle, FollowJointTrajectoryWithAdmittance, convert)

    def _execute_moveit(self, goal_handle: Any) -> Any:
        from control_msgs.action import FollowJointTrajectory

        def convert(controller: Controller) -> dict[str, Any]:
            path, goal = self._default_tolerances(controller)
            return conversions.core_goal_from_follow_joint_trajectory(
                goal_handle.request,
                controller_joint_names=controller.joint_names,
                default_path_tolerance_rad=path,
                default_goal_tolerance_rad=goal,
                ros_now_s=_now_s(self),
                controller_now_s=controller.controller_time(),
            )

        return self._execute(goal_handle, FollowJointTrajectory, convert)

    def _default_tolerances(self, controller: Controller) -> tuple[dict[str, float], dict[str, float]]:
        from jtac_py.parameters import default_joint_tolerances

        path, goal = default_joint_tolerances(self._values)
        names = controller.joint_names
        return dict(zip(names, path, strict=True)), dict(zip(names, goal, strict=True))

    def _execute(self, goal_handle: Any, action_type: Any, convert: Any) -> Any:
        controller = self._controller
        if controller is None or not self._active:
            return self._finish(
                goal_handle, action_type, ResultCode.INVALID_STATE, "the controller is not active"
            )
        try:
            core_goal = convert(controller)
        except conversions.GoalConversionError as error:
            return self._finish(goal_handle, action_type, error.code, error.message)
        for note in core_goal.pop("notes", []):
            self.get_logger().warning(note)
        try:
            handle = controller.submit(core_goal)
        except (ValueError, TypeError, RuntimeError) as error:
            return self._finish(goal_handle, action_type, ResultCode.INVALID_GOAL, str(error))
        period = 1.0 / float(self._values["state_publish_rate"])
        canceled = False
        while not handle.done():
            if goal_handle.is_cancel_requested and not canceled:
                handle.cancel()  # a minimum-time stop; the result comes at rest
                canceled = True
            state = controller.state
            if state is not None and goal_handle.is_active:
                feedback = action_type.Feedback()
                conversions.fill_feedback(
                    feedback, state, controller.joint_names, self.get_clock().now().to_msg()
                )
                goal_handle.publish_feedback(feedback)
            time.sleep(period)
        result = handle.result(timeout=0.0)
        return self._finish(goal_handle, action_type, result.code, result.message, result.canceled)

    def _finish(
        self,
        goal_handle: Any,
        action_type: Any,
        code: Any,
        message: str,
        canceled: bool = False,
    ) -> Any:
        code_value = int(code)
        # control_msgs knows only 0 … -5: result_for_action maps the rest and keeps our text.
        result = conversions.result_for_action(action_type, code_value, message)
        if canceled and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif code_value == int(ResultCode.SUCCESSFUL) and not canceled:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the node (configured and activated unless ``--no-autostart``) until SIGINT/SIGTERM."""
    args = list(sys.argv if argv is None else argv)
    autostart = "--no-autostart" not in args
    args = [a for a in args if a != "--no-autostart"]
    context = rclpy.context.Context()
    rclpy.init(args=args, context=context)
    node = None
    executor = MultiThreadedExecutor(num_threads=8, context=context)
    try:
        node = JtacNode(context=context)
        executor.add_node(node)
        if autostart:
            node.trigger_configure()
            node.trigger_activate()
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ParameterError as error:
        print(f"jtac: {error}", file=sys.stderr)
        return 2
    finally:
        if node is not None:
            if node._controller is not None:
                node.trigger_shutdown()
            executor.remove_node(node)
            node.destroy_node()
        executor.shutdown()
        if context.ok():
            rclpy.shutdown(context=context)
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["ADMITTANCE_ACTION", "DEFAULT_NODE_NAME", "MOVEIT_ACTION", "JtacNode", "main"]
