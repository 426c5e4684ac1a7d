#!/usr/bin/env bash
# One-command setup of jtac's development environment on Debian 12 + Python 3.11.
#
#   scripts/setup.sh          # (make setup, make test) everything; idempotent: a re-run with nothing
#                             # changed takes about a second
#   scripts/setup.sh --demo   # (make demo) only what the demo needs: no ROS wheels or interfaces, no
#                             # test tools, and of the C++ only the libraries and jtac_py._native
#
# Steps: Debian packages -> .venv -> pinned wheels -> ROS interfaces into the venv prefix ->
# C++ core, pybind11 module and C++ tests (editable, no build isolation). Each step prints its time.
# A later full run adds what a --demo run left out (the same venv and build tree, nothing rebuilt twice).
# Knobs: VENV=path  PYTHON=python3.11  JOBS=2  PIP_ARGS="..."
set -euo pipefail
DEMO_ONLY=""
case "${1:-}" in
  --demo) DEMO_ONLY=1 ;;
  "") ;;
  *) echo "usage: scripts/setup.sh [--demo]" >&2; exit 2 ;;
esac
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

mkdir -p "$BUILD"
STAMP="$VENV/.jtac-requirements.sha256"
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ -n "$DEMO_ONLY" ]; then
  # The demo needs neither the ROS 2 wheels, nor the test and lint tools, nor Numba (Python control
  # laws, jtac_py.laws imports it when a law is compiled): every other pin of
  # requirements.txt (a full setup installs the rest into the same venv).
  step "3/5 pinned wheels the demo needs (requirements.txt, no ROS, no test tools, no Numba)"
  DEMO_REQS="$BUILD/requirements-demo.txt"
  grep -vE '^(ros-jazzy-|catkin-pkg|pytest|hypothesis|ruff|clang-format|clang-tidy|numba|llvmlite)' requirements.txt > "$DEMO_REQS"
  DEMO_STAMP="$VENV/.jtac-requirements-demo.sha256"
  want_demo=$(sha256sum "$DEMO_REQS" | cut -d' ' -f1)
  if [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ] || [ "$(cat "$DEMO_STAMP" 2>/dev/null)" = "$want_demo" ]; then
    echo "    requirements.txt unchanged since the last install"
  else
    "$PY" -m pip install $PIP_ARGS -q -r "$DEMO_REQS"
    echo "$want_demo" > "$DEMO_STAMP"
  fi
else
  step "3/5 pinned wheels (requirements.txt)"
  if [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
    "$PY" -m pip install $PIP_ARGS -q -r requirements.txt
    echo "$want" > "$STAMP"
  else
    echo "    requirements.txt unchanged since the last install"
  fi
fi
done_step

# Builds below find the ROS packages and type supports in the venv prefix; no setup.bash needed.
export PATH="$VENV/bin:$PATH" VIRTUAL_ENV="$VENV"
export AMENT_PREFIX_PATH="$VENV" CMAKE_PREFIX_PATH="$VENV"
export CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"

step "4/5 ROS 2 interfaces (jtac, and control_msgs when none is installed) -> venv prefix"
if [ -n "$DEMO_ONLY" ]; then
  echo "    not needed by the demo (make setup and make test build them)"
else
  # Python is the only consumer (the node is rclpy): JTAC_INTERFACES_CPP=OFF skips the C++ generators
  # (a build tree configured before that option existed is made again). jtac's interfaces and our
  # control_msgs / controller_manager_msgs subsets build side by side (ExternalProject); Ninja when
  # there is one (a re-run with nothing to do: 0.7 s instead of make's 1.1 s).
  if ! grep -q '^JTAC_INTERFACES_CPP:BOOL=OFF' "$BUILD/ros/CMakeCache.txt" 2>/dev/null; then
    rm -rf "$BUILD/ros"
    ros_generator=()
    command -v ninja > /dev/null && ros_generator=(-G Ninja)
    cmake -S . -B "$BUILD/ros" "${ros_generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$VENV" \
      -DPython_EXECUTABLE="$PY" -DPython3_EXECUTABLE="$PY" \
      -DJTAC_BUILD_INTERFACES=ON -DJTAC_BUILD_CORE=OFF -DJTAC_BUILD_PYTHON=OFF -DBUILD_TESTING=OFF \
      -DJTAC_INTERFACES_CPP=OFF \
      -DCMAKE_PROJECT_INCLUDE="$ROOT/cmake/RosWheelsFixups.cmake" > "$BUILD/ros-configure.log" 2>&1 \
      || { cat "$BUILD/ros-configure.log"; exit 1; }
  fi
  cmake --build "$BUILD/ros" > "$BUILD/ros-build.log" 2>&1 || { tail -50 "$BUILD/ros-build.log"; exit 1; }
  cmake --install "$BUILD/ros" > "$BUILD/ros-install.log" 2>&1 || { tail -50 "$BUILD/ros-install.log"; exit 1; }
  "$PY" -c "from jtac.action import FollowJointTrajectoryWithAdmittance; from control_msgs.action import FollowJointTrajectory" \
    || { echo "ROS interfaces: built, but jtac/control_msgs do not import from $VENV (see $BUILD/ros-configure.log)" >&2; exit 1; }
  echo "    jtac.action, jtac.msg and control_msgs import from the venv"
fi
done_step

if [ -n "$DEMO_ONLY" ]; then
  step "5/5 C++ libraries, pybind11 module jtac_py._native (the C++ tests: make test)"
  BUILD_TARGETS=(_native)
  PIP_TARGETS=(--config-settings=build.targets=_native)
else
  step "5/5 C++ libraries, pybind11 module jtac_py._native, C++ tests"
  BUILD_TARGETS=()
  PIP_TARGETS=()  # pip builds everything: one parallel build of the module and the tests
fi
# libfranka's public headers for FrankaDevice (pylibfranka ships the library only), fetched once from
# PyPI into build/third_party (never committed); without them the build goes on without the device.
LIBFRANKA_HEADERS="$BUILD/third_party/libfranka-0.21.3"
[ -f "$LIBFRANKA_HEADERS/include/franka/active_control_base.h" ] \
  || "$PY" scripts/fetch_libfranka_headers.py "$LIBFRANKA_HEADERS" || true
# A build configured before the headers (or pylibfranka) were there must configure again to pick them up.
libfranka_stale=""
if grep -q '^JTAC_HAVE_LIBFRANKA_CACHED:INTERNAL=OFF' "$BUILD/py/CMakeCache.txt" 2>/dev/null \
   && ! grep -q '^JTAC_WITH_LIBFRANKA:BOOL=OFF' "$BUILD/py/CMakeCache.txt" \
   && [ -f "$LIBFRANKA_HEADERS/include/franka/active_control_base.h" ] \
   && "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('pylibfranka') is None)" 2>/dev/null; then
  libfranka_stale=1
fi
# Editable install without build isolation: the build must see the pip-installed Pinocchio.
# The fast path skips pip when the module is installed and CMake finds nothing to rebuild for it
# (a module rebuilt by hand with `cmake --build build/py` differs from the installed one: reinstall;
# so does a pyproject.toml newer than the last install, e.g. a new console script, and a changed set of
# Python modules: the editable finder maps each module file it saw, so a module turned into a package,
# or a new one, is found only after a reinstall).
python_modules=$(find jtac_py jtac_ros -name '*.py' -not -path '*/__pycache__/*' | LC_ALL=C sort | sha1sum | cut -c1-40)
# --demo builds the target _native only (the libraries and the module); the tree has the C++ tests
# configured all the same, and a full run builds them (below, without pip when the module is current).
installed_so=$("$PY" -c "import jtac_py._native as n; print(n.__file__)" 2>/dev/null || true)
built_so=$(ls "$BUILD"/py/bindings/_native*.so 2>/dev/null | head -1 || true)
install_stamp="$VENV/.jtac-py-installed"
module_installed=""
if [ -n "$installed_so" ] && [ -n "$built_so" ] && ! [ "$built_so" -nt "$installed_so" ] \
   && [ -f "$install_stamp" ] && ! [ pyproject.toml -nt "$install_stamp" ] && [ -z "$libfranka_stale" ] \
   && [ "$(cat "$install_stamp")" = "$python_modules" ]; then
  module_installed=1
fi
# Whether ninja has anything to do for the given targets: a dry run of the tree's own ninja (cmake
# --build would add 0.2 s of start-up).
make_program=$(sed -n 's/^CMAKE_MAKE_PROGRAM:[A-Z]*=//p' "$BUILD/py/CMakeCache.txt" 2>/dev/null || true)
stale() { [ -n "$("${make_program:-ninja}" -C "$BUILD/py" -n "$@" 2>/dev/null | grep -E '(Building|Linking|Re-running)')" ]; }
if [ -n "$module_installed" ] && ! stale "${BUILD_TARGETS[@]}"; then
  echo "    up to date"
elif [ -n "$module_installed" ] && ! stale _native; then  # (full run only)
  cmake --build "$BUILD/py" > "$BUILD/py-build.log" 2>&1 || { tail -50 "$BUILD/py-build.log"; exit 1; }
  echo "    jtac_py._native up to date; C++ tests built: $(ctest --test-dir "$BUILD/py" -N | sed -n 's/^Total Tests: //p')"
else
  "$PY" -m pip install $PIP_ARGS -q --no-build-isolation --no-deps "${PIP_TARGETS[@]}" -e .
  echo "$python_modules" > "$install_stamp"
  "$PY" -c "import jtac_py._native as n; print('    jtac_py._native', n.__version__, \
'with FrankaDevice (libfranka %s)' % n.LIBFRANKA_VERSION if n.HAVE_LIBFRANKA else 'WITHOUT FrankaDevice')"
  [ -n "$DEMO_ONLY" ] || echo "    C++ tests built: $(ctest --test-dir "$BUILD/py" -N | sed -n 's/^Total Tests: //p')"
fi
if grep -q '^JTAC_HAVE_LIBFRANKA_CACHED:INTERNAL=OFF' "$BUILD/py/CMakeCache.txt" 2>/dev/null; then
  echo "    FrankaDevice not built: $(sed -n 's/^JTAC_LIBFRANKA_WHY_CACHED:INTERNAL=//p' "$BUILD/py/CMakeCache.txt")"
fi
done_step

if [ -n "$DEMO_ONLY" ]; then
  echo "=== setup for the demo finished in $(seconds_since "$T_ALL") s (make setup or make test adds the rest)"
else
  echo "=== setup finished in $(seconds_since "$T_ALL") s; for a shell: source scripts/env.sh"
fi
