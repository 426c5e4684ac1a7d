"""``jtac convert IN OUT``: a controller recording from .npz to .mcap (ROS 2 schemas) or back."""

from __future__ import annotations

import argparse
import zipfile
from pathlib import Path

from jtac_py.cli.common import EXIT_OK, EXIT_USAGE, CliError

__all__ = ["add_parser", "handle"]

_SUFFIXES = (".npz", ".mcap")
#: Names an .npz does not carry: the FR3's, unless given.
_FR3_JOINTS = ",".join(f"fr3_joint{k}" for k in range(1, 8))


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``convert`` sub-parser."""
    p = sub.add_parser(
        "convert",
        help="convert a controller recording: .npz <-> .mcap",
        description="Read IN (.npz or .mcap) and write OUT in the format its suffix names; every field "
        "comes back bit for bit. An .npz has no joint names, sensor frames or wall clock: .mcap gets "
        "--joint-names, --sensor-frames and the .npz's modification time as the last row's wall time.",
    )
    p.add_argument("source", metavar="IN", help="recording (.npz or .mcap)")
    p.add_argument("target", metavar="OUT", help="file to write (.npz or .mcap)")
    p.add_argument("--joint-names", default=_FR3_JOINTS, help="comma-separated (default: the FR3's)")
    p.add_argument("--sensor-frames", default="fr3_ft_sensor", help="comma-separated, tip 0 first")
    p.set_defaults(func=handle)
    return p


def _anchor_of_npz(path: Path, data: dict):
    """The .npz's modification time as the wall time of its last row."""
    from jtac_py.mcap_io import ClockAnchor

    times = data.get("time")
    last_s = float(times[-1]) if times is not None and len(times) else 0.0
    return ClockAnchor(path.stat().st_mtime_ns, last_s)


def handle(args: argparse.Namespace) -> int:
    """Writes OUT and prints its path; exit 2 on a missing, malformed or unknown file."""
    from mcap.exceptions import McapError

    from jtac_py.mcap_io import save_mcap
    from jtac_py.recording import load

    source, target = Path(args.source), Path(args.target)
    if not source.is_file():
        raise CliError(EXIT_USAGE, f"{source}: no such file")
    for path in (source, target):
        if path.suffix not in _SUFFIXES:
            raise CliError(EXIT_USAGE, f"{path}: expected a .npz or .mcap file")
    try:
        if source.suffix == ".mcap" and target.suffix == ".mcap":
            raise CliError(EXIT_USAGE, "IN and OUT are both .mcap: nothing to convert")
        if target.suffix == ".npz":
            import numpy as np

            target.parent.mkdir(parents=True, exist_ok=True)
            np.savez(target, **load(source))
        else:
            data = load(source)
            joints, frames = args.joint_names.split(","), args.sensor_frames.split(",")
            save_mcap(data, target, joints, frames, _anchor_of_npz(source, data))
    except (KeyError, ValueError, OSError, McapError, zipfile.BadZipFile) as exc:
        raise CliError(EXIT_USAGE, f"{source}: {exc}") from None
    print(target)
    return EXIT_OK
