"""Fixtures that run franka-sim (the libfranka wire protocol over MuJoCo) on a loopback address.

franka-sim lives in its own venv, `.venv-sim` (scripts/setup_franka_sim.sh); these tests run in .venv and
talk to it over TCP 1337 + UDP like to a real FR3, through pylibfranka. The servers are started and
stopped by tools/franka_sim/franka_sim_harness.py, the harness the benchmarks use too; this file holds
what is pytest's: the pool, the fixtures, the marker and the reports.

- `franka_sim_pool` (session): starts one server per enforcement setting on first use, each on a
  loopback address of this pytest session's own (127.<10+k>.<pid-derived>.<pid-derived>; libfranka's
  port is fixed at 1337, so parallel sessions need different addresses), and stops them at the end.
- `franka_sim`: the server for the requesting test, enforcement ON (communication constraints and
  motion limits: the server aborts a motion the way the robot's controller does). A test can switch
  either off with `@pytest.mark.franka_sim(enforce_comm_constraints=False, enforce_motion_limits=False)`.
  Has `.ip`, `.port`, `.log_path`, `.startup_s`, `.enforce_comm_constraints`, `.enforce_motion_limits`.
- `franka_robot`: a `pylibfranka.Robot(ip, RealtimeConfig.kIgnore)` connected to `franka_sim`,
  recovered from any reflex (`automatic_error_recovery`) before and after the test.
- `@pytest.mark.franka_sim(probe=True)` and/or `faults="loss=1% seed=3"` give the test a server of its
  own, started for it and stopped after it, with the robot-side probe (`franka_sim.probe_path`,
  `franka_sim.probe_events()`; helpers `move_to_first_command_ms` and `commands_lost` in
  tools/franka_sim/sim_server.py) and/or the fault injector on its UDP link (`franka_sim.restore_link()`
  repairs a `dead@` link).

A failing test that used the server gets the tail of the server's log in its report; the whole log
stays in pytest's tmp directory (`franka_sim.log_path`).
"""

from __future__ import annotations

import itertools
import sys
import warnings
from pathlib import Path

import pytest

# The harness (launcher, addresses, probe readers) lives beside the launcher, where the benchmarks
# import it too; test modules import `sim_server` through this path as well.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "franka_sim"))
from franka_sim_harness import (
    SIM_PYTHON,
    VENV_SIM,
    FrankaSim,
    FrankaSimError,
    clear_reflex,
    connect,
    start_server,
)
from sim_server import parse_faults, publication_ratio

MARKER = "franka_sim"
# Test servers take 127.<10 + slot>.x.y (franka_sim_harness.candidate_ips): apart from the benchmarks'
# 127.40 and 127.72 and from 127.0.0.1.
SECOND_OCTET = 10
# How long a test waits for the previous test's client to leave its server before restarting it [s].
CLIENT_LEFT_TIMEOUT_S = 2.0
_LOG_NUMBERS = itertools.count(1)
# The pool's servers take address slots 0-3 (one per enforcement setting); a test's own server (probe
# or faults) takes one of the next eight in turn, so that a just-stopped server's TIME_WAIT
# connections on 1337 never make the next one move.
_DEDICATED_SLOTS = itertools.cycle(range(4, 12))


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"{MARKER}(enforce_comm_constraints=True, enforce_motion_limits=True, probe=False, faults=''): talks "
        "to franka-sim (scripts/setup_franka_sim.sh); the keyword arguments switch the server's enforcement "
        "for the test; probe=True or faults='...' give the test a server of its own with the robot-side "
        "probe and/or the fault injector on its UDP link",
    )


def _start_server(
    log_dir: Path, slot: int, comm: bool, motion: bool, probe: bool = False, faults: str = ""
) -> FrankaSim:
    number = next(_LOG_NUMBERS)
    try:
        sim = start_server(
            lambda ip: log_dir / f"franka_sim_{number}_{ip}.log",
            SECOND_OCTET + slot,
            enforce_comm_constraints=comm,
            enforce_motion_limits=motion,
            probe_path=log_dir / f"franka_sim_{number}_probe.jsonl" if probe else None,
            faults=faults,
        )
    except FrankaSimError as exc:
        pytest.fail(str(exc), pytrace=False)
    if not sim.fifo_priority:
        warnings.warn(
            f"franka-sim on {sim.ip} runs at normal priority (SCHED_FIFO refused): under load its command "
            "receiver can be starved into communication_constraints_violation",
            stacklevel=1,
        )
    return sim


class FrankaSimPool:
    """The session's servers, one per (enforce_comm_constraints, enforce_motion_limits)."""

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self.servers: dict[tuple[bool, bool], FrankaSim] = {}

    def get(self, enforce_comm_constraints: bool = True, enforce_motion_limits: bool = True) -> FrankaSim:
        key = (bool(enforce_comm_constraints), bool(enforce_motion_limits))
        sim = self.servers.get(key)
        if sim is None or sim.process.poll() is not None:
            self.servers[key] = sim = _start_server(self.log_dir, len(self.servers), *key)
        return sim

    def restart(self, sim: FrankaSim) -> FrankaSim:
        """Stop `sim` and start a fresh server with its settings on its address."""
        key = (sim.enforce_comm_constraints, sim.enforce_motion_limits)
        sim.stop()
        slot = list(self.servers).index(key)
        fresh = _start_server(self.log_dir, slot, *key)
        fresh.restarts = sim.restarts + 1
        self.servers[key] = fresh
        return fresh

    def dedicated(self, comm: bool, motion: bool, probe: bool, faults: str) -> FrankaSim:
        """A server for one test only (the caller stops it): probe and faults need a fresh process, whose
        probe holds nothing but this test's events and whose timed faults count from its first command."""
        return _start_server(self.log_dir, next(_DEDICATED_SLOTS), comm, motion, probe, faults)

    def stop_all(self) -> None:
        for sim in self.servers.values():
            sim.stop()


@pytest.fixture(scope="session")
def franka_sim_python() -> Path:
    """The interpreter of franka-sim's venv; skips when scripts/setup_franka_sim.sh has not run."""
    if not SIM_PYTHON.exists():
        pytest.skip(f"franka-sim is not installed ({VENV_SIM} is missing): run scripts/setup_franka_sim.sh")
    return SIM_PYTHON


@pytest.fixture(scope="module")
def hand_sim(request, tmp_path_factory, franka_sim_python):
    """franka-sim with its gripper server (port 1338) and a virtual object between the fingers, one per
    module: the module names its own loopback block (SECOND_OCTET, outside the pool's 10..21) and the
    object's width (OBJECT_WIDTH_M)."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    log_dir = tmp_path_factory.mktemp(name)
    try:
        sim = start_server(
            lambda ip: log_dir / f"{name}_{ip}.log",
            request.module.SECOND_OCTET,
            gripper=True,
            gripper_object_width=request.module.OBJECT_WIDTH_M,
        )
    except FrankaSimError as exc:
        pytest.fail(str(exc), pytrace=False)
    yield sim
    sim.stop()


@pytest.fixture(scope="session")
def franka_sim_pool(tmp_path_factory, franka_sim_python):
    pool = FrankaSimPool(tmp_path_factory.mktemp("franka_sim"))
    yield pool
    pool.stop_all()


def _marker_settings(request) -> dict:
    settings = {"enforce_comm_constraints": True, "enforce_motion_limits": True, "probe": False, "faults": ""}
    # Closest marker last, so a test's own marker overrides its module's.
    for marker in reversed(list(request.node.iter_markers(MARKER))):
        unknown = set(marker.kwargs) - set(settings)
        if unknown or marker.args:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes only {sorted(settings)} as keywords")
        settings.update(marker.kwargs)
    try:
        parse_faults(settings["faults"])
    except ValueError as exc:
        raise pytest.UsageError(f"@pytest.mark.{MARKER}(faults={settings['faults']!r}): {exc}") from exc
    return settings


@pytest.fixture
def franka_sim(request, franka_sim_pool):
    """The franka-sim server for this test (a session-lived process, or one of its own with probe or
    faults; see the module docstring)."""
    settings = _marker_settings(request)
    comm, motion = settings["enforce_comm_constraints"], settings["enforce_motion_limits"]
    if settings["probe"] or settings["faults"]:
        sim = franka_sim_pool.dedicated(comm, motion, bool(settings["probe"]), settings["faults"])
        request.node.franka_sim_dedicated = sim
        yield sim
        sim.stop()
        return
    sim = franka_sim_pool.get(comm, motion)
    # franka-sim serves one client at a time, and libfranka waits for ever (holding the GIL) on a
    # server that is busy: a client leaked by an earlier test (a Robot kept alive by a traceback) is
    # ended by restarting the server.
    if not sim.wait_no_clients(CLIENT_LEFT_TIMEOUT_S):
        print(
            f"franka-sim {sim.ip}: a client from an earlier test is still connected (a Robot or "
            "ActiveControl object kept alive, e.g. by a traceback): restarting the server",
            file=sys.stderr,
        )
        sim = franka_sim_pool.restart(sim)
    yield sim


@pytest.fixture
def franka_robot(franka_sim):
    """pylibfranka.Robot on `franka_sim`; errors recovered before and after the test."""
    pylibfranka = pytest.importorskip(
        "pylibfranka", reason="pylibfranka is not installed in this venv (requirements.txt pins it)"
    )
    robot = connect(pylibfranka, franka_sim.ip)
    clear_reflex(pylibfranka, robot)
    yield robot
    robot.automatic_error_recovery()
    mode = robot.read_once().robot_mode
    assert mode == pylibfranka.RobotMode.Idle, f"robot left in {mode} after automatic_error_recovery"
    # The connection closes when pytest drops the fixture's value (after this teardown); the next
    # test's `franka_sim` waits for that, and restarts the server if something still holds it.


# Below this share of its 1 kHz cycle (states sent per millisecond of this machine's clock, lost ones
# included) franka-sim was not running in real time: on a quiet machine it sends 0.95–0.98 per ms; on a
# machine whose CPU is taken away (another VM, a build) it fell to 0.6, its cycles stretched, and
# timing-sensitive checks of the harness and of jtac failed with it. A robot's cycle never stretches.
MIN_PUBLICATION_RATIO = 0.9


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    dedicated = getattr(item, "franka_sim_dedicated", None)
    if report.failed and call.when == "call" and dedicated is not None and dedicated.probe_path is not None:
        # A failure while franka-sim itself fell behind real time is inconclusive: reported as skipped
        # with the figure (and the failure's text), never as a pass.
        ratio = publication_ratio(dedicated.probe_events())
        if ratio is not None and ratio < MIN_PUBLICATION_RATIO:
            reason = (
                f"inconclusive: franka-sim sent {ratio:.2f} states per ms during the test (below "
                f"{MIN_PUBLICATION_RATIO}: this machine did not run it in real time); the failure was: "
                f"{call.excinfo.exconly()[:300] if call.excinfo else report.longreprtext[:300]}"
            )
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, reason)
            return report
    if report.failed:
        pool = getattr(item, "funcargs", {}).get("franka_sim_pool")
        servers = list(pool.servers.values()) if pool else []
        dedicated = getattr(item, "franka_sim_dedicated", None)
        for sim in [*servers, *([dedicated] if dedicated else [])]:
            report.sections.append(
                (f"franka-sim {sim.ip} log tail ({sim.log_path})", sim.log_tail()),
            )
    return report
