"""``jtac plot``: the four plots of a controller recording (.npz or .mcap)."""

from __future__ import annotations

import argparse
import zipfile
from pathlib import Path

from jtac_py.cli.common import EXIT_OK, EXIT_USAGE, CliError, matplotlib_missing

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``plot`` sub-parser."""
    p = sub.add_parser(
        "plot",
        help="plot a controller recording (.npz or .mcap): tracking, wrench, deflection, timing",
        description="Write <prefix>_tracking.png, _wrench.png, _deflection.png and _timing.png "
        "(jtac_py.plots.plot_all) and print their paths.",
    )
    p.add_argument("record", metavar="RECORD", help="recording saved by the controller (.npz or .mcap)")
    p.add_argument("--out", metavar="DIR", help="output folder (default: the recording's folder)")
    p.add_argument("--prefix", help="file name prefix (default: the recording's name)")
    p.add_argument(
        "--period-us",
        type=float,
        default=1000.0,
        metavar="US",
        help="nominal controller period for the timing plot [µs] (default: 1000)",
    )
    p.set_defaults(func=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """Writes the plots and prints their paths; exit 2 on a missing or malformed recording."""
    import numpy as np

    path = Path(args.record)
    if not path.is_file():
        raise CliError(EXIT_USAGE, f"{path}: no such file")
    try:
        from jtac_py.plots import plot_all
    except ImportError as exc:
        raise matplotlib_missing(exc) from None
    out = Path(args.out) if args.out is not None else path.parent
    if path.suffix == ".mcap":
        return _plot_mcap(path, out, args)
    try:
        with np.load(path, allow_pickle=False) as record:
            if not isinstance(record, np.lib.npyio.NpzFile):
                raise CliError(EXIT_USAGE, f"{path}: not an .npz archive of recording arrays")
            written = plot_all(record, out, prefix=args.prefix or path.stem, period_us=args.period_us)
    except (KeyError, ValueError, OSError, zipfile.BadZipFile) as exc:
        detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise CliError(EXIT_USAGE, f"{path}: {detail}") from None
    for p in written:
        print(p)
    return EXIT_OK


def _plot_mcap(path: Path, out: Path, args: argparse.Namespace) -> int:
    """The plots of an .mcap recording (its /jtac/cycle channel, jtac_py.mcap_io)."""
    from mcap.exceptions import McapError

    from jtac_py.mcap_io import load_mcap
    from jtac_py.plots import plot_all

    try:
        written = plot_all(load_mcap(path), out, prefix=args.prefix or path.stem, period_us=args.period_us)
    except (KeyError, ValueError, OSError, McapError) as exc:
        detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise CliError(EXIT_USAGE, f"{path}: {detail}") from None
    for p in written:
        print(p)
    return EXIT_OK
