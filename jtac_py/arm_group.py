"""Several arms in one process on one time base: ``ArmGroup`` (two FR3s for bimanual work, say).

Each arm keeps its own Controller: its hardware thread, rate matching, limiter and controller thread,
its goals, streams, tares and time scale. The group puts them on one clock and one policy:

- **One clock.** Real time: the host's steady clock (``time.monotonic()``); every arm's controller
  time is mapped to it through the clock map its loop fits to the arrival of every robot state
  (``ControlLoop.controller_time_at``), so one group instant is, on every arm, the state that arrived
  then. Lockstep: the simulated time; the group steps every arm packet by packet, whichever arm's
  call waits, so their cycles are the same instants.
- **Together.** ``follow()`` starts a goal on every arm at one group instant (each goal's
  ``start_time_s`` on its arm's clock: the core holds it until then), ``stream()`` takes chunks and
  targets for all joints with one ``observed_at_s``, ``record()`` holds every arm on the group clock,
  ``stop()`` brakes every arm to rest, then stops them.
- **A fault.** When an arm stops by itself (a reflex, a lost link: a Franka arm's hardware thread
  silent for 50 ms, long before libfranka's 1 s timeout), ``on_fault`` says what the others
  do: ``"brake"`` (default) — each brakes to rest within its ``stop_accelerations`` at its next cycle
  (a goal ends INVALID_STATE naming the arm that faulted, a stream stops and must be opened anew);
  ``"continue"`` — they carry on. Real time: each loop watches the other arms' hardware threads
  itself (no Python on the path); lockstep: the group's stepping asks for the brake.

Joint names of the group: ``"<arm>_<joint>"`` (``left_fr3_joint1`` ...), arms in their order.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jtac_py import _native, goals
from jtac_py.chunks import check_gripper_values
from jtac_py.controller import Controller
from jtac_py.goals import Trajectory
from jtac_py.gripper.types import FRANKA_HAND
from jtac_py.group_goals import ArmFault, GroupGoalHandle, GroupResult
from jtac_py.group_recording import GroupRecording, TrajectoryTimeGap, trajectory_start_s, trajectory_time_gap
from jtac_py.group_stream import GroupStream
from jtac_py.recording import RECORD_FIELDS
from jtac_py.simulated_arm import SimulatedArm
from jtac_py.streaming import Stream

__all__ = [
    "DEFAULT_LEAD_S",
    "ON_FAULT",
    "ArmFault",
    "ArmGroup",
    "GroupGoalHandle",
    "GroupRecording",
    "GroupResult",
    "GroupStream",
    "TrajectoryTimeGap",
    "pair_base_poses",
    "trajectory_start_s",
    "trajectory_time_gap",
]

#: What the other arms do when one stops by itself.
ON_FAULT = ("brake", "continue")
#: How far ahead of submission follow() starts a group goal by default [s]: the goals reach every
#: arm's mailbox (served once a cycle) well before, however loaded the machine is.
DEFAULT_LEAD_S = 0.05
#: The most arms in a group: every loop watches the others (ControlLoop.kMaxPeers + itself).
MAX_ARMS = 4
#: A simulated pair's bases: side by side along world y, facing +x (a table in front) [m].
PAIR_SPACING_M = 0.6

_OK = _native.DeviceStatus.OK


def _silence_s(arm: Any) -> float:
    """How long an arm's hardware thread may write nothing before the others brake for it [s]: a
    Franka arm's robot stops the motion after 20 lost cycles, long before libfranka's read gives up
    (1 s); a simulated arm never stops for silence (0: not watched for it)."""
    return float(_native.ControlLoop.FRANKA_SILENCE_S) if getattr(arm, "robot_reflexes", False) else 0.0


def _silent_ms(controller: Controller) -> float | None:
    """How long a watched-for-silence arm's running hardware thread has written nothing [ms], when
    longer than its silence bound; None otherwise."""
    bound_s = _silence_s(controller.hardware)
    interface = controller._interface
    last_ns = int(interface.last_packet_ns)
    if bound_s <= 0.0 or not interface.running or last_ns == 0:
        return None
    silent_ms = (time.monotonic_ns() - last_ns) * 1e-6
    return silent_ms if silent_ms > bound_s * 1e3 else None


def pair_base_poses(spacing_m: float = PAIR_SPACING_M) -> dict[str, np.ndarray]:
    """The base poses of a simulated pair ("left", "right"): upright, both facing world +x, `spacing_m`
    apart along world y (left at +y)."""
    poses = {}
    for name, y in (("left", spacing_m / 2), ("right", -spacing_m / 2)):
        pose = np.eye(4)
        pose[1, 3] = y
        poses[name] = pose
    return poses


class ArmGroup:
    """Several arms, each with its Controller, on one clock with one fault policy.

    Args:
        controllers: {arm name: Controller}, in the order of the group's joints (2 to 4 arms, all
            lockstep or all real time, none started yet; names are identifiers).
        on_fault: "brake" (default: when an arm stops by itself the others brake to rest within their
            stop_accelerations) or "continue" (they carry on).
    """

    def __init__(self, controllers: Mapping[str, Controller], *, on_fault: str = "brake") -> None:
        if on_fault not in ON_FAULT:
            raise ValueError(f"on_fault must be one of {ON_FAULT}, got {on_fault!r}")
        arms = dict(controllers)
        if not 2 <= len(arms) <= MAX_ARMS:
            raise ValueError(f"an ArmGroup holds 2 to {MAX_ARMS} arms, got {len(arms)}")
        for name, c in arms.items():
            if not (isinstance(name, str) and name.isidentifier()):
                raise ValueError(f"arm name {name!r} must be an identifier (it prefixes joint names)")
            if not isinstance(c, Controller):
                raise TypeError(f"arm '{name}': a Controller, got {type(c).__name__}")
            if c.running:
                raise RuntimeError(
                    f"arm '{name}': its controller is started; start the arms through the group "
                )
        if len({id(c) for c in arms.values()}) != len(arms):
            raise ValueError("an ArmGroup needs a Controller of its own per arm")
        if len({c.lockstep for c in arms.values()}) != 1:
            raise ValueError("the arms of a group are all lockstep or all real time")
        self.controllers = arms
        self.on_fault = on_fault
        self.lockstep = next(iter(arms.values())).lockstep
        self.joint_names = [f"{arm}_{j}" for arm, c in arms.items() for j in c.joint_names]
        self._offsets: dict[str, slice] = {}
        k = 0
        for arm, c in arms.items():
            self._offsets[arm] = slice(k, k + len(c.joint_names))
            k += len(c.joint_names)
        self._lockstep_faults: dict[str, Any] = {}  # arm -> the DeviceStatus it stopped with
        self._started = False
        for arm, c in arms.items():
            c._events.peer_fault_reason = self._peer_reason_for(arm)

    @classmethod
    def simulated_pair(
        cls,
        *,
        clock: str = "realtime",
        robot: str = "fr3",
        hand: bool = False,
        spacing_m: float = PAIR_SPACING_M,
        on_fault: str = "brake",
        arm_options: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> ArmGroup:
        """Two simulated arms, "left" and "right", side by side facing a table (pair_base_poses),
        each with its own F/T sensor (admittance per arm), on `clock`; `arm_options` go to each
        SimulatedArm, `overrides` (parameter values) to each Controller."""
        controllers = {}
        for name, pose in pair_base_poses(spacing_m).items():
            arm = SimulatedArm(robot, clock=clock, hand=hand, base_pose=pose, **dict(arm_options or {}))
            controllers[name] = Controller(arm, **overrides)
        return cls(controllers, on_fault=on_fault)

    # ---------------------------------------------------------------------------- properties
    @property
    def names(self) -> list[str]:
        return list(self.controllers)

    @property
    def running(self) -> bool:
        return self._started

    @property
    def fault(self) -> ArmFault | None:
        """The first arm (in the group's order) that stopped by itself, None while none has."""
        for arm, c in self.controllers.items():
            error = c.hardware_error
            if error is not None:
                return ArmFault(arm, error)
        return None

    def split(self, values: Any) -> dict[str, np.ndarray]:
        """{arm: its columns} of values whose last axis is the group's joints."""
        a = np.asarray(values, dtype=float)
        if a.shape[-1:] != (len(self.joint_names),):
            raise ValueError(
                f"the last axis must hold the group's {len(self.joint_names)} joints, got {a.shape}"
            )
        return {arm: a[..., cut].copy() for arm, cut in self._offsets.items()}

    def _columns(self, arm: str) -> slice:
        return self._offsets[arm]

    # ---------------------------------------------------------------------------- clocks
    def now(self) -> float:
        """The group clock [s]: time.monotonic() in real time, the simulated time in lockstep."""
        if self.lockstep:
            return max(c._stepper.time_s() for c in self.controllers.values())  # type: ignore[union-attr]
        return time.monotonic()

    def arm_time(self, arm: str, t_s: float) -> float:
        """Arm `arm`'s controller time [s] at group time t_s [s] (lockstep: the same)."""
        if self.lockstep:
            return float(t_s)
        try:
            return self.controllers[arm].controller_time_at(t_s)
        except RuntimeError:
            raise RuntimeError(f"arm '{arm}': no controller cycle yet (start the group first)") from None

    def group_time(self, arm: str, arm_time_s: float) -> float:
        """The group time [s] of arm `arm`'s controller time arm_time_s [s]: the inverse of arm_time
        (its clock map is linear: two Newton steps from now land on it, whatever the robot clock's
        rate — a real FR3's within ppm, franka-sim's up to percent slow)."""
        if self.lockstep:
            return float(arm_time_s)
        t = time.monotonic()
        for _ in range(2):
            t += float(arm_time_s) - self.arm_time(arm, t)
        return t

    # ---------------------------------------------------------------------------- start / stop
    def start(self) -> ArmGroup:
        """Starts every arm (their hardware and controller threads; lockstep: joins their stepping)
        with the fault policy; if one fails to start, those started are stopped again."""
        if self._started:
            return self
        self._lockstep_faults.clear()
        for arm, c in self.controllers.items():
            c._loop.clear_peers()
            if self.on_fault == "brake" and not self.lockstep:
                for other, peer in self.controllers.items():
                    if other != arm:
                        c._loop.watch_peer(peer._interface, silence_s=_silence_s(peer.hardware))
            if self.lockstep:
                c._stepper.join(self._stepper_for(arm))  # type: ignore[union-attr]
        started = []
        try:
            for c in self.controllers.values():
                c.start()
                started.append(c)
        except BaseException:
            for c in started:
                c.stop()
            self._leave_stepping()
            raise
        # Armed once every hardware thread runs again: an arm started before a recovered peer has
        # seen that peer's last fault until the peer's restart cleared it.
        for c in self.controllers.values():
            c._loop.rearm_peer_watch()
        self._started = True
        if self.lockstep:
            self._align_lockstep_clocks()
        return self

    def _align_lockstep_clocks(self) -> None:
        """Lockstep: an arm that stopped by itself was not stepped while it was stopped; it steps
        alone (at rest, the controller holding it) until it is at the others' simulated time again:
        one clock."""
        steppers = [c._stepper for c in self.controllers.values()]
        latest = max(s.packets for s in steppers)  # type: ignore[union-attr]
        for stepper in steppers:
            behind = latest - stepper.packets  # type: ignore[union-attr]
            if behind > 0:
                stepper.step_alone(behind)  # type: ignore[union-attr]

    def stop(self, *, brake: bool = True, timeout: float = 5.0) -> None:
        """Brakes every arm to rest within its stop_accelerations (goals end CANCELED, streams brake;
        brake=False skips this), waits for rest (up to timeout seconds; lockstep: simulated,
        stepping), then stops every arm's threads. Idempotent."""
        if not self._started:
            return
        if brake:
            self.brake()
            self._wait(self._at_rest, timeout)
        for c in self.controllers.values():
            c.stop()
        self._leave_stepping()
        self._started = False

    def brake(self) -> None:
        """Every arm's goals are canceled and its stream brakes (each to rest in minimum time)."""
        for c in self.controllers.values():
            if c.hardware_error is not None:
                continue
            c.cancel()
            tenant = c._slot.tenant
            stream = getattr(tenant, "stream", None)
            if stream is not None and stream.active:
                stream.brake()

    def _at_rest(self) -> bool:
        for c in self.controllers.values():
            state = c.state
            if c.hardware_error is None and state is not None and np.abs(state.dq_cmd).max() > 0.0:
                return False
        return True

    def _wait(self, done: Callable[[], bool], timeout: float) -> None:
        deadline = self.now() + timeout
        while not done() and self.now() < deadline:
            if self.lockstep:
                self.step(10)
            else:
                time.sleep(0.002)

    def __enter__(self) -> ArmGroup:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ---------------------------------------------------------------------------- lockstep
    def step(self, packets: int = 1) -> dict[str, Any]:
        """Lockstep only: advances every arm by `packets` 1 ms packets, packet by packet (and the
        controller cycles due); {arm: DeviceStatus}. An arm that stops by itself is not stepped
        again; with "brake" the others brake from their next cycle."""
        if not self.lockstep:
            raise RuntimeError("step() needs lockstep arms (SimulatedArm(clock='lockstep'))")
        if not self._started:
            raise RuntimeError("the group is not started: call start() (or use it as a context manager)")
        self._step_all(int(packets))
        return {arm: self._lockstep_faults.get(arm, _OK) for arm in self.controllers}

    def _stepper_for(self, arm: str) -> Callable[[int], Any]:
        def step(packets: int) -> Any:
            self._step_all(packets)
            return self._lockstep_faults.get(arm, _OK)

        return step

    def _step_all(self, packets: int) -> None:
        live = [(arm, c) for arm, c in self.controllers.items() if arm not in self._lockstep_faults]
        for _ in range(packets):
            for arm, c in list(live):
                status = c._loop.step(1)
                if status != _OK:
                    live.remove((arm, c))
                    self._arm_stopped(arm, status)
            if not live:
                break
        for c in self.controllers.values():
            c._after_steps()

    def _arm_stopped(self, arm: str, status: Any) -> None:
        """Lockstep: `arm` stopped by itself: its goals end, the others brake by the policy."""
        self._lockstep_faults[arm] = status
        self.controllers[arm]._events.hardware_stopped(status)
        if self.on_fault == "brake":
            for other, c in self.controllers.items():
                if other not in self._lockstep_faults:
                    c._loop.request_peer_brake()

    def _leave_stepping(self) -> None:
        if self.lockstep:
            for c in self.controllers.values():
                c._stepper.join(None)  # type: ignore[union-attr]

    def _peer_reason_for(self, arm: str) -> Callable[[], str]:
        def reason() -> str:
            for other, c in self.controllers.items():
                if other == arm:
                    continue
                error = c.hardware_error or c.hardware.last_error
                if error:
                    return f"arm '{other}' stopped: {error}"
                silent = _silent_ms(c)
                if silent is not None:
                    return (
                        f"arm '{other}' went silent: its hardware thread has written nothing for "
                        f"{silent:.0f} ms (its robot stops the motion after 20 lost cycles)"
                    )
            return ""

        return reason

    # ---------------------------------------------------------------------------- goals
    def follow(
        self,
        trajectory: Trajectory | Mapping[str, Trajectory],
        admittance: Any = None,
        tolerances: Mapping[str, Any] | None = None,
        thresholds: Sequence[float] | None = None,
        *,
        joint_damping_per_s: float = goals.DEFAULT_JOINT_DAMPING_PER_S,
        start_at_s: float | None = None,
        lead_s: float = DEFAULT_LEAD_S,
        timeout: float | None = None,
        wait: bool = True,
    ) -> GroupResult | GroupGoalHandle:
        """Starts a goal on several arms at one group instant; the GroupResult (wait=True) or a
        GroupGoalHandle (wait=False).

        trajectory: a Trajectory over the group's joints (joint_names None or the group's names), split
            per arm, or {arm: Trajectory} (in the arm's joint names; the arms named only; a
            ``jtac_py.TrajectoryGoal`` per arm as well, as the ROS pair node converts its messages).
        admittance, tolerances, thresholds, joint_damping_per_s: as Controller.follow() takes them,
            for every arm, or admittance as {arm: admittance}.
        start_at_s: the group time [s] the trajectories start at (default now + lead_s); it must lie
            ahead: the goals wait in each arm's core until then. RuntimeError (and every goal
            canceled) when submitting took past it.
        """
        if not self._started:
            raise RuntimeError("the group is not started: call start() (or use it as a context manager)")
        if self.fault is not None:
            raise RuntimeError(
                f"arm '{self.fault.arm}' stopped by itself ({self.fault.message}): recover it first"
            )
        per_arm = self._per_arm_trajectories(trajectory)
        now = self.now()
        t0 = now + float(lead_s) if start_at_s is None else float(start_at_s)
        if not (math.isfinite(t0) and t0 > now):
            raise ValueError(f"start_at_s = {t0} s must lie ahead of the group time now ({now:.4f} s)")
        built = {}
        for arm, traj in per_arm.items():
            c = self.controllers[arm]
            goal = goals.jtac_goal(
                traj,
                c.joint_names,
                admittance=self._arm_admittance(admittance, arm),
                tolerances=tolerances,
                thresholds=thresholds,
                joint_damping_per_s=joint_damping_per_s,
            )
            trajectory_goal = goal.trajectory
            trajectory_goal.start_time_s = self.arm_time(arm, t0)
            goal.trajectory = trajectory_goal
            built[arm] = goal
        handles = {arm: self.controllers[arm].submit(goal) for arm, goal in built.items()}
        arm_starts = {arm: goal.trajectory.start_time_s for arm, goal in built.items()}
        handle = GroupGoalHandle(self, handles, t0, arm_starts)
        late = self.now() - t0
        if late >= 0.0 and not self.lockstep:
            handle.cancel()
            raise RuntimeError(
                f"submitting the group goal took {late + float(lead_s):.3f} s, past its start "
                f"(lead_s = {lead_s} s): every arm's goal was canceled; give a larger lead_s"
            )
        return handle.result(timeout) if wait else handle

    def _arm_admittance(self, admittance: Any, arm: str) -> Any:
        """`arm`'s admittance: admittance[arm] when it is keyed by arm names (an arm not named: none),
        else the same admittance for every arm."""
        by_arm = isinstance(admittance, Mapping) and admittance and set(admittance) <= set(self.controllers)
        return admittance.get(arm) if by_arm else admittance

    def _per_arm_trajectories(self, trajectory: Any) -> dict[str, Trajectory]:
        if isinstance(trajectory, Mapping):
            unknown = [a for a in trajectory if a not in self.controllers]
            if unknown or not trajectory:
                raise ValueError(f"trajectory: arms {unknown} are not in the group {self.names}")
            return dict(trajectory)
        if not isinstance(trajectory, Trajectory):
            raise TypeError("trajectory: a Trajectory over the group's joints or {arm: Trajectory}")
        if trajectory.joint_names is not None and list(trajectory.joint_names) != self.joint_names:
            raise ValueError(
                f"trajectory.joint_names must be the group's {self.joint_names} (or None), "
                f"got {list(trajectory.joint_names)}"
            )

        def cut(table: Any, arm: str) -> Any:
            return None if table is None else self.split(table)[arm]

        return {
            arm: Trajectory(
                times_s=trajectory.times_s,
                positions_rad=cut(trajectory.positions_rad, arm),
                velocities_rad_s=cut(trajectory.velocities_rad_s, arm),
                accelerations_rad_s2=cut(trajectory.accelerations_rad_s2, arm),
            )
            for arm in self.controllers
        }

    def cancel(self) -> None:
        """Cancels every arm's goals (each stops in minimum time; results follow)."""
        for c in self.controllers.values():
            c.cancel()

    # ---------------------------------------------------------------------------- streams
    def stream(self, **options: Any) -> GroupStream:
        """A stream on every arm (Controller.stream()'s options, the same for each), taking targets
        and chunks for all the group's joints on the group clock; if one arm refuses, the streams
        already opened are closed again."""
        if not self._started:
            raise RuntimeError("the group is not started: call start() (or use it as a context manager)")
        streams: dict[str, Stream] = {}
        try:
            for arm, c in self.controllers.items():
                streams[arm] = c.stream(**options)
        except BaseException:
            for stream in streams.values():
                stream.close()
            raise
        return GroupStream(self, streams)

    def _per_arm_gripper(self, gripper: Any, shape: tuple[int, ...]) -> dict[str, Any]:
        """{arm: its gripper values of `shape`} from {arm: values} or an array (*shape, arms);
        ValueError naming the arm and value when not finite or out of range."""
        if gripper is None:
            return {}
        if isinstance(gripper, Mapping):
            unknown = [a for a in gripper if a not in self.controllers]
            if unknown:
                raise ValueError(f"stream gripper: arms {unknown} are not in the group {self.names}")
            per_arm = {a: np.asarray(v, dtype=float) for a, v in gripper.items()}
        else:
            table = np.asarray(gripper, dtype=float)
            if table.shape != (*shape, len(self.controllers)):
                raise ValueError(
                    f"stream gripper must have shape {(*shape, len(self.controllers))} (one column per "
                    f"arm) or be {{arm: values}}, got {table.shape}"
                )
            per_arm = {a: table[..., i] for i, a in enumerate(self.controllers)}
        for arm, values in per_arm.items():
            stream = self.controllers[arm]._slot.tenant
            units = getattr(getattr(stream, "stream", None), "gripper_units", "width_m")
            limits = self.controllers[arm].gripper.limits or FRANKA_HAND  # no hand: checked, then ignored
            try:
                check_gripper_values(values, shape, units, limits.max_width_m)
            except ValueError as error:
                raise ValueError(f"arm '{arm}': {error}") from None
        return per_arm

    # ---------------------------------------------------------------------------- recording
    def record(self, fields: Sequence[str] | None = None, path: str | Path | None = None) -> GroupRecording:
        """Records every arm's cycles (Controller.record(); "time" and "host_time" always among the
        fields) on the group clock; path: written by stop(), .npz or .mcap (GroupRecording.save)."""
        chosen = list(RECORD_FIELDS if fields is None else fields)
        for needed in ("time", "host_time"):
            if needed not in chosen:
                chosen.append(needed)
        recordings = {arm: c.record(chosen) for arm, c in self.controllers.items()}
        return GroupRecording(self, recordings, path)

    def __repr__(self) -> str:
        state = "started" if self._started else "stopped"
        clock = "lockstep" if self.lockstep else "realtime"
        return f"ArmGroup({self.names}, {clock}, on_fault={self.on_fault!r}, {state})"
