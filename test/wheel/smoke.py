"""Checks an installed jtac wheel from outside the source tree (scripts/test_wheel.sh, in a fresh venv).

    python smoke.py api                     the import smoke test of the public API (below)
    python smoke.py demo LOG OUT_DIR        checks what `jtac demo --lockstep --out OUT_DIR` printed (LOG)
                                            and wrote

Every check prints one line; the first failure raises with the field and the value it found. Nothing
here may import from the source tree: the script is copied out of it before it runs.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path


def check(condition: bool, what: str) -> None:
    """Prints `ok  <what>` or raises naming it."""
    if not condition:
        raise SystemExit(f"FAILED  {what}")
    print(f"ok  {what}")


def api() -> None:
    """The wheel's library: where it is, its version everywhere, its data files, a goal in lockstep."""
    import numpy as np

    import jtac_py
    from jtac_py import _native  # its own version, beside the package's

    prefix = Path(sys.prefix).resolve()
    where = Path(jtac_py.__file__).resolve()
    check(prefix in where.parents, f"jtac_py imports from the venv ({where})")
    dist = importlib.metadata.version("jtac-py")
    check(
        jtac_py.__version__ == dist == _native.__version__,
        f"one version: jtac_py {jtac_py.__version__}, metadata {dist}, _native {_native.__version__}",
    )
    check(
        jtac_py.HAVE_LIBFRANKA and jtac_py.LIBFRANKA_VERSION == "0.21.3",
        f"FrankaDevice built, libfranka {jtac_py.LIBFRANKA_VERSION} (pylibfranka's)",
    )
    public = getattr(jtac_py, "__all__", [])
    missing = [name for name in public if not hasattr(jtac_py, name)]
    check(not missing, f"jtac_py.__all__: {len(public)} names, each there (missing: {missing})")

    from jtac_py import parameters, robots  # parameters: the schema's loader (not a public name)

    schema = parameters.default_schema()
    check(
        prefix in Path(schema.path).resolve().parents,
        f"the parameter schema is the wheel's ({schema.path})",
    )
    for robot in ("fr3", "panda"):
        urdf, mjcf = robots.urdf_path(robot), robots.mjcf_path(robot)
        check(urdf.is_file() and mjcf.is_file(), f"{robot}: {urdf.name} and {mjcf.name} in the wheel")

    from jtac_py import Controller, SimulatedArm, Trajectory

    with Controller(SimulatedArm("fr3", clock="lockstep")) as controller:
        controller.step(10)  # the first states
        q0 = controller.state.q_cmd
        handle = controller.follow(Trajectory.quintic(q0, q0 + 0.1, 1.0), wait=False)
        steps = 0
        while not handle.done() and steps < 3000:
            controller.step(10)
            steps += 10
        result = handle.result()
        error_rad = float(np.abs(controller.state.q - (q0 + 0.1)).max())
    check(result.code.name == "SUCCESSFUL", f"a 1 s goal in lockstep: {result.code.name} {result.message}")
    check(error_rad < 0.01, f"it ends at the goal: max joint error {1e3 * error_rad:.2f} mrad")

    from jtac_ros.cli import main as jtac

    check(jtac(["run"]) == 2, "jtac run without ROS 2 says so (exit 2)")


# The printed figures of jtac.demo.run and the range each must fall in (the push of 15 N against
# K = 400 N/m deflects by F/K = 37.5 mm; the measured force includes the admittance's dynamics).
DEMO_FIGURES = {
    "peak deflection": (r"peak deflection ([0-9.]+) mm", 30.0, 45.0),
    "peak force": (r"at peak force ([0-9.]+) N", 14.0, 18.0),
    "tracking error": (r"outside the push: max ([0-9.]+) mrad", 0.0, 10.0),
    "recorded cycles": (r"recorded ([0-9]+) cycles", 6000, 8000),
    "dropped cycles": (r"cycles, ([0-9]+) dropped", 0, 0),
}
DEMO_FILES = (
    "demo_tracking.png",
    "demo_wrench.png",
    "demo_deflection.png",
    "demo_timing.png",
    "demo_recording.npz",
    "demo.mcap",
)


def demo(log: Path, out: Path) -> None:
    """The demo's result line, its figures in range, and its files there and readable."""
    import numpy as np

    text = log.read_text()
    check("result: SUCCESSFUL" in text, "the demo's goal: SUCCESSFUL")
    for name, (pattern, low, high) in DEMO_FIGURES.items():
        match = re.search(pattern, text)
        check(match is not None, f"the demo printed its {name}")
        value = float(match.group(1))
        check(low <= value <= high, f"{name} {value:g} within [{low:g}, {high:g}]")
    for name in DEMO_FILES:
        path = out / name
        check(path.is_file() and path.stat().st_size > 1000, f"{path} written ({path.stat().st_size} B)")
    rows = int(re.search(DEMO_FIGURES["recorded cycles"][0], text).group(1))
    with np.load(out / "demo_recording.npz") as record:
        check(record["q"].shape == (rows, 7), f"demo_recording.npz: q {record['q'].shape}")
    from jtac_py import load_recording

    mcap = load_recording(out / "demo.mcap")
    check(len(mcap["time"]) == rows, f"demo.mcap reads back: {len(mcap['time'])} cycles")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "api":
        api()
    elif len(sys.argv) == 4 and sys.argv[1] == "demo":
        demo(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        raise SystemExit(__doc__)
