"""The ROS interfaces the node needs, as a wheel (make wheel-ros): jtac_ros_interfaces-<version>-cp311-...whl.

    python scripts/build_ros_interfaces_wheel.py BUILD_ROS VENV OUT_DIR VERSION

`make setup` builds jtac's interfaces (`jtac`: the action and message) and, where no real ones exist,
our subsets of control_msgs, controller_manager_msgs and franka_msgs with ament into the venv prefix
(build/ros). This packs exactly what those builds installed (their install_manifest.txt files): the
Python packages at the wheel's root, the type-support libraries (lib/) and the ament index and
interface definitions (share/) as the wheel's data, which pip installs into the venv prefix where the
ROS 2 wheels' libraries are. Headers and CMake configs are left out (nothing builds against it).

The distribution is not named `jtac`: ament registers an egg-info of that name for the interfaces,
and the library's wheel is jtac-py (docs/setup.md, "The wheel").
"""

from __future__ import annotations

import base64
import hashlib
import sys
import sysconfig
import zipfile
from pathlib import Path

DIST = "jtac_ros_interfaces"
SUMMARY = "jtac's ROS 2 interfaces (jtac.action, jtac.msg) and the message subsets its node serves"


def _installed(build_ros: Path) -> list[Path]:
    """Every file the interface builds installed, from their install manifests."""
    manifests = sorted(build_ros.glob("install_manifest.txt")) + sorted(
        build_ros.glob("*/install_manifest.txt")
    )
    if not manifests:
        raise SystemExit(
            f"{build_ros}: no install_manifest.txt; run `make setup` first (it builds the interfaces)"
        )
    files = []
    for manifest in manifests:
        files += [Path(line) for line in manifest.read_text().splitlines() if line.strip()]
    return files


def _place(path: Path, venv: Path, data: str) -> str | None:
    """Where an installed file goes in the wheel, or None when the wheel leaves it out."""
    rel = path.resolve().relative_to(venv.resolve())
    parts = rel.parts
    site = Path("lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")
    if rel.is_relative_to(site):
        inner = rel.relative_to(site)
        if inner.parts[0].endswith(".egg-info") or "__pycache__" in inner.parts:
            return None
        return inner.as_posix()
    if parts[0] == "include" or (parts[0] == "share" and "cmake" in parts[2:3]):
        return None
    return f"{data}/data/{rel.as_posix()}"


def _digest(blob: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(blob).digest()).rstrip(b"=").decode()


def build(build_ros: Path, venv: Path, out_dir: Path, version: str) -> Path:
    """Writes the wheel into out_dir; returns its path."""
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    wheel = out_dir / f"{DIST}-{version}-{tag}-{tag}-{platform}.whl"
    data, info = f"{DIST}-{version}.data", f"{DIST}-{version}.dist-info"
    members: dict[str, bytes] = {}
    for path in _installed(build_ros):
        if not path.is_file():
            raise SystemExit(f"{path}: listed as installed, but missing; run `make setup` again")
        where = _place(path, venv, data)
        if where is not None:
            members[where] = path.read_bytes()
    packages = sorted({name.split("/")[0] for name in members if "/" in name and not name.startswith(data)})
    members[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {DIST.replace('_', '-')}\nVersion: {version}\nSummary: {SUMMARY}\n"
        "Requires-Dist: ros-jazzy-rosidl-default-runtime\n"
    ).encode()
    members[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: jtac scripts/build_ros_interfaces_wheel.py\nRoot-Is-Purelib: false\n"
        f"Tag: {tag}-{tag}-{platform}\n"
    ).encode()
    members[f"{info}/top_level.txt"] = "".join(f"{p}\n" for p in packages).encode()
    record = [f"{name},{_digest(blob)},{len(blob)}" for name, blob in members.items()]
    members[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    out_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, blob in members.items():
            mode = 0o755 if name.endswith(".so") else 0o644
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            entry.external_attr = mode << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(entry, blob)
    print(f"    {wheel.name}: {', '.join(packages)} ({len(members)} files)")
    return wheel


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    build(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
