"""The "jtac build" line: the native module, its libfranka and the installed pylibfranka."""

from __future__ import annotations

import importlib.metadata

from jtac_py.doctor.report import Check


def check_build() -> Check:
    """jtac_py._native, its libfranka and the installed pylibfranka."""
    name = "jtac build"
    try:
        pylibfranka_version: str | None = importlib.metadata.version("pylibfranka")
    except importlib.metadata.PackageNotFoundError:
        pylibfranka_version = None
    try:
        from jtac_py import _native
    except ImportError as exc:
        return Check(
            name,
            f"jtac_py._native does not import ({exc})",
            "fail",
            "build it: scripts/setup.sh (or pip install --no-build-isolation -e . in the venv)",
        )
    have = bool(getattr(_native, "HAVE_LIBFRANKA", False))
    built_with = getattr(_native, "LIBFRANKA_VERSION", None)
    data = {
        "have_libfranka": have,
        "libfranka_version": built_with,
        "pylibfranka_version": pylibfranka_version,
    }
    pylib = f"pylibfranka {pylibfranka_version}" if pylibfranka_version else "pylibfranka not installed"
    if not have:
        return Check(
            name,
            f"_native built without libfranka: no FrankaDevice, simulated arm only; {pylib}",
            "warn",
            "pip install pylibfranka==0.21.3, then rebuild: scripts/setup.sh",
            data,
        )
    value = f"_native built with libfranka {built_with} (FrankaDevice available); {pylib}"
    if pylibfranka_version is None:
        return Check(name, value, "fail", f"pip install pylibfranka=={built_with}", data)
    if built_with and pylibfranka_version != built_with:
        return Check(
            name,
            value + " (versions differ)",
            "warn",
            f"pip install pylibfranka=={built_with}, or rebuild jtac against it: scripts/setup.sh",
            data,
        )
    return Check(name, value, "ok", "", data)
