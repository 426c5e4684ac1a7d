"""libfranka's own rate limiter for a joint position loop that pylibfranka runs without one.

libfranka applies its limiter only inside the callback loop, `Robot::control(callback, mode,
limit_rate=true, cutoff_frequency)`: ControlLoop<JointPositions>::convertMotion lowpass-filters each
command towards the reference (the command itself on the first cycle, the robot's q_d after it) and
then calls `franka::limitRate(upper_v(ref), lower_v(ref), kMaxJointAcceleration, kMaxJointJerk,
q_c, ref, dq_d, ddq_d)`. pylibfranka 0.21.3 binds only the active-control loop
(`start_joint_position_control` + readOnce/writeOnce), whose writeOnce sends the command unchanged.
`JointPositionRateLimiter` does the same two steps, calling `franka::lowpassFilter` and
`franka::limitRate` in the libfranka.so that pylibfranka ships (ctypes, by their mangled names), so
the bare loop's commands are libfranka's own arithmetic, bit for bit.

The velocity bounds are the FR3's published position-based envelope (jtac_py/robots/tables.py,
loaded on its own: it imports nothing of jtac), the formula libfranka's Robot reads from the robot's
URDF; far from the joint limits it is the constant dq_max.
"""

from __future__ import annotations

import ctypes
import importlib.util
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NUM_JOINTS = 7
DELTA_T_S = 1e-3  # libfranka's kDeltaT: the control period the limiter assumes [s]
LIMIT_EPS = 1e-3  # libfranka's kLimitEps: its margin below each published limit
# rate_limiting.h (libfranka >= 0.10, FR3): kMaxJointAcceleration [rad/s²] and kMaxJointJerk [rad/s³].
MAX_JOINT_ACCELERATION_RAD_S2 = (10.0 - LIMIT_EPS,) * NUM_JOINTS
MAX_JOINT_JERK_RAD_S3 = (5000.0 - LIMIT_EPS,) * NUM_JOINTS
DEFAULT_CUTOFF_HZ = 100.0  # lowpass_filter.h kDefaultCutoffFrequency, Robot::control's default

# Itanium-mangled names in libfranka 0.21: lowpassFilter(double, double, double, double) and the
# position overload limitRate(const std::array<double, 7>& x 8).
_LOWPASS = "_ZN6franka13lowpassFilterEdddd"
_LIMIT_RATE_POSITIONS = "_ZN6franka9limitRateERKSt5arrayIdLm7EES3_S3_S3_S3_S3_S3_S3_"

Array7 = ctypes.c_double * NUM_JOINTS
VelocityBounds = Callable[[Sequence[float]], tuple[Sequence[float], Sequence[float]]]


def libfranka_path() -> Path:
    """The libfranka.so inside the installed pylibfranka wheel."""
    spec = importlib.util.find_spec("pylibfranka")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("pylibfranka is not installed: its libfranka.so carries the limiter")
    path = Path(spec.origin).parent / "libfranka.so"
    if not path.exists():
        raise FileNotFoundError(f"{path}: pylibfranka ships no libfranka.so here")
    return path


def fr3_velocity_bounds() -> VelocityBounds:
    """q -> (lower, upper) joint velocity bounds [rad/s] of the FR3, from jtac_py/robots/tables.py alone."""
    spec = importlib.util.spec_from_file_location("_fr3_tables", ROOT / "jtac_py" / "robots" / "tables.py")
    assert spec is not None and spec.loader is not None
    tables = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = tables  # its dataclasses look their module up while it executes
    spec.loader.exec_module(tables)
    return tables.FR3.velocity_bounds_rad_s


class Libfranka:
    """franka::lowpassFilter and franka::limitRate (joint positions) of one libfranka.so."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or libfranka_path()
        lib = ctypes.CDLL(str(self.path))
        try:
            self._lowpass: Any = lib[_LOWPASS]
            self._limit: Any = lib[_LIMIT_RATE_POSITIONS]
        except AttributeError as exc:
            raise RuntimeError(f"{self.path}: no {exc.args[0]} (libfranka's ABI changed?)") from exc
        self._lowpass.restype = ctypes.c_double
        self._lowpass.argtypes = [ctypes.c_double] * 4
        # std::array<double, 7> is returned through a hidden first pointer (56 bytes: SysV MEMORY class).
        self._limit.restype = ctypes.c_void_p
        self._limit.argtypes = [ctypes.c_void_p] * 9

    def lowpass(self, sample_time_s: float, y: float, y_last: float, cutoff_hz: float) -> float:
        if not all(math.isfinite(x) for x in (sample_time_s, y, y_last, cutoff_hz)) or cutoff_hz <= 0.0:
            raise ValueError(f"lowpass needs finite values and cutoff_hz > 0: got {y}, {y_last}, {cutoff_hz}")
        return float(self._lowpass(sample_time_s, y, y_last, cutoff_hz))

    def limit_rate(
        self,
        upper_velocity: Sequence[float],
        lower_velocity: Sequence[float],
        max_acceleration: Sequence[float],
        max_jerk: Sequence[float],
        commanded: Sequence[float],
        last_commanded: Sequence[float],
        last_velocity: Sequence[float],
        last_acceleration: Sequence[float],
    ) -> np.ndarray:
        out = Array7()
        values = np.array(
            [
                upper_velocity,
                lower_velocity,
                max_acceleration,
                max_jerk,
                commanded,
                last_commanded,
                last_velocity,
                last_acceleration,
            ],
            dtype=float,
        )
        if values.shape != (8, NUM_JOINTS) or not np.isfinite(values).all():
            # libfranka throws std::invalid_argument here, which ctypes cannot catch: say it first.
            raise ValueError(f"limit_rate needs 8 finite arrays of {NUM_JOINTS}: got {values.tolist()}")
        args = [Array7(*row) for row in values.tolist()]
        self._limit(ctypes.byref(out), *(ctypes.byref(a) for a in args))
        return np.frombuffer(out, dtype=float).copy()


class JointPositionRateLimiter:
    """What Robot::control(..., limit_rate=true, cutoff_frequency) does to each JointPositions command."""

    def __init__(
        self,
        velocity_bounds: VelocityBounds,
        cutoff_hz: float = DEFAULT_CUTOFF_HZ,
        lib: Libfranka | None = None,
    ) -> None:
        self.lib = lib or Libfranka()
        self.velocity_bounds = velocity_bounds
        self.cutoff_hz = cutoff_hz
        self.started = False

    def __call__(
        self, q_c: Sequence[float], q_d: Sequence[float], dq_d: Sequence[float], ddq_d: Sequence[float]
    ):
        """The command to send for q_c [rad], given the robot state's q_d, dq_d, ddq_d."""
        q_c = [float(x) for x in q_c]
        reference = list(q_c) if not self.started else [float(x) for x in q_d]
        self.started = True
        if self.cutoff_hz < 1000.0:  # libfranka's kMaxCutoffFrequency: at or above it, no filter
            q_c = [
                self.lib.lowpass(DELTA_T_S, y, r, self.cutoff_hz) for y, r in zip(q_c, reference, strict=True)
            ]
        lower, upper = self.velocity_bounds(reference)
        return self.lib.limit_rate(
            upper, lower, MAX_JOINT_ACCELERATION_RAD_S2, MAX_JOINT_JERK_RAD_S3, q_c, reference, dq_d, ddq_d
        )
