"""The ROS 2 message definitions a recording's MCAP file carries, as ros2msg text (no ROS installed).

The standard messages are the ROS 2 Jazzy field lists (sensor_msgs, geometry_msgs, trajectory_msgs,
control_msgs as jtac's ROS node publishes them, interfaces/control_msgs; rcl_interfaces/Log for the
events); jtac's own tables (the controller cycle, the hand's series) get a schema generated from their
columns, each field with its unit in a comment. A schema's text is its definition followed by every
message it uses, each after a line of '=' and ``MSG: package/Name`` (the MCAP ros2msg profile, as
rosbag2 writes it); fields name their message types as ``package/Name``, as .msg files do.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MESSAGE_DEFINITIONS", "schema_text", "table_definition"]

_SEPARATOR = "=" * 80

#: Field lists of the standard messages used, by full name (package/msg/Name).
MESSAGE_DEFINITIONS: dict[str, str] = {
    "builtin_interfaces/msg/Time": "int32 sec\nuint32 nanosec\n",
    "builtin_interfaces/msg/Duration": "int32 sec\nuint32 nanosec\n",
    "std_msgs/msg/Header": "builtin_interfaces/Time stamp\nstring frame_id\n",
    "sensor_msgs/msg/JointState": (
        "std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n"
    ),
    "geometry_msgs/msg/Vector3": "float64 x\nfloat64 y\nfloat64 z\n",
    "geometry_msgs/msg/Quaternion": "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n",
    "geometry_msgs/msg/Transform": "geometry_msgs/Vector3 translation\ngeometry_msgs/Quaternion rotation\n",
    "geometry_msgs/msg/Twist": "geometry_msgs/Vector3 linear\ngeometry_msgs/Vector3 angular\n",
    "geometry_msgs/msg/Wrench": "geometry_msgs/Vector3 force\ngeometry_msgs/Vector3 torque\n",
    "geometry_msgs/msg/WrenchStamped": "std_msgs/Header header\ngeometry_msgs/Wrench wrench\n",
    "trajectory_msgs/msg/JointTrajectoryPoint": (
        "float64[] positions\nfloat64[] velocities\nfloat64[] accelerations\nfloat64[] effort\n"
        "builtin_interfaces/Duration time_from_start\n"
    ),
    "trajectory_msgs/msg/MultiDOFJointTrajectoryPoint": (
        "geometry_msgs/Transform[] transforms\ngeometry_msgs/Twist[] velocities\n"
        "geometry_msgs/Twist[] accelerations\nbuiltin_interfaces/Duration time_from_start\n"
    ),
    "rcl_interfaces/msg/Log": (
        "byte DEBUG=10\nbyte INFO=20\nbyte WARN=30\nbyte ERROR=40\nbyte FATAL=50\n"
        "builtin_interfaces/Time stamp\nuint8 level\nstring name\nstring msg\nstring file\n"
        "string function\nuint32 line\n"
    ),
    "control_msgs/msg/JointTrajectoryControllerState": (
        "std_msgs/Header header\n"
        "string[] joint_names\n"
        "trajectory_msgs/JointTrajectoryPoint reference\n"
        "trajectory_msgs/JointTrajectoryPoint feedback\n"
        "trajectory_msgs/JointTrajectoryPoint error\n"
        "trajectory_msgs/JointTrajectoryPoint output\n"
        "string[] multi_dof_joint_names\n"
        "trajectory_msgs/MultiDOFJointTrajectoryPoint multi_dof_reference\n"
        "trajectory_msgs/MultiDOFJointTrajectoryPoint multi_dof_feedback\n"
        "trajectory_msgs/MultiDOFJointTrajectoryPoint multi_dof_error\n"
        "trajectory_msgs/MultiDOFJointTrajectoryPoint multi_dof_output\n"
        "float64 speed_scaling_factor\n"
    ),
}

_PRIMITIVES = {"bool", "byte", "uint8", "int32", "uint32", "int64", "float64", "string"}


def _used_types(definition: str) -> list[str]:
    """The message types a definition names, in order of first use."""
    used = []
    for line in definition.splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            base = words[0].split("[", 1)[0]
            if base not in _PRIMITIVES and base not in used:
                used.append(base)
    return used


def _full_name(short: str) -> str:
    """package/Name (a field's type) -> package/msg/Name."""
    package, name = short.split("/")
    return f"{package}/msg/{name}"


def _dependencies(name: str, definitions: dict[str, str]) -> list[str]:
    """Every message `name` uses (package/Name, as fields name them), breadth first, each once."""
    found: list[str] = []
    pending = _used_types(definitions[name])
    while pending:
        dep = pending.pop(0)
        if dep not in found:
            found.append(dep)
            pending.extend(_used_types(definitions[_full_name(dep)]))
    return found


def schema_text(name: str, extra: dict[str, str] | None = None) -> str:
    """The ros2msg schema of message `name`: its definition, then each message it uses."""
    definitions = {**MESSAGE_DEFINITIONS, **(extra or {})}
    parts = [definitions[name]]
    for dep in _dependencies(name, definitions):
        parts.append(f"{_SEPARATOR}\nMSG: {dep}\n{definitions[_full_name(dep)]}")
    return "".join(parts)


def table_definition(title: str, fields: Sequence[tuple[str, str, str]]) -> str:
    """A message of one table row: a first comment line, then `type name  # doc` per field
    (fields: (name, ros2 type, doc with unit))."""
    lines = [f"# {title}"]
    lines += [f"{ros_type} {name}  # {doc}" for name, ros_type, doc in fields]
    return "\n".join(lines) + "\n"
