"""Custom control laws written in Python, compiled by Numba into the native control loop.

A law is a plain Python function over float64 NumPy arrays with this fixed signature; it fills its
outputs in place and returns 0 (any other integer is the law's own error code)::

    def law(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd):
        ...
        return 0

- ``t`` the controller time [s] (the clock of ``controller.state.time``), ``dt`` the time since the
  previous cycle [s];
- ``q`` [rad], ``dq`` [rad/s], ``q_d`` (the robot's echo of the command it applies) [rad], ``tau_ext``
  (external joint torques) [N·m]: (7,); ``wrench`` (6,) [N, N·m] the F/T reading in the sensor frame
  (zero without a sensor);
- ``tcp_pose`` (4, 4) the TCP in the base frame and ``jacobian`` (6, 7) [v; ω] of the TCP in the base
  frame, from jtac_core's kinematics at the measured ``q``;
- ``params`` (n_params,) read-only, set by ``use_law(law, params)`` / ``law.set_params()``; ``memory``
  (n_memory,) the law's own, zeroed when the law is switched in and kept across cycles;
- ``q_cmd`` [rad], ``dq_cmd`` [rad/s] (7,): the outputs; they hold the previous cycle's command when the
  law is called (a law that writes nothing holds).

``compile(fn, n_params, n_memory)`` compiles it with Numba (nopython, ``error_model="numpy"``: a
division by zero gives inf/NaN, not an exception) inside a C callback that the loop's controller
thread calls directly: no Python, no GIL, no allocation. Compilation refuses a law that allocates
(``np.zeros``, array expressions such as ``q + dq`` that build a new array: write loops, or keep
scratch arrays in ``memory``) and checks the law once on a probe state (the FR3 at home, at rest),
naming the function when it fails there.

On the robot the hardware limiter and every non-finite check apply to what a law commands. A law that
returns a non-zero code, commands a non-finite value or raises stops the arm in minimum time (the
controller's ``stop_accelerations``) and holds it; ``controller.law_error`` says why (function name,
code, or joint and value), as do the log and the result of any goal refused meanwhile.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jtac_py import _native, robots

__all__ = ["RAISED_CODE", "CompiledLaw", "LawCompileError", "compile"]

#: Code a law reports when its function raised an exception (Numba cannot say which from the loop).
RAISED_CODE = -999

_NUM_JOINTS = 7

# NRT entry points that allocate: a law that calls one would call malloc on the real-time thread.
_ALLOCATING_CALL = re.compile(
    r"call\s[^\n]*@\"?(NRT_MemInfo_alloc\w*|NRT_MemInfo_new\w*|NRT_MemInfo_varsize_alloc\w*|"
    r"NRT_Allocate\w*|NRT_adapt_ndarray_from_python\w*)"
)

_C_SIGNATURE = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_double,  # t [s]
    ctypes.c_double,  # dt [s]
    *([ctypes.POINTER(ctypes.c_double)] * 8),  # q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params
    ctypes.c_int64,  # n_params
    ctypes.POINTER(ctypes.c_double),  # memory
    ctypes.c_int64,  # n_memory
    ctypes.POINTER(ctypes.c_double),  # q_cmd
    ctypes.POINTER(ctypes.c_double),  # dq_cmd
)


class LawCompileError(ValueError):
    """A law that cannot run in the loop: it does not compile in nopython mode, allocates, or fails
    on the probe state. The message names the function."""


def _numba() -> Any:
    try:
        import numba
    except ImportError as error:  # pragma: no cover - numba is in requirements.txt
        raise ImportError(
            "jtac_py.laws needs numba (pinned in requirements.txt; `make setup` installs it)"
        ) from error
    return numba


def _c_signature(numba: Any) -> Any:
    t = numba.types
    dp = t.CPointer(t.float64)
    return t.intc(t.float64, t.float64, dp, dp, dp, dp, dp, dp, dp, dp, t.int64, dp, t.int64, dp, dp)


def _as_params(values: Any, n_params: int, name: str) -> np.ndarray:
    params = np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(-1))
    if params.shape != (n_params,):
        raise ValueError(f"law '{name}': params has {params.size} values, n_params is {n_params}")
    bad = np.flatnonzero(~np.isfinite(params))
    if bad.size:
        raise ValueError(f"law '{name}': params[{bad[0]}] is {params[bad[0]]}")
    return params


class CompiledLaw:
    """A law compiled by ``compile()``: give it to ``Controller.use_law(law, params)``.

    Attributes: ``name`` (the function's name, used in errors), ``n_params``, ``n_memory``,
    ``params`` (the set the next ``use_law`` starts with), ``address`` (the C callback),
    ``py_func`` (the function as written; ``kernel(...)`` runs the compiled one on NumPy arrays).
    """

    def __init__(
        self, name: str, kernel: Any, callback: Any, n_params: int, n_memory: int, params: np.ndarray
    ) -> None:
        self.name = name
        self.kernel = kernel
        self._callback = callback  # keeps the compiled code loaded while the law exists
        self.address = int(callback.address)
        self.n_params = n_params
        self.n_memory = n_memory
        self.params = params
        self._native: Any = None  # the _native.CallbackLaw while the law is in a controller

    @property
    def py_func(self) -> Callable[..., Any]:
        return self.kernel.py_func

    def set_params(self, params: Sequence[float] | np.ndarray) -> None:
        """New parameters: taken at the next controller cycle boundary while the law runs, else at the
        next ``use_law``. ValueError naming the index and value of a non-finite entry, or the size."""
        values = _as_params(params, self.n_params, self.name)
        if self._native is not None:
            self._native.set_params(values)
        self.params = values

    def call(self, state: dict[str, Any], params: Any = None, memory: np.ndarray | None = None) -> tuple:
        """Calls the compiled callback once from Python (through its C ABI, as the loop does) on
        `state` (keys t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian; q_cmd/dq_cmd optional:
        the previous command). Returns (code, q_cmd, dq_cmd, memory). For tests and tools."""
        params_arr = self.params if params is None else _as_params(params, self.n_params, self.name)
        mem = np.zeros(self.n_memory) if memory is None else np.ascontiguousarray(memory, dtype=np.float64)
        arrays = {
            key: np.ascontiguousarray(np.asarray(state[key], dtype=np.float64).reshape(-1))
            for key in ("q", "dq", "q_d", "tau_ext", "wrench", "tcp_pose", "jacobian")
        }
        q_cmd = np.array(state.get("q_cmd", state["q_d"]), dtype=np.float64)
        dq_cmd = np.array(state.get("dq_cmd", np.zeros(_NUM_JOINTS)), dtype=np.float64)
        fn = _C_SIGNATURE(self.address)

        def ptr(a: np.ndarray) -> Any:
            return a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))

        code = fn(
            float(state["t"]),
            float(state["dt"]),
            *(ptr(arrays[k]) for k in ("q", "dq", "q_d", "tau_ext", "wrench", "tcp_pose", "jacobian")),
            ptr(params_arr),
            self.n_params,
            ptr(mem),
            self.n_memory,
            ptr(q_cmd),
            ptr(dq_cmd),
        )
        return int(code), q_cmd, dq_cmd, mem

    def __repr__(self) -> str:
        return f"CompiledLaw({self.name!r}, n_params={self.n_params}, n_memory={self.n_memory})"


def probe_state(robot: str = "fr3", dt: float = 0.001) -> dict[str, Any]:
    """The state compile() checks a law on: `robot` at home, at rest, no external torque or wrench,
    with its TCP pose and Jacobian."""
    spec = robots.robot_spec(robot)
    q = np.array(spec.q_home_rad, dtype=np.float64)
    kinematics = _native.Kinematics()
    kinematics.configure(robots.urdf_path(spec).read_text(), spec.base_frame, list(spec.joint_names))
    return {
        "t": 0.0,
        "dt": float(dt),
        "q": q,
        "dq": np.zeros(_NUM_JOINTS),
        "q_d": q.copy(),
        "tau_ext": np.zeros(_NUM_JOINTS),
        "wrench": np.zeros(6),
        "tcp_pose": np.asarray(kinematics.forward(q, spec.tcp_frame)),
        "jacobian": np.asarray(kinematics.jacobian(q, spec.tcp_frame)),
    }


def compile(
    fn: Callable[..., Any],
    n_params: int,
    n_memory: int,
    name: str | None = None,
    *,
    params: Sequence[float] | np.ndarray | None = None,
    probe: bool = True,
) -> CompiledLaw:
    """Compiles `fn` (the signature in this module's docstring) into a law for the native loop.

    n_params, n_memory: sizes of ``params`` and ``memory`` (>= 0). name: the law's name in errors (default
    the function's). params: the parameter set the law starts with (default zeros), also the one the
    probe runs with. probe: call the law once on ``probe_state()`` and require code 0 and finite outputs.

    LawCompileError (naming the function) when it does not compile in nopython mode, allocates, or
    fails on the probe; ValueError for sizes or params out of range.
    """
    numba = _numba()
    if not callable(fn):
        raise TypeError(f"compile: fn must be a function, got {type(fn).__name__}")
    py_func = getattr(fn, "py_func", fn)
    law_name = name or getattr(py_func, "__name__", "law")
    for label, value in (("n_params", n_params), ("n_memory", n_memory)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise ValueError(f"law '{law_name}': {label} must be an integer >= 0, got {value!r}")
    n_params, n_memory = int(n_params), int(n_memory)
    initial = _as_params(np.zeros(n_params) if params is None else params, n_params, law_name)

    # The user's function, compiled as written; a division by zero gives inf/NaN (caught by the
    # output check) instead of an exception.
    kernel = numba.njit(nogil=True, error_model="numpy", boundscheck=False)(py_func)
    carray = numba.carray
    n_j = _NUM_JOINTS
    raised = RAISED_CODE

    def callback(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, p, n_p, m, n_m, q_cmd, dq_cmd):
        # Views of the loop's buffers (no copy, no allocation); sizes are the compile-time constants.
        try:
            code = kernel(
                t,
                dt,
                carray(q, (n_j,)),
                carray(dq, (n_j,)),
                carray(q_d, (n_j,)),
                carray(tau_ext, (n_j,)),
                carray(wrench, (6,)),
                carray(tcp_pose, (4, 4)),
                carray(jacobian, (6, n_j)),
                carray(p, (n_params,)),
                carray(m, (n_memory,)),
                carray(q_cmd, (n_j,)),
                carray(dq_cmd, (n_j,)),
            )
        except Exception:  # an exception must not reach the C caller (it would take the GIL)
            return raised
        return code

    try:
        compiled = numba.cfunc(_c_signature(numba), nopython=True, error_model="numpy")(callback)
    except Exception as error:  # numba's typing and lowering errors
        summary = str(error).strip().splitlines()
        detail = "\n".join(summary[:12])
        raise LawCompileError(
            f"law '{law_name}' does not compile in nopython mode with the signature "
            "(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd) -> int "
            f"over float64 arrays (every path returns an int: 0, or the law's own code):\n{detail}"
        ) from error
    allocation = _ALLOCATING_CALL.search(compiled.inspect_llvm())
    if allocation is not None:
        raise LawCompileError(
            f"law '{law_name}' allocates memory ({allocation.group(1)}): a law runs on the real-time thread; "
            "write loops instead of array expressions (q + dq, np.dot, np.zeros ...) and keep scratch "
            "arrays in memory"
        )
    law = CompiledLaw(law_name, kernel, compiled, n_params, n_memory, initial)
    if probe:
        _probe(law)
    return law


def _probe(law: CompiledLaw) -> None:
    state = probe_state()
    code, q_cmd, dq_cmd, _ = law.call(state)
    if code == RAISED_CODE:
        raise LawCompileError(
            f"law '{law.name}' raised an exception on the probe state (FR3 at home, at rest)"
        )
    if code != 0:
        raise LawCompileError(
            f"law '{law.name}' returned code {code} on the probe state (FR3 at home, at rest); "
            "a law returns 0"
        )
    for label, values in (("q_cmd", q_cmd), ("dq_cmd", dq_cmd)):
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            j = int(bad[0])
            raise LawCompileError(
                f"law '{law.name}' commanded {label}[{j}] = {values[j]} on the probe state (FR3 at home, "
                f"at rest, params {law.params.tolist()})"
            )
