#!/usr/bin/env bash
# Builds jtac's wheel (make wheel): build/wheel/dist/jtac_py-<version>-cp311-cp311-<platform>.whl, and
# after `make setup` the ROS interfaces' wheel jtac_ros_interfaces-<version>-cp311-cp311-linux_x86_64.whl.
#
#   scripts/build_wheel.sh        # after `make setup-demo` (the Makefile target runs it first)
#
# 1. `pip wheel .` with .venv's build dependencies (no build isolation: the build links the Pinocchio,
#    MuJoCo and pylibfranka's libfranka of .venv, the versions pyproject.toml pins for the wheel's
#    users), its own build tree build/wheel/cmake (the contributors' build/py is left alone; the next
#    run is incremental) and no C++ tests;
# 2. auditwheel (requirements-wheel.txt, in the venv build/wheel/tools) repairs it to the oldest
#    manylinux tag its symbols allow. The libraries of other wheels — libpinocchio and Boost (cmeel
#    prefix of pin), libmujoco (mujoco), libfranka (pylibfranka) — are excluded: the module finds them
#    where those wheels put them (its RPATH, relative to site-packages), and copying them would load
#    two Pinocchios into one process. What is left for auditwheel is the C and C++ runtime.
#    When no manylinux tag fits, the linux_x86_64 wheel is kept and the reason printed.
# Knobs: VENV=path  PYTHON=python3.11 (for the tools venv)  JOBS=2  PIP_ARGS="..."
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
JOBS="${JOBS:-$(nproc)}"
PIP_ARGS="${PIP_ARGS:-}"
OUT="$ROOT/build/wheel"
PY="$VENV/bin/python"
cd "$ROOT"
# shellcheck source=scripts/lib_setup.sh
source "$ROOT/scripts/lib_setup.sh"

step "wheel 1/3 pip wheel . (build tree build/wheel/cmake, no C++ tests)"
rm -rf "$OUT/raw"
mkdir -p "$OUT"
# shellcheck disable=SC2086
PATH="$VENV/bin:$PATH" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" "$PY" -m pip wheel $PIP_ARGS -q . \
  --no-build-isolation --no-deps -w "$OUT/raw" \
  -C build-dir=build/wheel/cmake -C cmake.define.JTAC_BUILD_TESTS=OFF > "$OUT/build.log" 2>&1 \
  || { tail -60 "$OUT/build.log"; exit 1; }
raw=$(ls "$OUT"/raw/jtac_py-*.whl)
echo "    $(basename "$raw") ($(du -k "$raw" | cut -f1) kB)"
if grep -q '^JTAC_HAVE_LIBFRANKA_CACHED:INTERNAL=OFF' "$OUT/cmake/CMakeCache.txt"; then
  echo "    WITHOUT FrankaDevice: $(sed -n 's/^JTAC_LIBFRANKA_WHY_CACHED:INTERNAL=//p' "$OUT/cmake/CMakeCache.txt")" >&2
  exit 1
fi
done_step

# steps 1/2 and 2/2 of side_venv: the tools venv
side_venv "$OUT/tools" requirements-wheel.txt "import auditwheel" > "$OUT/tools.log" 2>&1 \
  || { cat "$OUT/tools.log"; exit 1; }

step "wheel 3/3 auditwheel repair (other wheels' libraries excluded)"
EXCLUDES=(--exclude 'libpinocchio_*.so' --exclude 'libboost_*.so.*' --exclude 'libmujoco.so.*'
          --exclude 'libfranka-*.so.*')
PATH="$OUT/tools/bin:$PATH" "$OUT/tools/bin/auditwheel" show "$raw" > "$OUT/auditwheel-show.txt" 2>&1 || true
rm -rf "$OUT/dist"
mkdir -p "$OUT/dist"
if PATH="$OUT/tools/bin:$PATH" "$OUT/tools/bin/auditwheel" repair "${EXCLUDES[@]}" -w "$OUT/dist" "$raw" > "$OUT/auditwheel-repair.log" 2>&1; then
  echo "    repaired: $(basename "$(ls "$OUT"/dist/*.whl)")"
else
  echo "    auditwheel repair failed; keeping the linux_x86_64 wheel:" >&2
  tail -5 "$OUT/auditwheel-repair.log" >&2
  cp "$raw" "$OUT/dist/"
fi
done_step
wheel=$(ls "$OUT"/dist/jtac_py-*.whl)

# The ROS interfaces, as `make setup` built them into the venv prefix (build/ros), packed as a wheel of
# their own (the "ros" extra needs it); skipped after `make setup-demo` alone.
if [ -f "$ROOT/build/ros/install_manifest.txt" ]; then
  step "wheel +1 the ROS interfaces' wheel (from make setup's build/ros)"
  version=$(basename "$wheel" | cut -d- -f2)
  "$PY" scripts/build_ros_interfaces_wheel.py "$ROOT/build/ros" "$VENV" "$OUT/dist" "$version"
  done_step
fi
echo "=== wheel built in $(seconds_since "$T_ALL") s: $(cd "$OUT/dist" && ls ./*.whl | tr '\n' ' ')"
