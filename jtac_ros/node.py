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
parameters                                 every entry of ``params/jtac_parameters.yaml``
=========================================  ==========================================================

Lifecycle: parameters are declared at construction (read_only ones refused at run time in every
state); configure builds the hardware and the loop and creates the interfaces; activate starts the
threads; deactivate stops them at once — a goal still running ends ABORTED with INVALID_STATE (-9)
and no hold command is sent; cleanup releases everything.

Goals are accepted at the action level while the node is active and answered with a result (so a
refused goal carries its code and message, which an action-level rejection could not): INVALID_GOAL /
INVALID_JOINTS / … from the core. While the node is not active a goal is rejected at the action level,
as JTC does, with the reason in the log. Every accepted goal gets exactly one result, after the arm
has stopped. Every result is logged with the goal's id, code and message (success and cancel at INFO,
refusals and stops at WARN, aborts at ERROR), rate-limited so a storm of goals cannot flood the log.

Streaming (docs/ros_node.md): ``~/stream`` true opens ``Controller.stream()``; until it is closed, goals
end INVALID_STATE and every ``~/joint_trajectory`` message is an action chunk handed to the same
``Stream.send_chunk``: ``header.stamp`` = the ROS time of the observation the chunk was computed from
(zero = on arrival), each point's ``time_from_start`` = its time after that observation. The stamp is
put on the controller clock through the offset between the two clocks that the node keeps
(``clock_offset.ClockOffset``). Closed (the default), the topic keeps JTC's semantics.

Length: over 600 lines because it is the one place where every ROS interface meets the Controller
(actions, services, topics, parameters, lifecycle); the conversions, the parameter descriptors and the
clock offset live in their own modules.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import rclpy
from rcl_interfaces.msg import SetParametersResult
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.lifecycle import LifecycleNode, State, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.time import Time as RosTime

from jtac_py import _native
from jtac_py.controller import Controller
from jtac_py.hardware import SimulatedArm
from jtac_py.parameters import ParameterError, default_schema
from jtac_ros import conversions
from jtac_ros import parameters as ros_parameters
from jtac_ros.clock_offset import ClockOffset
from jtac_ros.trajectory_time import TrajectoryTime

DEFAULT_NODE_NAME = "joint_trajectory_admittance_controller"
ADMITTANCE_ACTION = "~/follow_joint_trajectory"
MOVEIT_ACTION = "~/moveit/follow_joint_trajectory"
TRAJECTORY_TOPIC = "~/joint_trajectory"
#: std_srvs/SetBool: true opens a stream (~/joint_trajectory messages become action chunks), false
#: closes it (the arm brakes to rest first) and the topic is JTC's command topic again.
STREAM_SERVICE = "~/stream"
#: How long closing a stream waits for the arm to brake to rest [s] (a stop within stop_accelerations
#: from the FR3's top speeds takes under a second).
#: Below this commanded speed of every joint [rad/s] a stream that runs out of chunks ends at rest (an
#: INFO line) rather than braking (a WARN line).
STREAM_REST_SPEED_RAD_S = 1e-3
ROBOT_DESCRIPTION_TOPIC = "robot_description"
#: ros2_control's controller manager services, served for the one controller this node is (in the
#: node's namespace: /controller_manager/... with the default one, where MoveIt and tools look).
LIST_CONTROLLERS_SERVICE = "controller_manager/list_controllers"
SWITCH_CONTROLLER_SERVICE = "controller_manager/switch_controller"
#: The controller's type as list_controllers reports it (ros2_control's <package>/<class> form).
CONTROLLER_TYPE = "jtac/JointTrajectoryAdmittanceController"

ResultCode = _native.ResultCode
EventType = _native.EventType
EventDetail = _native.EventDetail

#: Goal log lines: a burst this long passes at once, then this many per second; the rest are counted
#: and reported in one line (a 30 Hz goal storm must not bury everything else in the log).
LOG_BURST_LINES = 20
LOG_LINES_PER_S = 5.0
#: A note about an ignored field (MoveIt sends the same on every goal) is logged once per this [s].
NOTE_REPEAT_S = 60.0


def _now_s(node: LifecycleNode) -> float:
    return node.get_clock().now().nanoseconds * 1e-9


class GoalLog:
    """The node's goal log: one line per outcome, rate-limited by a token bucket (LOG_BURST_LINES,
    then LOG_LINES_PER_S). Suppressed lines are counted and reported in one WARN line as soon as the
    bucket allows (flush() is called from the state timer too), so a storm shows its size without
    flooding, and nothing is dropped silently."""

    def __init__(
        self,
        logger: Any,
        burst: int = LOG_BURST_LINES,
        lines_per_s: float = LOG_LINES_PER_S,
        clock: Any = time.monotonic,
    ) -> None:
        self._logger = logger
        self._burst = float(burst)
        self._rate = float(lines_per_s)
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()
        self._suppressed = 0
        self._suppressed_since = 0.0
        self._notes: dict[str, float] = {}
        self._lock = threading.Lock()

    def _take(self) -> bool:
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    def _report_suppressed(self) -> None:
        if self._suppressed and self._take():
            elapsed = self._clock() - self._suppressed_since
            self._logger.warning(
                f"{self._suppressed} goal log lines suppressed in the last {elapsed:.1f} s "
                f"(more than {self._rate:g} per second)"
            )
            self._suppressed = 0

    def log(self, level: str, text: str) -> bool:
        """`level`: 'info', 'warning' or 'error'. False when rate-limited (counted)."""
        with self._lock:
            self._report_suppressed()
            if not self._take():
                if not self._suppressed:
                    self._suppressed_since = self._clock()
                self._suppressed += 1
                return False
            # One call site per severity: rclpy refuses a call site whose severity changes.
            if level == "info":
                self._logger.info(text)
            elif level == "warning":
                self._logger.warning(text)
            else:
                self._logger.error(text)
            return True

    def note(self, text: str) -> None:
        """A WARN note, once per NOTE_REPEAT_S for the same text."""
        now = self._clock()
        with self._lock:
            last = self._notes.get(text)
            if last is not None and now - last < NOTE_REPEAT_S:
                return
            self._notes[text] = now
            if len(self._notes) > 1000:
                self._notes = {k: v for k, v in self._notes.items() if now - v < NOTE_REPEAT_S}
        self.log("warning", text)

    def flush(self) -> None:
        with self._lock:
            self._report_suppressed()


class _Tracked:
    """A goal handed to the core: its jtac_py handle, where it came from and what was logged."""

    def __init__(self, handle: Any, label: str) -> None:
        self.handle = handle
        self.label = label
        self.stop_logged = False
        self.stopped_by_topic = False


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
        self._trajectory_time = TrajectoryTime()
        self._tracked_lock = threading.Lock()
        self._tracked: dict[int, _Tracked] = {}  # core goal id -> goals not finished yet
        self._topic_goals: list[_Tracked] = []  # from ~/joint_trajectory: watched by the state timer
        self._action_goals: dict[bytes, _Tracked] = {}  # action goal UUID -> its goal in the core
        # Streaming: the open stream (None = JTC semantics on ~/joint_trajectory), the ROS − controller
        # clock offset, and what the stream's counters showed at the last look (for the log).
        self._stream: Any = None
        self._stream_lock = threading.RLock()
        self._clock_offset = ClockOffset()
        self._stream_seen = {"stale": 0, "brakes": 0, "own": 0}  # the stream's counters at the last look
        self._stream_stale_logged = 0  # stale chunks logged (or sent) by the node since the last look
        self._stream_own_brakes = 0  # brakes the node asked for (an empty message, closing)
        self._stream_last_message_ns = 0  # ROS time [ns] of the last chunk's arrival
        self._stream_last_end_s = 0.0  # controller time [s] of the last chunk's last point
        self._serve_controller_manager()

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
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from std_srvs.srv import SetBool, Trigger
        from trajectory_msgs.msg import JointTrajectory

        self._entities = [
            ActionServer(
                self,
                FollowJointTrajectoryWithAdmittance,
                ADMITTANCE_ACTION,
                execute_callback=self._execute_admittance,
                goal_callback=lambda _goal: self._on_goal_request("follow_joint_trajectory"),
                cancel_callback=self._on_cancel_request,
                callback_group=self._group,
            ),
            ActionServer(
                self,
                FollowJointTrajectory,
                MOVEIT_ACTION,
                execute_callback=self._execute_moveit,
                goal_callback=lambda _goal: self._on_goal_request("moveit/follow_joint_trajectory"),
                cancel_callback=self._on_cancel_request,
                callback_group=self._group,
            ),
            self.create_subscription(
                JointTrajectory, TRAJECTORY_TOPIC, self._on_trajectory_msg, 10, callback_group=self._group
            ),
            self.create_service(SetBool, STREAM_SERVICE, self._on_stream_request, callback_group=self._group),
        ]
        # The description the core loaded, latched for robot_state_publisher and RViz (which read it
        # from this topic) and for late subscribers; published once, as robot_state_publisher does.
        latched = QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
        )
        description = self.create_publisher(String, ROBOT_DESCRIPTION_TOPIC, latched)
        description.publish(String(data=self._robot_description(self._controller)))
        self._entities.append(description)
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
        # A tip whose sensor is not the arm's reads what its sensor's driver publishes here (remap
        # the driver's topic onto it); sensor-data QoS takes reliable and best-effort publishers.
        for frame, source in self._controller.wrench_sources.items():
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
        self._forget_stream()  # Controller.stop() closes it
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
        self._forget_stream()
        if self._controller is not None:
            self._controller.stop()
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: State) -> TransitionCallbackReturn:
        self._active = False
        self._forget_stream()
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
        self._forget_stream()
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

    def _robot_description(self, controller: Controller) -> str:
        """The URDF the core was configured with: the arm's own (the simulated FR3 with its tool),
        else robot_description / urdf_path / the built-in robot (jtac_py.config)."""
        from jtac_py.config import robot_description

        urdf = getattr(controller.hardware, "urdf_xml", None)
        return urdf if urdf else robot_description(controller.values)

    # ---------------------------------------------------------------------------------- controller manager
    def _serve_controller_manager(self) -> None:
        """list_controllers and switch_controller for this controller, in every lifecycle state (a
        controller manager answers for unconfigured and inactive controllers too)."""
        try:
            from controller_manager_msgs.srv import ListControllers, SwitchController
        except ImportError:
            self.get_logger().warning(
                "controller_manager_msgs is not installed: no controller_manager services (make setup)"
            )
            return
        self.create_service(
            ListControllers, LIST_CONTROLLERS_SERVICE, self._list_controllers, callback_group=self._group
        )
        self.create_service(
            SwitchController, SWITCH_CONTROLLER_SERVICE, self._switch_controller, callback_group=self._group
        )

    def _joint_names(self) -> list[str]:
        if self._controller is not None:
            return self._controller.joint_names
        from jtac_py import robots

        return list(self._values["joints"]) or list(robots.joint_names(self._values["robot"]))

    def _list_controllers(self, request: Any, response: Any) -> Any:
        from controller_manager_msgs.msg import ControllerState

        state = self._state_machine.current_state[1]
        joints = self._joint_names()
        commands = [f"{joint}/position" for joint in joints]
        response.controller = [
            ControllerState(
                name=self.get_name(),
                state=state,
                type=CONTROLLER_TYPE,
                is_async=True,  # its own native thread at update_rate, not a manager's loop
                update_rate=int(self._values["update_rate"]),
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
        name = self.get_name()
        strict = request.strictness in (
            type(request).STRICT,
            getattr(type(request), "AUTO", -1),
            getattr(type(request), "FORCE_AUTO", -1),
        )
        done: list[str] = []

        def answer(ok: bool, message: str) -> Any:
            response.ok = ok
            if hasattr(response, "message"):
                response.message = message
            self._goal_log.log("info" if ok else "warning", f"switch_controller: {message}")
            return response

        unknown = sorted({*request.activate_controllers, *request.deactivate_controllers} - {name})
        if unknown and strict:
            return answer(
                False, f"no controller {', '.join(unknown)} (this manager holds '{name}'); nothing switched"
            )
        for wanted, start, transition in (
            (request.deactivate_controllers, "active", self.trigger_deactivate),
            (request.activate_controllers, "inactive", self.trigger_activate),
        ):
            if name not in wanted:
                continue
            state = self._state_machine.current_state[1]
            target = "inactive" if start == "active" else "active"
            if state == target and not strict:
                done.append(f"'{name}' already {target}")
                continue
            if state != start:
                return answer(False, f"'{name}' is {state}, not {start}: cannot make it {target}")
            if transition() != TransitionCallbackReturn.SUCCESS:
                now = self._state_machine.current_state[1]
                return answer(False, f"'{name}' failed to become {target} (now {now}; the log says why)")
            done.append(f"'{name}' {start} -> {target}")
        if unknown:
            done.append(f"skipped unknown {', '.join(unknown)}")
        return answer(True, "; ".join(done) or "nothing to switch")

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

    # ---------------------------------------------------------------------------------- wrench input
    def _on_wrench_input(self, frame: str, msg: Any) -> None:
        """A reading of the external sensor of `frame`'s tip, handed to the loop (taken at its next
        cycle). A reading stamped in another frame is dropped: the controller would read it in the
        wrong axes."""
        controller = self._controller
        if controller is None or not self._active:
            return
        if msg.header.frame_id and msg.header.frame_id != frame:
            self._goal_log.note(
                f"~/wrench/{frame}/input: readings in frame '{msg.header.frame_id}' are dropped; "
                f"the tip's sensor measures in '{frame}'"
            )
            return
        f, t = msg.wrench.force, msg.wrench.torque
        controller.feed_wrench(frame, (f.x, f.y, f.z, t.x, t.y, t.z))

    # ---------------------------------------------------------------------------------- state topics
    def _publish_state(self) -> None:
        self._watch_topic_goals()
        self._goal_log.flush()
        controller = self._controller
        if controller is None or not self._active:
            return
        state = controller.state
        if state is None:
            return
        self._read_clocks(controller)
        stamp = self.get_clock().now().to_msg()
        if self._stream is not None:
            self._watch_stream()
            # A policy uses the stamp of the state it observed as its chunk's header.stamp: while
            # streaming, the stamp is the ROS time of that state (not of the publication, which the
            # executor may delay by milliseconds), so the chunk lands where the observation was.
            stamp = RosTime(nanoseconds=self._clock_offset.to_ros_ns(state.time)).to_msg()
        names = controller.joint_names
        self._topics["state"].publish(
            conversions.controller_state_msg(
                state,
                names,
                stamp,
                speed_scaling_factor=state.time_scale,
                time_from_start_s=self._trajectory_time.at(state),
            )
        )
        self._topics["joints"].publish(conversions.joint_state_msg(state, names, stamp))
        for tip, frame in enumerate(controller.sensor_frames):
            self._topics[f"raw:{frame}"].publish(
                conversions.wrench_stamped(state.wrenches_raw[tip], frame, stamp)
            )
            self._topics[f"filtered:{frame}"].publish(
                conversions.wrench_stamped(state.wrenches_filtered[tip], frame, stamp)
            )

    # ---------------------------------------------------------------------------------- goal log
    def _on_goal_request(self, action: str) -> GoalResponse:
        """Goals are taken only while active (JTC's rule): an inactive controller would only abort
        them. The action level carries no reason, so the log does."""
        if self._active and self._controller is not None:
            return GoalResponse.ACCEPT
        state = self._state_machine.current_state[1]
        self._goal_log.log(
            "warning", f"goal on {action} rejected: the controller is not active (lifecycle state '{state}')"
        )
        return GoalResponse.REJECT

    def _on_cancel_request(self, goal_handle: Any) -> CancelResponse:
        """Cancels the core's goal at once, not at the execute loop's next poll: MoveIt sends the
        replanned goal right after the cancel, and the core must see the cancel first (then it holds
        the new goal through the brake instead of stitching it onto the path being canceled)."""
        with self._tracked_lock:
            tracked = self._action_goals.get(bytes(goal_handle.goal_id.uuid))
        if tracked is not None:
            tracked.handle.cancel()
        return CancelResponse.ACCEPT

    def _log_stop(self, tracked: _Tracked) -> None:
        """The reason of a stop, once, when it begins (the result follows at rest)."""
        if tracked.stop_logged:
            return
        for event in list(tracked.handle.events):
            if event.type != EventType.STOP_STARTED:
                continue
            tracked.stop_logged = True
            name = conversions.result_code_name(event.code)
            stop = f"stopping within {event.stop_duration_s:.3f} s"
            if event.detail == EventDetail.CANCELED:
                self._goal_log.log("info", f"{tracked.label}: canceled, {stop}")
            else:
                self._goal_log.log(
                    "warning", f"{tracked.label}: {stop}: {name} ({int(event.code)}): {event.message}"
                )
            return

    def _log_result(self, tracked: _Tracked | None, label: str, result: Any) -> None:
        """One line per result: success and cancel INFO, refusals (nothing moved) and a goal replaced
        by a newer one WARN/INFO, aborts after motion ERROR."""
        code = int(result.code)
        name = conversions.result_code_name(code)
        text = f"{label}: {{}} {name} ({code}): {result.message}"
        started = tracked is not None and tracked.handle.start_time_s is not None
        details = [e.detail for e in tracked.handle.events] if tracked is not None else []
        if result.canceled:
            by = (
                "an empty message on ~/joint_trajectory"
                if tracked and tracked.stopped_by_topic
                else "request"
            )
            self._goal_log.log("info", f"{label}: canceled by {by}, at rest")
        elif code == int(ResultCode.SUCCESSFUL):
            self._goal_log.log("info", text.format("succeeded:"))
        elif EventDetail.REPLACED_BY_STITCHING in details:
            self._goal_log.log("info", text.format("replaced:"))
        elif not started or code in (int(ResultCode.INVALID_STATE), int(ResultCode.OLD_HEADER_TIMESTAMP)):
            self._goal_log.log("warning", text.format("refused:" if not started else "ended:"))
        else:
            self._goal_log.log("error", text.format("aborted:"))

    # ---------------------------------------------------------------------------------- ~/joint_trajectory
    def _on_trajectory_msg(self, msg: Any) -> None:
        """JTC's command topic: the message replaces the running trajectory from its header stamp,
        through the same intake and stitching as the actions; an empty one stops every goal."""
        label = "~/joint_trajectory message"
        controller = self._controller
        if controller is None or not self._active:
            self._goal_log.log("warning", f"{label} ignored: the controller is not active")
            return
        if self._stream is not None:
            self._on_chunk_msg(controller, msg)
            return
        if not len(msg.points):
            with self._tracked_lock:
                running = list(self._tracked.values())
            for tracked in running:
                tracked.stopped_by_topic = True
                tracked.handle.cancel()
            self._goal_log.log(
                "info", f"{label} with no points: stopping {len(running)} goal(s) (minimum-time stop)"
            )
            return
        try:
            converted = conversions.core_goal_from_joint_trajectory(
                msg, ros_now_s=self.get_clock().now(), controller_now_s=controller.controller_time()
            )
        except conversions.GoalConversionError as error:
            self._goal_log.log("warning", f"{label} refused: {error}")
            return
        try:
            tracked = self._submit(controller, converted, "~/joint_trajectory")
        except (ValueError, TypeError, RuntimeError) as error:
            self._goal_log.log("warning", f"{label} refused: INVALID_GOAL (-1): {error}")
            return
        with self._tracked_lock:
            self._topic_goals.append(tracked)

    # ---------------------------------------------------------------------------------- streaming
    def _read_clocks(self, controller: Controller) -> None:
        """One reading of the two clocks for the offset: the controller's first, so that a delay
        between the reads makes the ROS reading late, which the offset's minimum discards."""
        controller_s = controller.controller_time()
        self._clock_offset.add(self.get_clock().now().nanoseconds, controller_s)

    def _forget_stream(self) -> None:
        with self._stream_lock:
            self._stream = None

    def _on_stream_request(self, request: Any, response: Any) -> Any:
        """~/stream (std_srvs/SetBool): true opens a stream, false closes it (after braking to rest)."""
        controller = self._controller
        with self._stream_lock:
            if controller is None or not self._active:
                response.success, response.message = False, "the controller is not active"
            elif request.data:
                response.success, response.message = True, self._open_stream(controller)
            else:
                response.success, response.message = True, self._close_stream(controller)
        self._goal_log.log("info" if response.success else "warning", f"~/stream: {response.message}")
        return response

    def _open_stream(self, controller: Controller) -> str:
        if self._stream is not None:
            return "a stream is already open"
        stream = controller.stream()  # a goal still moving brakes to rest and ends INVALID_STATE
        self._stream_seen = {"stale": 0, "brakes": 0, "own": 0}
        self._stream_stale_logged = self._stream_own_brakes = 0
        self._stream_last_message_ns = self.get_clock().now().nanoseconds
        self._stream_last_end_s = stream.now()
        self._read_clocks(controller)
        self._stream = stream
        return (
            "stream open: ~/joint_trajectory messages are action chunks (header.stamp = the ROS time of "
            "the observation, time_from_start = each point's time after it); goals are refused until "
            "it is closed"
        )

    def _close_stream(self, controller: Controller) -> str:
        stream = self._stream
        if stream is None:
            return "no stream is open"
        # Stream.close() hands the arm back by the hand-over rule: it brakes to rest within
        # stop_accelerations and returns once trajectory execution runs (the next goal is accepted).
        self._watch_stream()
        try:
            stream.close()
        except RuntimeError as error:
            self._stream = None
            return f"stream closed, but {error}"
        counts = (
            f"{stream.chunks_taken} chunk(s) taken, {stream.stale_chunks} stale, "
            f"{stream.brakes} brake(s), {stream.refused} refused"
        )
        self._stream = None
        return f"stream closed at rest ({counts}); ~/joint_trajectory is JTC's command topic again"

    def _brake_stream(self, controller: Controller, stream: Any) -> None:
        """A minimum-time stop within stop_accelerations now (Stream.brake()); the stream stays open and
        follows the next chunk."""
        stream.brake()
        self._stream_own_brakes += 1

    def _on_chunk_msg(self, controller: Controller, msg: Any) -> None:
        """~/joint_trajectory while a stream is open: the message is an action chunk (see the module
        docstring); an empty one brakes the arm to rest."""
        label = "~/joint_trajectory chunk"
        arrived_ns = self.get_clock().now().nanoseconds
        with self._stream_lock:
            stream = self._stream
            if stream is None:
                self._goal_log.log("warning", f"{label} ignored: the stream was closed")
                return
            if not len(msg.points):
                self._brake_stream(controller, stream)
                self._goal_log.log("info", f"{label} with no points: braking to rest (minimum-time stop)")
                return
            try:
                chunk = conversions.chunk_from_msg(msg, controller.joint_names)
            except conversions.GoalConversionError as error:
                self._goal_log.log("warning", f"{label} refused: {error}")
                return
            for note in chunk.pop("notes"):
                self._goal_log.note(note)
            self._read_clocks(controller)
            stamp = msg.header.stamp
            observed_s = None
            if stamp.sec or stamp.nanosec:
                observed_s = self._clock_offset.to_controller_s(stamp.sec * 1_000_000_000 + stamp.nanosec)
            now_s = stream.now()
            try:
                stream.send_chunk(
                    chunk["times_s"],
                    chunk["positions_rad"],
                    chunk["velocities_rad_s"],
                    observed_at_s=observed_s,
                )
            except ValueError as error:  # non-finite or malformed: nothing reached the robot
                self._goal_log.log("warning", f"{label} refused: INVALID_GOAL (-1): {error}")
                return
            observed_s = now_s if observed_s is None else observed_s
            end_s = observed_s + float(chunk["times_s"][-1])
            self._stream_last_message_ns = arrived_ns
            self._stream_last_end_s = end_s
            if end_s <= now_s + 1.0 / controller.update_rate_hz:
                self._stream_stale_logged += 1
                self._goal_log.log(
                    "warning",
                    f"{label} stale: header.stamp = {conversions.time_to_s(stamp):.6f} s, observed "
                    f"{now_s - observed_s:.3f} s before it arrived; its last point (time_from_start "
                    f"{float(chunk['times_s'][-1]):.3f} s) ended {now_s - end_s:.3f} s ago: braking "
                    "to rest within stop_accelerations",
                )

    def _watch_stream(self) -> None:
        """Logs, from the stream's counters, the brakes no message has explained: stale chunks the
        node did not see coming (judged a cycle later by the loop) and inputs that stopped (the last
        chunk ran out, or none came for the stream's timeout)."""
        with self._stream_lock:  # the state timer may run on two executor threads at once
            stream = self._stream
            if stream is None:
                return
            brakes, stale = stream.brakes, stream.stale_chunks
            new_brakes = brakes - self._stream_seen["brakes"]
            new_stale = stale - self._stream_seen["stale"]
            # Brakes the node asked for (an empty message) are logged where they were asked for.
            new_own = self._stream_own_brakes - self._stream_seen.get("own", 0)
            unlogged_stale = max(new_stale - self._stream_stale_logged, 0)
            self._stream_seen = {"stale": stale, "brakes": brakes, "own": self._stream_own_brakes}
            self._stream_stale_logged = max(self._stream_stale_logged - new_stale, 0)
            if unlogged_stale:
                self._goal_log.log(
                    "warning",
                    f"stream: {unlogged_stale} chunk(s) ended before the loop took them: braking to rest "
                    "within stop_accelerations",
                )
            if new_brakes > new_stale + new_own:  # each stale chunk taken while following starts one brake
                silent_s = (self.get_clock().now().nanoseconds - self._stream_last_message_ns) * 1e-9
                ran_out_s = stream.now() - self._stream_last_end_s
                why = (
                    f"no chunk to follow (the last arrived {silent_s:.3f} s ago; its last point was "
                    f"{ran_out_s:.3f} s ago)"
                )
                state = self._controller.state if self._controller is not None else None
                # A policy's last chunk that ends at rest is how a stream normally ends: said at INFO.
                if state is not None and np.abs(state.dq_cmd).max() < STREAM_REST_SPEED_RAD_S:
                    self._goal_log.log("info", f"stream: {why}: at rest, holding")
                else:
                    self._goal_log.log("warning", f"stream: {why}: braking to rest within stop_accelerations")

    def _watch_topic_goals(self) -> None:
        """The topic's goals have no one waiting on them: their stops and results are logged here."""
        with self._tracked_lock:  # the timer may run on two executor threads at once
            finished = [t for t in self._topic_goals if t.handle.done()]
            self._topic_goals = [t for t in self._topic_goals if t not in finished]
            running = list(self._topic_goals)
        for tracked in running:
            self._log_stop(tracked)
        for tracked in finished:
            self._log_stop(tracked)
            self._settle(tracked, tracked.handle.result(timeout=0.0))

    # ---------------------------------------------------------------------------------- goals
    def _submit(self, controller: Controller, converted: conversions.ConvertedGoal, source: str) -> _Tracked:
        """Hands a converted goal to the core and tracks it until its result (a goal the core refuses
        at intake comes back already done). Raises ValueError/TypeError/RuntimeError for a goal the
        bindings cannot even build."""
        for note in converted.notes:
            self._goal_log.note(note)
        handle = controller.submit(converted.goal)
        if handle.done():  # refused at submission: the core gave it no id and it never runs
            return _Tracked(handle, f"goal ({source})")
        tracked = _Tracked(handle, f"goal {handle.goal_id} ({source})")
        if handle.warning:  # accepted, e.g. an admittance axis with little damping: said once, here
            self._goal_log.log("warning", f"{tracked.label}: accepted with a warning: {handle.warning}")
        self._trajectory_time.register(handle.goal_id, handle, converted.duration_s)
        with self._tracked_lock:
            self._tracked[handle.goal_id] = tracked
        return tracked

    def _settle(self, tracked: _Tracked, result: Any) -> None:
        self._log_result(tracked, tracked.label, result)
        goal_id = tracked.handle.goal_id
        if goal_id:
            self._trajectory_time.forget(goal_id)
            with self._tracked_lock:
                if self._tracked.get(goal_id) is tracked:
                    del self._tracked[goal_id]

    def _execute_admittance(self, goal_handle: Any) -> Any:
        from jtac.action import FollowJointTrajectoryWithAdmittance

        def convert(controller: Controller) -> conversions.ConvertedGoal:
            return conversions.core_goal_from_admittance_goal(
                goal_handle.request,
                controller_joint_names=controller.joint_names,
                ros_now_s=_now_s(self),
                controller_now_s=controller.controller_time(),
            )

        return self._execute(
            goal_handle, FollowJointTrajectoryWithAdmittance, convert, "follow_joint_trajectory"
        )

    def _execute_moveit(self, goal_handle: Any) -> Any:
        from control_msgs.action import FollowJointTrajectory

        def convert(controller: Controller) -> conversions.ConvertedGoal:
            path, goal = self._default_tolerances()
            return conversions.core_goal_from_follow_joint_trajectory(
                goal_handle.request,
                controller_joint_names=controller.joint_names,
                default_path_tolerance_rad=path,
                default_goal_tolerance_rad=goal,
                ros_now_s=_now_s(self),
                controller_now_s=controller.controller_time(),
            )

        return self._execute(goal_handle, FollowJointTrajectory, convert, "moveit/follow_joint_trajectory")

    def _default_tolerances(self) -> tuple[list[float], list[float]]:
        """The default path and goal tolerance per joint [rad], in the controller's joint order."""
        from jtac_py.parameters import default_joint_tolerances

        return default_joint_tolerances(self._values)

    def _execute(self, goal_handle: Any, action_type: Any, convert: Any, action: str) -> Any:
        uuid = bytes(goal_handle.goal_id.uuid).hex()[:8]
        label = f"goal {uuid} ({action})"
        controller = self._controller
        if controller is None or not self._active:  # deactivated between acceptance and execution
            return self._finish(
                goal_handle, action_type, label, ResultCode.INVALID_STATE, "the controller is not active"
            )
        try:
            converted = convert(controller)
        except conversions.GoalConversionError as error:
            return self._finish(goal_handle, action_type, label, error.code, error.message)
        except (ValueError, TypeError) as error:  # a field the core's goal types cannot hold
            return self._finish(goal_handle, action_type, label, ResultCode.INVALID_GOAL, str(error))
        try:
            tracked = self._submit(controller, converted, f"{action}, action goal {uuid}")
        except (ValueError, TypeError, RuntimeError) as error:
            return self._finish(goal_handle, action_type, label, ResultCode.INVALID_GOAL, str(error))
        handle = tracked.handle
        uuid_key = bytes(goal_handle.goal_id.uuid)
        with self._tracked_lock:
            self._action_goals[uuid_key] = tracked
        if goal_handle.is_cancel_requested:  # canceled while it was being converted
            handle.cancel()
        period = 1.0 / float(self._values["state_publish_rate"])
        canceled = False
        while not handle.done():
            if goal_handle.is_cancel_requested and not canceled:
                handle.cancel()  # a minimum-time stop; the result comes at rest
                canceled = True
            self._log_stop(tracked)
            state = controller.state
            if state is not None and goal_handle.is_active:
                feedback = action_type.Feedback()
                conversions.fill_feedback(
                    feedback,
                    state,
                    controller.joint_names,
                    self.get_clock().now().to_msg(),
                    time_from_start_s=self._trajectory_time.at(state),
                )
                goal_handle.publish_feedback(feedback)
            time.sleep(period)
        self._log_stop(tracked)
        with self._tracked_lock:
            self._action_goals.pop(uuid_key, None)
        result = handle.result(timeout=0.0)
        self._settle(tracked, result)
        code, message, was_canceled = result.code, result.message, result.canceled
        if was_canceled and tracked.stopped_by_topic and not goal_handle.is_cancel_requested:
            # Stopped by a command on ~/joint_trajectory: replaced by another command, as a newer goal
            # would have replaced it (the arm braked to rest).
            code = ResultCode.GOAL_ABORTED_DUE_TO_STITCHING
            message = "stopped by an empty message on ~/joint_trajectory; the arm braked to rest"
        return self._finish(goal_handle, action_type, label, code, message, was_canceled, logged=True)

    def _finish(
        self,
        goal_handle: Any,
        action_type: Any,
        label: str,
        code: Any,
        message: str,
        canceled: bool = False,
        logged: bool = False,
    ) -> Any:
        code_value = int(code)
        if not logged:  # refused before the core saw it
            name = conversions.result_code_name(code_value)
            self._goal_log.log("warning", f"{label}: refused: {name} ({code_value}): {message}")
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


__all__ = [
    "ADMITTANCE_ACTION",
    "CONTROLLER_TYPE",
    "DEFAULT_NODE_NAME",
    "LIST_CONTROLLERS_SERVICE",
    "MOVEIT_ACTION",
    "ROBOT_DESCRIPTION_TOPIC",
    "STREAM_SERVICE",
    "SWITCH_CONTROLLER_SERVICE",
    "TRAJECTORY_TOPIC",
    "GoalLog",
    "JtacNode",
    "main",
]
