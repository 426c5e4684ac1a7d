"""Result codes of the ROS adapter: names, the mapping onto control_msgs' smaller set, the Result message.

Our action has the codes 0..-9 and passes them through unchanged. control_msgs/FollowJointTrajectory
only defines 0..-5. Stock MoveIt (moveit_simple_controller_manager) decides from the action *status*
alone (SUCCEEDED / ABORTED / CANCELED -> ExecutionStatus); the error code only goes into its log line
``failed with error <NAME>: <error_string>``, and a code outside 0..-5 prints as "unknown error". So
each jtac-only code maps onto the control_msgs code a MoveIt user reads right, and the original name
and number lead the error_string:

jtac code                              control_msgs code             why
=====================================  ============================  =====================================
-6 ADMITTANCE_ERROR                    -4 PATH_TOLERANCE_VIOLATED    aborted mid-path by a run-time check
                                                                     (non-finite wrench/admittance); the
                                                                     arm braked off the path
-7 FORCE_TORQUE_THRESHOLD_EXCEEDED     -4 PATH_TOLERANCE_VIOLATED    aborted mid-path (contact); braked
-8 GOAL_ABORTED_DUE_TO_STITCHING       -1 INVALID_GOAL               what ros2_controllers' JTC sends for a
                                                                     goal replaced by a newer one ("Current
                                                                     goal cancelled due to new incoming
                                                                     action."); also a goal refused while
                                                                     settling
-9 INVALID_STATE                       -1 INVALID_GOAL               what the JTC sends for a goal ended by
                                                                     deactivation ("... during deactivate
                                                                     transition.")
=====================================  ============================  =====================================

Codes 0..-5 pass through unchanged, with the core's message as it is. ``result_for_action`` builds

Codes 0..-5 pass through unchanged, with the core's message as it is. ``result_for_action`` builds
the Result message (the two actions name the text field differently: ``error_message`` in ours,
``error_string`` in control_msgs).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "INVALID_GOAL",
    "INVALID_JOINTS",
    "OLD_HEADER_TIMESTAMP",
    "PATH_TOLERANCE_VIOLATED",
    "RESULT_CODE_NAMES",
    "SUCCESSFUL",
    "GoalConversionError",
    "result_code_for_action",
    "result_code_name",
    "result_for_action",
]

#: The result codes' names (the action constants; the same numbers as jtac_py._native.ResultCode).
RESULT_CODE_NAMES: dict[int, str] = {
    0: "SUCCESSFUL",
    -1: "INVALID_GOAL",
    -2: "INVALID_JOINTS",
    -3: "OLD_HEADER_TIMESTAMP",
    -4: "PATH_TOLERANCE_VIOLATED",
    -5: "GOAL_TOLERANCE_VIOLATED",
    -6: "ADMITTANCE_ERROR",
    -7: "FORCE_TORQUE_THRESHOLD_EXCEEDED",
    -8: "GOAL_ABORTED_DUE_TO_STITCHING",
    -9: "INVALID_STATE",
}

SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4

#: jtac-only code -> the code of an action that lacks it (see the table in the module docstring).
_FALLBACK_CODES: dict[int, int] = {
    -6: PATH_TOLERANCE_VIOLATED,
    -7: PATH_TOLERANCE_VIOLATED,
    -8: INVALID_GOAL,
    -9: INVALID_GOAL,
}


def result_code_name(code: Any) -> str:
    """The constant's name of a result code (an int or a _native.ResultCode); 'UNKNOWN' otherwise."""
    return RESULT_CODE_NAMES.get(int(code), "UNKNOWN")


def _action_defines(action: Any, code: int) -> bool:
    name = RESULT_CODE_NAMES.get(code)
    return name is not None and getattr(action.Result, name, None) == code


def result_code_for_action(code: Any, action: Any) -> int:
    """The error_code to send for core result `code` on `action` (the action type, e.g.
    ``control_msgs.action.FollowJointTrajectory``): unchanged where the action defines the code,
    otherwise the fallback of the module docstring's table (an unknown code -> INVALID_GOAL)."""
    value = int(code)
    if _action_defines(action, value):
        return value
    return _FALLBACK_CODES.get(value, INVALID_GOAL)


def result_for_action(action: Any, code: Any, message: str) -> Any:
    """``action.Result`` with error_code (result_code_for_action) and the text field the action has
    (error_message or error_string). A remapped code keeps its name and number in front of the text:
    ``"FORCE_TORQUE_THRESHOLD_EXCEEDED (-7): <core message>"``."""
    value = int(code)
    mapped = result_code_for_action(value, action)
    text = message if mapped == value else f"{result_code_name(value)} ({value}): {message}"
    result = action.Result()
    result.error_code = mapped
    fields = action.Result.get_fields_and_field_types()
    if "error_message" in fields:
        result.error_message = text
    else:
        result.error_string = text
    return result


class GoalConversionError(Exception):
    """A goal the adapter cannot express as a core goal: send it back as a result with `code`.

    code: the result code (INVALID_GOAL -1, INVALID_JOINTS -2, OLD_HEADER_TIMESTAMP -3);
    message: names the field, the joint and the value.
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{result_code_name(code)} ({code}): {message}")
        self.code = int(code)
        self.message = message
