"""A ROS 2 node serving a group of arms (a bimanual pair) on one clock: ``jtac_py.ArmGroup`` behind
MoveIt-style interfaces.

One node, one process, one ArmGroup (default: ``ArmGroup.simulated_pair(clock="realtime")``, arms
"left" and "right"). Joint names are the group's, ``"<arm>_<joint>"`` (``left_fr3_joint1`` ...).
Interfaces (``~`` = the node's name, default ``jtac_pair_controller``):

=========================================  ==========================================================
``~/follow_joint_trajectory``              action ``control_msgs/action/FollowJointTrajectory`` over
                                           the group's joints: split per arm, started together, one
                                           result (MoveIt's controller of the pair; ``pair_goals``)
``~/<arm>/follow_joint_trajectory``        the same action for one arm (its joints, prefixed)
``~/<arm>/zero_fts``                       service ``std_srvs/srv/Trigger``: tares that arm's sensors
``joint_states``                           ``sensor_msgs/msg/JointState``: every arm's joints
``robot_description``                      ``std_msgs/msg/String`` (transient local): the arms' URDFs,
                                           prefixed, under a ``world`` link at their base poses
parameters ``<arm>.time_scale_percentage`` that arm's trajectory speed [%] (the schema's
                                           ``time_scale_percentage``), applied to its Controller
=========================================  ==========================================================

Not a lifecycle node (yet): ``start()`` starts the arms and goals are accepted until ``stop()``.
No algorithm lives here: goals go to the arms' cores through ArmGroup and Controller.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from jtac_py import robots
from jtac_py.arm_group import ArmGroup
from jtac_py.controller import Controller
from jtac_py.parameters import ParameterError, default_schema
from jtac_ros import parameters as ros_parameters
from jtac_ros.goal_log import GoalLog
from jtac_ros.pair_description import pair_robot_description
from jtac_ros.pair_goals import ARM_ACTION, PAIR_ACTION, PairGoalServers, joined_state
from jtac_ros.spin import spin_node
from jtac_ros.state_messages import joint_state_msg

__all__ = [
    "ARM_ACTION",
    "DEFAULT_PAIR_NODE_NAME",
    "PAIR_ACTION",
    "TIME_SCALE_PARAMETER",
    "ZERO_FTS_SERVICE",
    "JtacPairNode",
    "main",
]

DEFAULT_PAIR_NODE_NAME = "jtac_pair_controller"
"""The pair node's name unless one is given: its interfaces are ``/jtac_pair_controller/...``."""
#: An arm's tare service and time-scale parameter; format with arm=<its name>.
ZERO_FTS_SERVICE = "~/{arm}/zero_fts"
TIME_SCALE_PARAMETER = "{arm}.time_scale_percentage"
JOINT_STATES_TOPIC = "joint_states"
ROBOT_DESCRIPTION_TOPIC = "robot_description"


class JtacPairNode(Node):
    """The pair's node (see the module docstring). group: the ArmGroup to serve, not started (default
    a simulated real-time pair); the node stops it on destroy_node()."""

    def __init__(
        self, node_name: str = DEFAULT_PAIR_NODE_NAME, *, group: ArmGroup | None = None, **kwargs: Any
    ) -> None:
        super().__init__(node_name, **kwargs)
        self.group = group if group is not None else ArmGroup.simulated_pair(clock="realtime")
        self._callbacks = ReentrantCallbackGroup()
        self._log = GoalLog(self.get_logger())
        try:
            self._declare_time_scales()
        except BaseException:
            self.destroy_node()
            raise
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._goals = PairGoalServers(
            self,
            group=self._running_group,
            arm_names=self.group.names,
            feedback_period_s=self._state_period_s,
            log=self._log,
        )
        self._servers = self._goals.create_action_servers(self._callbacks)
        self._tare_services = [self._zero_fts_service(arm) for arm in self.group.names]
        self._joint_states = self.create_publisher(JointState, JOINT_STATES_TOPIC, 10)
        self._publish_robot_description()
        self._timer = self.create_timer(
            self._state_period_s(), self._publish_state, callback_group=self._callbacks
        )

    # ---------------------------------------------------------------------------------- start / stop
    def start(self) -> JtacPairNode:
        """Starts every arm (ArmGroup.start()); goals are accepted from now on."""
        self.group.start()
        self.get_logger().info(
            f"running: arms {self.group.names}, {len(self.group.joint_names)} joints; goals are accepted"
        )
        return self

    def stop(self) -> None:
        """Brakes every arm to rest and stops them (ArmGroup.stop()); goals are rejected after."""
        self.group.stop()

    def destroy_node(self) -> None:
        group = getattr(self, "group", None)
        if group is not None:
            group.stop()
        for server in getattr(self, "_servers", []):
            server.destroy()
        self._servers = []
        super().destroy_node()

    def _running_group(self) -> ArmGroup | None:
        return self.group if self.group.running else None

    def _state_period_s(self) -> float:
        first = next(iter(self.group.controllers.values()))
        return 1.0 / float(first.values["state_publish_rate"])

    # ---------------------------------------------------------------------------------- parameters
    def _declare_time_scales(self) -> None:
        """<arm>.time_scale_percentage with the schema's descriptor; a value given at start (-p or
        a params file) is applied to that arm at once."""
        schema = default_schema()
        for arm, controller in self.group.controllers.items():
            name = TIME_SCALE_PARAMETER.format(arm=arm)
            descriptor = ros_parameters.descriptor_for(
                schema.spec("time_scale_percentage", controller.values)
            )
            descriptor.name = name
            descriptor.description = f"Arm '{arm}': {descriptor.description}"
            try:
                value = self.declare_parameter(name, controller.time_scale, descriptor).value
            except (InvalidParameterTypeException, InvalidParameterValueException) as error:
                raise ParameterError(f"parameter '{name}': {error}", name=name) from error
            if value != controller.time_scale:
                controller.set_parameters(time_scale_percentage=float(value))

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        """An arm's time scale goes to its Controller (schema validation; refused while a stream or
        custom law holds the arm); other names pass untouched."""
        for param in params:
            arm = self._arm_of_time_scale(param.name)
            if arm is None:
                continue
            try:
                self.group.controllers[arm].set_parameters(time_scale_percentage=param.value)
            except (ParameterError, ValueError, TypeError) as error:
                return SetParametersResult(successful=False, reason=f"{param.name}: {error}")
        return SetParametersResult(successful=True)

    def _arm_of_time_scale(self, name: str) -> str | None:
        for arm in self.group.names:
            if name == TIME_SCALE_PARAMETER.format(arm=arm):
                return arm
        return None

    # ---------------------------------------------------------------------------------- sensors
    def _zero_fts_service(self, arm: str) -> Any:
        from std_srvs.srv import Trigger

        return self.create_service(
            Trigger,
            ZERO_FTS_SERVICE.format(arm=arm),
            lambda request, response: self._zero_fts(arm, response),
            callback_group=self._callbacks,
        )

    def _zero_fts(self, arm: str, response: Any) -> Any:
        """Tares every sensor of `arm` (one per tip; the simulated FR3 has one) and says how each went."""
        controller = self.group.controllers[arm]
        if not self.group.running:
            response.success, response.message = False, "the arms are not running"
            return response
        outcomes = []
        try:
            for frame in controller.sensor_frames:
                tare = controller.zero_fts(frame)
                outcomes.append((tare.ok, f"{frame}: {tare.message}"))
        except (RuntimeError, ValueError, TimeoutError) as error:
            outcomes.append((False, str(error)))
        if not outcomes:
            outcomes.append((False, f"arm '{arm}' has no force/torque sensor"))
        response.success = all(ok for ok, _ in outcomes)
        response.message = "; ".join(text for _, text in outcomes)
        return response

    # ---------------------------------------------------------------------------------- topics
    def _publish_robot_description(self) -> None:
        """The pair's URDF, latched (transient local) for robot_state_publisher, RViz and MoveIt."""
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String

        latched = QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
        )
        self._description = self.create_publisher(String, ROBOT_DESCRIPTION_TOPIC, latched)
        arms = {arm: (_arm_urdf(c), _base_pose(c)) for arm, c in self.group.controllers.items()}
        self._description.publish(String(data=pair_robot_description(arms)))

    def _publish_state(self) -> None:
        self._log.flush()
        if not self.group.running:
            return
        state = joined_state([c.state for c in self.group.controllers.values()])
        if state is None:
            return
        stamp = self.get_clock().now().to_msg()
        self._joint_states.publish(joint_state_msg(state, self.group.joint_names, stamp))


def _arm_urdf(controller: Controller) -> str:
    """The arm's own URDF (a SimulatedArm's, with its tool), else the built-in robot's."""
    urdf = getattr(controller.hardware, "urdf_xml", None)
    if urdf:
        return str(urdf)
    values = controller.values
    return robots.urdf_xml(values["robot"], hand=bool(values["hand"]))


def _base_pose(controller: Controller) -> np.ndarray:
    """The arm's base pose in the world [m] (a SimulatedArm's base_pose; identity when unknown)."""
    pose = getattr(controller.hardware, "base_pose", None)
    return np.eye(4) if pose is None else np.asarray(pose, dtype=float)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the pair node on a simulated real-time pair until SIGINT/SIGTERM."""
    args = list(sys.argv if argv is None else argv)
    return spin_node(
        args, lambda context: JtacPairNode(context=context), start=JtacPairNode.start, program="jtac pair"
    )


if __name__ == "__main__":
    sys.exit(main())
