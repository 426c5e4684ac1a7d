"""The ROS 2 controller node: jtac's native loop behind actions, services, topics and parameters.

rclcpp and ros2_control are on no registry here, so this rclpy lifecycle node *is* the
ros2_control-style wrapper: it owns the hardware and the loop (``jtac_py.controller.Controller``) and
has a controller's lifecycle. No algorithm lives here: goals are converted (``conversions``) and handed
to the core, whose validation, stitching, stops and results are what clients see.

Interfaces (``~`` = the node's name, default ``joint_trajectory_admittance_controller``):

=========================================  ==========================================================
``~/follow_joint_trajectory``              action ``jtac/action/FollowJointTrajectoryWithAdmittance``
``~/moveit/follow_joint_trajectory``       action ``control_msgs/action/FollowJointTrajectory`` (stock
                                           MoveIt: controller name ``<node>``, action_ns
                                           ``moveit/follow_joint_trajectory``); no admittance
``~/zero_fts/<sensor_frame>``              service ``std_srvs/srv/Trigger``, one per sensor frame
``~/joint_trajectory``                     subscription ``trajectory_msgs/msg/JointTrajectory``: JTC's
                                           command topic (replaces the running trajectory from its
                                           stamp through the same stitching; empty = stop); while a
                                           stream is open, an action chunk (below)
``~/stream``                               service ``std_srvs/srv/SetBool``: opens (true) / closes
                                           (false) a stream on the controller
``~/controller_state``                     ``control_msgs/msg/JointTrajectoryControllerState``
``joint_states``                           ``sensor_msgs/msg/JointState``
``robot_description``                      ``std_msgs/msg/String`` (transient local): the URDF the node
                                           loaded, joints named as in ``joint_states``
``controller_manager/list_controllers``    service ``controller_manager_msgs/srv/ListControllers``
``controller_manager/switch_controller``   service ``controller_manager_msgs/srv/SwitchController``:
                                           ros2_control's manager for this one controller (lifecycle)
``~/wrench/<sensor_frame>/raw``,           ``geometry_msgs/msg/WrenchStamped``, sensor frame: every
``~/wrench/<sensor_frame>/filtered``       tip's reading and its tared, filtered wrench
``~/wrench/<sensor_frame>/input``          subscription ``geometry_msgs/msg/WrenchStamped``, for each
                                           tip whose sensor is not the arm's: its readings
``~/gripper_cmd``                          action ``control_msgs/action/GripperCommand``: the Franka
                                           Hand (parameter ``hand``), franka_ros2's mapping
``~/gripper/move``, ``grasp``, ``homing``  actions ``franka_msgs/action/Move``, ``Grasp``, ``Homing``
``~/gripper/stop``                         service ``std_srvs/srv/Trigger``
``~/record/start``                         service ``rcl_interfaces/srv/SetParameters`` (its parameters
                                           ``path``, ``per_goal`` are the request): records to .mcap
``~/record/stop``                          service ``std_srvs/srv/Trigger``: the recording complete
parameters                                 every entry of ``params/jtac_parameters.yaml``
=========================================  ==========================================================

Lifecycle: parameters are declared at construction (read_only ones refused at run time in every
state); configure builds the hardware and the loop and creates the interfaces; activate starts the
threads; deactivate stops them at once — a goal still running ends ABORTED with INVALID_STATE (-9)
and no hold command is sent; cleanup releases everything.

The node is the lifecycle and the wiring: it owns the Controller, its parameters and the state
topics, and hands each group of interfaces to a part with a narrow view of it (the active
Controller, its lifecycle state, a few parameter values, the goal log):

- ``goal_servers.GoalServers``: both actions and JTC's command topic (goals, results, feedback);
- ``stream_server.StreamServer``: ``~/stream`` and the chunks on ``~/joint_trajectory`` while a
  stream is open (docs/ros_node.md);
- ``controller_manager.ControllerManagerStandIn``: list_controllers and switch_controller;
- ``gripper_server.GripperServer``: the hand's actions and stop service;
- ``record_server.RecordServer``: ``~/record/start`` and ``~/record/stop`` (``jtac record``);
- ``goal_log.GoalLog``: the one rate-limited log every part writes its goal lines to.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.action import ActionServer
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.lifecycle import LifecycleNode, State, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.time import Time as RosTime

from jtac_py.arms import build_arm
from jtac_py.controller import Controller
from jtac_py.parameters import ParameterError, default_joint_tolerances, default_schema
from jtac_ros import parameters as ros_parameters
from jtac_ros.controller_manager import (
    CONTROLLER_TYPE,
    LIST_CONTROLLERS_SERVICE,
    SWITCH_CONTROLLER_SERVICE,
    ControllerManagerStandIn,
)
from jtac_ros.goal_log import GoalLog
from jtac_ros.goal_servers import ADMITTANCE_ACTION, MOVEIT_ACTION, GoalServers
from jtac_ros.gripper_server import (
    GRIPPER_ACTION,
    HAND_LIMIT_TEXT,
    GripperServer,
    hand_limit_parameters,
)
from jtac_ros.record_server import RECORD_START_SERVICE, RECORD_STOP_SERVICE, RecordServer
from jtac_ros.spin import spin_node
from jtac_ros.state_messages import controller_state_msg, joint_state_msg, wrench_stamped
from jtac_ros.stream_server import STREAM_SERVICE, StreamServer

DEFAULT_NODE_NAME = "joint_trajectory_admittance_controller"
"""The node's name unless one is given: its interfaces are ``/joint_trajectory_admittance_controller/...``."""
TRAJECTORY_TOPIC = "~/joint_trajectory"
ROBOT_DESCRIPTION_TOPIC = "robot_description"


class JtacNode(LifecycleNode):
    """The controller node (see the module docstring)."""

    def __init__(self, node_name: str = DEFAULT_NODE_NAME, **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self._schema = default_schema()
        try:
            self._values = ros_parameters.declare_parameters(self, self._schema)
        except BaseException:
            # A node left behind would keep its name's /rosout publisher: rcl routes the logs of every
            # later node of that name through it, and they would be lost once this one is collected.
            self.destroy_node()
            raise
        self.add_on_set_parameters_callback(self._on_set_parameters)
        for name in ros_parameters.undeclared_overrides(self):
            self.get_logger().warning(f"parameter '{name}' is not a jtac parameter: ignored (a typo?)")
        self._group = ReentrantCallbackGroup()
        self._controller: Controller | None = None
        self._active = False
        self._entities: list[Any] = []  # servers, services, timers made by configure
        self._topics: dict[str, Any] = {}
        self._goal_log = GoalLog(self.get_logger())
        self._goals = GoalServers(
            self,
            active_controller=self._active_controller,
            lifecycle_state=self._lifecycle_state,
            feedback_period_s=lambda: 1.0 / float(self._values["state_publish_rate"]),
            default_tolerances=lambda: default_joint_tolerances(self._values),
            log=self._goal_log,
        )
        self._streams = StreamServer(self, active_controller=self._active_controller, log=self._goal_log)
        self._gripper = GripperServer(
            self,
            active_controller=self._active_controller,
            lifecycle_state=self._lifecycle_state,
            feedback_period_s=lambda: 1.0 / float(self._values["state_publish_rate"]),
            log=self._goal_log,
        )
        self._recorder = RecordServer(self, active_controller=self._active_controller)
        if self._values["hand"]:
            self._declare_hand_limits()
        self._controller_manager = ControllerManagerStandIn(
            self,
            joint_names=self._joint_names,
            update_rate_hz=lambda: int(self._values["update_rate"]),
            log=self._goal_log,
            callback_group=self._group,
        )

    def _declare_hand_limits(self) -> None:
        """The Franka Hand's limits as read-only parameters (constants of the hand, not settings: a
        parameters file's value for them is ignored)."""
        from rcl_interfaces.msg import ParameterDescriptor

        from jtac_py.gripper import FRANKA_HAND

        for name, value in hand_limit_parameters(FRANKA_HAND).items():
            descriptor = ParameterDescriptor(
                description=f"The Franka Hand's {HAND_LIMIT_TEXT[name]} (its datasheet; fixed)",
                read_only=True,
            )
            self.declare_parameter(name, value, descriptor, ignore_override=True)

    # ---------------------------------------------------------------------------------- the parts' view
    def _active_controller(self) -> Controller | None:
        """The Controller while the node is active, else None (goals, chunks and tares are refused)."""
        return self._controller if self._active else None

    def _lifecycle_state(self) -> str:
        return self._state_machine.current_state[1]

    def _joint_names(self) -> list[str]:
        if self._controller is not None:
            return self._controller.joint_names
        from jtac_py import robots

        return list(self._values["joints"]) or list(robots.joint_names(self._values["robot"]))

    # ---------------------------------------------------------------------------------- lifecycle
    def on_configure(self, state: State) -> TransitionCallbackReturn:
        try:
            self._controller = self._make_controller()
        except (ParameterError, ValueError, RuntimeError) as error:
            self.get_logger().error(f"configure failed: {error}")
            self._controller = None
            return TransitionCallbackReturn.FAILURE
        from trajectory_msgs.msg import JointTrajectory

        self._entities = [
            *self._goals.create_action_servers(self._group),
            *self._gripper.create_interfaces(self._group),
            self.create_subscription(
                JointTrajectory, TRAJECTORY_TOPIC, self._on_trajectory_msg, 10, callback_group=self._group
            ),
            self._streams.create_service(self._group),
            *self._recorder.create_services(self._group),
        ]
        self._publish_robot_description(self._controller)
        self._create_sensor_interfaces(self._controller)
        self._create_state_topics(self._controller)
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
        self.get_logger().info("active: goals are accepted")
        return super().on_activate(state)

    def on_deactivate(self, state: State) -> TransitionCallbackReturn:
        self._active = False
        self._streams.forget()  # Controller.stop() closes it
        self._recorder.stop()  # the file complete before the loop stops
        self.get_logger().info("inactive: goals are rejected until the next activation")
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
        self._streams.forget()
        self._recorder.stop()
        if self._controller is not None:
            self._controller.stop()
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: State) -> TransitionCallbackReturn:
        self._active = False
        self._streams.forget()
        self._recorder.stop()
        if self._controller is not None:
            self._controller.stop()
        return TransitionCallbackReturn.SUCCESS

    def _release(self) -> None:
        from rclpy.publisher import Publisher
        from rclpy.subscription import Subscription

        for entity in self._entities:
            if isinstance(entity, ActionServer):
                entity.destroy()
            elif isinstance(entity, Subscription):
                self.destroy_subscription(entity)
            elif isinstance(entity, Publisher):
                self.destroy_publisher(entity)
            elif hasattr(entity, "cancel"):  # a timer
                entity.cancel()
                self.destroy_timer(entity)
            else:
                self.destroy_service(entity)
        self._entities = []
        for publisher in self._topics.values():
            self.destroy_lifecycle_publisher(publisher)
        self._topics = {}
        self._streams.forget()
        self._controller = None

    def _make_controller(self) -> Controller:
        values = self._values
        # Connects to the control unit at robot_ip for a real arm; the motion starts with start().
        arm = build_arm(values)
        # Only what differs from the schema's defaults counts as set: the simulated arm then supplies
        # its F/T sensor (admittance on) unless ft_sensor_name was given.
        defaults = self._schema.defaults(values)
        given = {name: value for name, value in values.items() if defaults.get(name, object()) != value}
        return Controller(arm, given)

    # ------------------------------------------------------------------------- configure's interfaces
    def _publish_robot_description(self, controller: Controller) -> None:
        """The description the core loaded, latched for robot_state_publisher and RViz (which read it
        from this topic) and for late subscribers; published once, as robot_state_publisher does.
        It is the arm's own URDF (the simulated FR3 with its tool), else robot_description /
        urdf_path / the built-in robot (jtac_py.config)."""
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String

        latched = QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
        )
        publisher = self.create_publisher(String, ROBOT_DESCRIPTION_TOPIC, latched)
        urdf = getattr(controller.hardware, "urdf_xml", None)
        publisher.publish(String(data=urdf if urdf else self._configured_description(controller)))
        self._entities.append(publisher)

    @staticmethod
    def _configured_description(controller: Controller) -> str:
        """robot_description / urdf_path / the built-in robot; with a hand on a FrankaArm (which keeps
        no URDF of its own) the built-in robot with the hand, so the fingers of joint_states have
        links in RViz."""
        from jtac_py import robots
        from jtac_py.config import robot_description

        values = controller.values
        if values["hand"] and not values["robot_description"] and not values["urdf_path"]:
            return robots.urdf_xml(values["robot"], hand=True)
        return robot_description(values)

    def _create_sensor_interfaces(self, controller: Controller) -> None:
        """~/zero_fts/<frame> for every sensor frame, and ~/wrench/<frame>/input for each tip whose
        sensor is not the arm's: it reads what its sensor's driver publishes there (remap the
        driver's topic onto it); sensor-data QoS takes reliable and best-effort publishers."""
        from geometry_msgs.msg import WrenchStamped
        from rclpy.qos import qos_profile_sensor_data
        from std_srvs.srv import Trigger

        for frame in controller.sensor_frames:
            self._entities.append(
                self.create_service(
                    Trigger,
                    f"~/zero_fts/{frame}",
                    lambda request, response, frame=frame: self._zero_fts(frame, response),
                    callback_group=self._group,
                )
            )
        for frame, source in controller.wrench_sources.items():
            if source == "external":
                self._entities.append(
                    self.create_subscription(
                        WrenchStamped,
                        f"~/wrench/{frame}/input",
                        lambda msg, frame=frame: self._on_wrench_input(frame, msg),
                        qos_profile_sensor_data,
                        callback_group=self._group,
                    )
                )

    def _create_state_topics(self, controller: Controller) -> None:
        from control_msgs.msg import JointTrajectoryControllerState
        from geometry_msgs.msg import WrenchStamped
        from sensor_msgs.msg import JointState

        self._topics = {
            "state": self.create_lifecycle_publisher(
                JointTrajectoryControllerState, "~/controller_state", 10
            ),
            "joints": self.create_lifecycle_publisher(JointState, "joint_states", 10),
        }
        for frame in controller.sensor_frames:
            for kind in ("raw", "filtered"):
                self._topics[f"{kind}:{frame}"] = self.create_lifecycle_publisher(
                    WrenchStamped, f"~/wrench/{frame}/{kind}", 10
                )

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

    # ---------------------------------------------------------------------------------- sensors
    def _zero_fts(self, frame: str, response: Any) -> Any:
        controller = self._active_controller()
        if controller is None:
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

    def _on_wrench_input(self, frame: str, msg: Any) -> None:
        """A reading of the external sensor of `frame`'s tip, handed to the loop (taken at its next
        cycle). A reading stamped in another frame is dropped: the controller would read it in the
        wrong axes."""
        controller = self._active_controller()
        if controller is None:
            return
        if msg.header.frame_id and msg.header.frame_id != frame:
            self._goal_log.note(
                f"~/wrench/{frame}/input: readings in frame '{msg.header.frame_id}' are dropped; "
                f"the tip's sensor measures in '{frame}'"
            )
            return
        f, t = msg.wrench.force, msg.wrench.torque
        controller.feed_wrench(frame, (f.x, f.y, f.z, t.x, t.y, t.z))

    # ---------------------------------------------------------------------------------- ~/joint_trajectory
    def _on_trajectory_msg(self, msg: Any) -> None:
        """JTC's command topic (the goal servers), or while a stream is open an action chunk (the
        stream server)."""
        controller = self._active_controller()
        if controller is None:
            self._goal_log.log("warning", "~/joint_trajectory message ignored: the controller is not active")
        elif self._streams.stream is not None:
            self._streams.on_chunk_msg(controller, msg)
        else:
            self._goals.on_trajectory_msg(controller, msg)

    # ---------------------------------------------------------------------------------- state topics
    def _publish_state(self) -> None:
        self._goals.watch_topic_goals()
        self._goal_log.flush()
        controller = self._active_controller()
        state = controller.state if controller is not None else None
        if state is None:
            return
        self._streams.read_clocks(controller)
        stamp = self.get_clock().now().to_msg()
        stream_stamp_ns = self._streams.state_stamp_ns(state.time)
        if stream_stamp_ns is not None:
            self._streams.watch()
            stamp = RosTime(nanoseconds=stream_stamp_ns).to_msg()
        names = controller.joint_names
        self._topics["state"].publish(
            controller_state_msg(
                state,
                names,
                stamp,
                speed_scaling_factor=state.time_scale,
                time_from_start_s=self._goals.time_from_start_s(state),
            )
        )
        fingers = GripperServer.finger_positions(controller)
        self._topics["joints"].publish(joint_state_msg(state, names, stamp, extra=fingers))
        for tip, frame in enumerate(controller.sensor_frames):
            self._topics[f"raw:{frame}"].publish(wrench_stamped(state.wrenches_raw[tip], frame, stamp))
            self._topics[f"filtered:{frame}"].publish(
                wrench_stamped(state.wrenches_filtered[tip], frame, stamp)
            )


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the node (configured and activated unless ``--no-autostart``) until SIGINT/SIGTERM."""
    args = list(sys.argv if argv is None else argv)
    autostart = "--no-autostart" not in args

    def start(node: JtacNode) -> None:
        if autostart:
            node.trigger_configure()
            node.trigger_activate()

    def shut_down(node: JtacNode) -> None:
        if node._controller is not None:
            node.trigger_shutdown()

    return spin_node(
        [a for a in args if a != "--no-autostart"],
        lambda context: JtacNode(context=context),
        start=start,
        shut_down=shut_down,
    )


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "ADMITTANCE_ACTION",
    "CONTROLLER_TYPE",
    "DEFAULT_NODE_NAME",
    "GRIPPER_ACTION",
    "LIST_CONTROLLERS_SERVICE",
    "MOVEIT_ACTION",
    "RECORD_START_SERVICE",
    "RECORD_STOP_SERVICE",
    "ROBOT_DESCRIPTION_TOPIC",
    "STREAM_SERVICE",
    "SWITCH_CONTROLLER_SERVICE",
    "TRAJECTORY_TOPIC",
    "GoalLog",
    "JtacNode",
    "main",
]
