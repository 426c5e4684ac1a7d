"""Assembly of a Controller's native parts from parameter values and an arm: the configured core
(jtac_core's composed controller), the hardware thread (franka_hw's AsyncInterface on the arm's
device, its limiter on the robot's whole limit table) and the controller thread (jtac_loop's ControlLoop),
with the wrench source of every tip.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jtac_py import _native, robots
from jtac_py import config as jtac_config
from jtac_py.hardware import Arm

__all__ = ["LIMIT_MARGIN", "NativeParts", "assemble", "values_for_arm"]

#: Fraction of the robot's published velocity/acceleration/jerk limits the hardware thread's final
#: limiter allows (the rest is margin for the robot's own reflexes).
LIMIT_MARGIN = 0.8


def values_for_arm(config: Any, overrides: Mapping[str, Any], arm: Arm) -> dict[str, Any]:
    """The parameter values of config and overrides on this arm: the arm decides the robot (hence
    joint and frame names) and, having a sensor, the F/T sensor name, unless the caller set them."""
    given = jtac_config.resolve(config, **overrides)
    set_by_caller = set(overrides) | (set(config) if isinstance(config, Mapping) else set())
    implied = {}
    if given["robot"] != arm.robot and "robot" not in set_by_caller:
        implied["robot"] = arm.robot
    if not given["ft_sensor_name"] and "ft_sensor_name" not in set_by_caller:
        implied["ft_sensor_name"] = arm.ft_sensor_name
    if not implied:
        return given
    return jtac_config.resolve(config, **{**implied, **overrides})


@dataclass(frozen=True)
class NativeParts:
    """What a Controller drives: the core, the hardware thread, the controller thread."""

    core: Any  # _native.JtacController, configured
    interface: Any  # _native.AsyncInterface on the arm's device
    loop: Any  # _native.ControlLoop running the core's law
    wrench_sources: list[str]  # per tip: "device", "external" or "none"

    def start_threads(self, arm: Arm, realtime_priority: int) -> int:
        """Real time: starts the hardware thread, the controller thread, then the arm's motion (a real
        arm expects a command every millisecond from its Move on, so the hardware thread waits for it
        first); both threads stop again when the motion does not start. Returns the loop's cycle count
        before the start (wait_for_cycle_after waits past it)."""
        cycles_before = int(self.loop.timing()["cycles"])
        self.interface.start()
        self.loop.start()
        try:
            # Just below the hardware thread: the handover from the Move to it is not preempted.
            arm.start_motion(fifo_priority=max(0, realtime_priority - 1))
        except BaseException:
            self.loop.stop()
            self.interface.stop()
            raise
        return cycles_before

    def wait_for_cycle_after(self, cycles_before: int, arm: Arm, timeout_s: float = 2.0) -> None:
        """Until the controller thread has run a cycle of this start (after a restart the snapshot is
        still the last cycle before the stop); RuntimeError with the hardware's state after timeout_s."""
        deadline = time.monotonic() + timeout_s
        while self.loop.timing()["cycles"] <= cycles_before:
            if time.monotonic() > deadline:
                error = arm.last_error
                raise RuntimeError(
                    f"no controller cycle within {timeout_s} s of start() "
                    f"(hardware: {self.interface.exit_status.name}{': ' + error if error else ''})"
                )
            time.sleep(0.001)

    def stop_threads(self, arm: Arm) -> None:
        """Real time: stops both threads and, at once, the arm's motion (a real arm without commands
        aborts after 20 ms)."""
        self.loop.stop()
        self.interface.stop()
        arm.finish_motion()


def assemble(values: Mapping[str, Any], arm: Arm) -> NativeParts:
    """The native parts for these (resolved) values on this arm; nothing starts yet."""
    core = jtac_config.make_controller(values, urdf_xml=arm.urdf_xml)
    priority = int(values["realtime_priority"])
    cpus = list(values["cpu_affinity"])
    interface = _native.AsyncInterface(
        arm.device,
        limit_margin=LIMIT_MARGIN,
        fifo_priority=priority,
        cpu=cpus[0] if cpus else -1,
        late_commands=arm.late_commands,
        **_limit_table(arm.robot),
    )
    loop = _native.ControlLoop(
        interface,
        core,
        update_rate_hz=int(values["update_rate"]),
        # Below the hardware thread: a late controller must never hold a robot packet off.
        fifo_priority=max(0, priority - 10) if priority > 0 else 0,
        cpu=cpus[-1] if cpus else -1,
        record_capacity=int(values["record_buffer_cycles"]),
    )
    # Every law's brakes use the stop_accelerations in force (the JTAC reads its own parameter).
    loop.set_stop_accelerations(list(values["stop_accelerations"]))
    # Each tip's wrench: the arm's sensor, an external one (feed_wrench) or none (config.py).
    sources = jtac_config.wrench_sources(values, arm.ft_sensor_name)
    loop.set_wrench_sources(sources)
    return NativeParts(core, interface, loop, sources)


def _limit_table(robot: str) -> dict[str, Any]:
    """The hardware limiter's keyword arguments: the robot's whole limit row, which franka_hw holds
    (velocity, acceleration, jerk, joint range and position-based envelope, generated from
    ``jtac_py.robots``' tables), chosen by the robot's name; nothing of another robot's."""
    return {"robot": robots.robot_spec(robot).name}
