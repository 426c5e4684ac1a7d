"""jtac_py: real-time joint trajectory execution with Cartesian admittance, from plain Python (no ROS).

Everything a program needs is importable from here::

    from jtac_py import Controller, SimulatedArm, Trajectory

    with Controller(SimulatedArm("fr3", clock="lockstep")) as controller:  # on a virtual clock
        controller.step(1)  # the first cycle: the state exists from then on
        q0 = controller.state.q_cmd
        result = controller.follow(Trajectory.quintic(q0, q0 + 0.1, 2.0), timeout=10.0)

The names below (``__all__``) are the public API, grouped as the reference docs show them; the
modules behind them (``jtac_py.controller``, ``jtac_py.hardware``, ...) keep working, but a program
that imports from ``jtac_py`` alone keeps working when a module is split or renamed. The types the
native core binds (result codes, modes, goals as the core holds them, kinematics) are re-exported
under readable names; ``jtac_py._native`` itself is private.

Importing ``jtac_py`` loads the native module and numpy, never ROS, MuJoCo's Python package or
matplotlib: ``plots`` (matplotlib), ``doctor``, ``demo``, and the MCAP readers (``load_mcap``,
``load_group_mcap``: the ``mcap`` packages) are imported on first use (``from jtac_py import *``
imports them too, and so needs the ``plot`` and ``mcap`` extras).

The name differs from ``jtac``, which is the rosidl-generated interface package (``jtac.action``,
``jtac.msg``) that the ROS build installs; the ROS 2 node is ``jtac_ros``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Everything below needs the native module. Where it does not import (not built, a shared library
# missing), `import jtac_py` still works so that `jtac doctor` can say why; a public name then
# raises ImportError with the cause when it is used.
try:
    from jtac_py import _native, laws, robots
    from jtac_py.admittance import AdmittanceCheck, AxisCheck
    from jtac_py.admittance import check as check_admittance
    from jtac_py.admittance import step_response as admittance_step_response
    from jtac_py.arm_group import (
        ArmFault,
        ArmGroup,
        GroupGoalHandle,
        GroupRecording,
        GroupResult,
        GroupStream,
        TrajectoryTimeGap,
    )
    from jtac_py.arms import build_arm
    from jtac_py.chunks import Chunk
    from jtac_py.controller import Controller
    from jtac_py.goals import Trajectory, critical_damping, tip_goal
    from jtac_py.goals import jtac_goal as admittance_goal
    from jtac_py.gripper import (
        FRANKA_HAND,
        Gripper,
        GripperEvent,
        GripperHandle,
        GripperResult,
        GripperResultCode,
        GripperState,
        HandBackend,
        HandLimits,
    )
    from jtac_py.hardware import Arm, FrankaArm, SimulatedArm
    from jtac_py.laws import CompiledLaw, LawCompileError
    from jtac_py.laws import compile as compile_law
    from jtac_py.parameters import ParameterError
    from jtac_py.recording import ControllerState, LogEvent, Recording
    from jtac_py.recording import load as load_recording
    from jtac_py.reflexes import Explanation
    from jtac_py.reflexes import explain as explain_reflex
    from jtac_py.results import GoalError, GoalHandle, GoalResult, TareResult
    from jtac_py.robots import GraspObject, RobotSpec, joint_names, robot_spec
    from jtac_py.streaming import Stream

    # The native core's types that programs touch, under readable names.
    ResultCode = _native.ResultCode
    """A goal's result code (``GoalResult.code``): the MoveIt Pro action's numbers, 0 = SUCCESSFUL."""
    ControllerMode = _native.ControllerMode
    """What the trajectory engine is doing (``ControllerState.mode``): IDLE, EXECUTING, STOPPING, ..."""
    StreamState = _native.StreamState
    """What a stream's command does (``Stream.state``): HOLDING, FOLLOWING or BRAKING."""
    EventType = _native.EventType
    """What the real-time side reported (``Event.type``): a goal started, succeeded, aborted, ..."""
    EventDetail = _native.EventDetail
    """Why an event happened (``Event.detail``), with the joint, value and limit in the event."""
    Event = _native.Event
    """One report from the real-time side (goal started/ended, stop, tare), with its message."""
    TareStatus = _native.TareStatus
    """Progress of a force/torque tare (IDLE, COLLECTING, DONE, FAILED_NON_FINITE)."""
    SegmentKind = _native.SegmentKind
    """Order of the interpolating polynomial across one trajectory segment (LINEAR, CUBIC, QUINTIC)."""
    TrajectoryGoal = _native.TrajectoryGoal
    """A joint trajectory goal as the core holds it (``Trajectory.to_goal`` builds one)."""
    GoalPoint = _native.GoalPoint
    """One waypoint of a ``TrajectoryGoal``, in the goal's joint order."""
    TipGoal = _native.TipGoal
    """The admittance and payload of one tip (``tip_goal`` builds one from a dict)."""
    AdmittanceGoal = _native.JtacGoal
    """A trajectory goal with admittance per tip, as ``Controller.submit`` takes it (``admittance_goal``)."""
    Kinematics = _native.Kinematics
    """Forward kinematics and Jacobians of a URDF chain (Pinocchio), for poses outside the loop."""
    NUM_JOINTS: int = _native.NUM_JOINTS
    """Joints per arm (7)."""
    CYCLE_FIELDS = _native.CYCLE_FIELDS
    """The cycle record's fields as (name, shape per row, meaning with unit), in a ``Recording``'s order."""
    HAVE_LIBFRANKA: bool = _native.HAVE_LIBFRANKA
    """Whether the native module was built with libfranka (``FrankaArm`` needs it)."""
    LIBFRANKA_VERSION: str = _native.LIBFRANKA_VERSION
    """The libfranka version the native module was built against ("" without libfranka)."""
except ImportError as error:
    _IMPORT_ERROR: ImportError | None = error
else:
    _IMPORT_ERROR = None

if TYPE_CHECKING:  # imported on first use (module __getattr__ below)
    from jtac_py import demo, doctor, plots
    from jtac_py.mcap_io import load_group_mcap, load_mcap

_LAZY_MODULES = ("demo", "doctor", "plots")
_LAZY_NAMES = {"load_mcap": "jtac_py.mcap_io", "load_group_mcap": "jtac_py.mcap_io"}

# Grouped as the reference docs show them (docs/gen_reference.py reads the group comments).
__all__ = [  # noqa: RUF022
    "__version__",
    # Controller: the controller and what it hands back
    "Controller",
    "ControllerState",
    "GoalHandle",
    "GoalResult",
    "TareResult",
    "ResultCode",
    "ControllerMode",
    "Event",
    "EventType",
    "EventDetail",
    "TareStatus",
    # Arms: the simulated and the real one, the protocol any arm implements, several arms on one clock
    "Arm",
    "SimulatedArm",
    "FrankaArm",
    "build_arm",
    "ArmGroup",
    "ArmFault",
    "GroupGoalHandle",
    "GroupResult",
    "GroupStream",
    "GroupRecording",
    "TrajectoryTimeGap",
    # Goals: trajectories, and goals as the core holds them
    "Trajectory",
    "tip_goal",
    "admittance_goal",
    "critical_damping",
    "TrajectoryGoal",
    "GoalPoint",
    "TipGoal",
    "AdmittanceGoal",
    "SegmentKind",
    # Streams: targets and action chunks joined on the controller clock
    "Stream",
    "StreamState",
    "Chunk",
    # Laws: control laws written in Python, run by the controller thread
    "laws",
    "compile_law",
    "CompiledLaw",
    # Gripper: the Franka Hand
    "Gripper",
    "GripperHandle",
    "GripperResult",
    "GripperResultCode",
    "GripperState",
    "GripperEvent",
    "HandLimits",
    "HandBackend",
    "FRANKA_HAND",
    # Recordings: every controller cycle, saved as .npz or .mcap, and plotted
    "Recording",
    "LogEvent",
    "load_recording",
    "load_mcap",
    "load_group_mcap",
    "CYCLE_FIELDS",
    "plots",
    # Admittance: the settings' stability check at intake, a step response
    "check_admittance",
    "AdmittanceCheck",
    "AxisCheck",
    "admittance_step_response",
    # Robots: the robot descriptions and their kinematics
    "robots",
    "RobotSpec",
    "GraspObject",
    "robot_spec",
    "joint_names",
    "Kinematics",
    "NUM_JOINTS",
    # Reflexes: a robot's reflex explained
    "explain_reflex",
    "Explanation",
    # Errors: what the API raises
    "GoalError",
    "LawCompileError",
    "ParameterError",
    # Machine: checks before a run, the build, the demo
    "doctor",
    "demo",
    "HAVE_LIBFRANKA",
    "LIBFRANKA_VERSION",
]


def __getattr__(name: str) -> Any:
    """Imports the optional parts (``plots``, ``doctor``, ``demo``, the MCAP readers) on first use."""
    if name in _LAZY_MODULES:
        module = importlib.import_module(f"jtac_py.{name}")
        globals()[name] = module
        return module
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
        globals()[name] = value
        return value
    if name in __all__ and _IMPORT_ERROR is not None:
        raise ImportError(
            f"jtac_py.{name} is unavailable: the native module does not import ({_IMPORT_ERROR}); "
            "`jtac doctor` says why"
        ) from _IMPORT_ERROR
    raise AttributeError(f"module 'jtac_py' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names and the module's own."""
    return sorted(set(globals()) | set(__all__))
