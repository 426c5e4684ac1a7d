#!/usr/bin/env bash
# Isolated venv for franka-sim, the MuJoCo server that speaks the libfranka wire protocol; the
# tests in test/franka start it on a loopback address and connect to it with pylibfranka.
#
#   scripts/setup_franka_sim.sh   # idempotent: a re-run with requirements-franka-sim.txt unchanged
#                                 # takes well under a second
#
# franka-sim pins numpy 1.26.4 and mujoco < 3.3, so it gets a venv of its own (.venv-sim) that
# shares nothing with .venv; only the server runs there, the tests run in .venv.
# Knobs: VENV_SIM=path  PYTHON=python3.11  PIP_ARGS="..."
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV_SIM="${VENV_SIM:-$ROOT/.venv-sim}"
PYTHON="${PYTHON:-python3}"
PIP_ARGS="${PIP_ARGS:-}"
REQS="$ROOT/requirements-franka-sim.txt"
cd "$ROOT"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
seconds_since() { local ms=$(( $(now_ms) - $1 )); printf '%d.%d' $((ms / 1000)) $(((ms % 1000) / 100)); }
T_ALL=$(now_ms)
step() { STEP="$1"; T0=$(now_ms); echo "=== [$(date +%T)] $STEP"; }
done_step() { printf '=== %-62s %6s s\n' "$STEP" "$(seconds_since "$T0")"; }

step "1/2 virtual environment $VENV_SIM (isolated from .venv)"
if [ ! -x "$VENV_SIM/bin/python" ]; then
  # No --system-site-packages, and never created from .venv's interpreter: nothing is shared.
  "$PYTHON" -m venv "$VENV_SIM"
else
  echo "    exists"
fi
# git ignores the whole venv through this file (as `python3.13 -m venv` writes by itself).
[ -f "$VENV_SIM/.gitignore" ] || echo '*' > "$VENV_SIM/.gitignore"
PY="$VENV_SIM/bin/python"
done_step

step "2/2 pinned wheels (requirements-franka-sim.txt)"
STAMP="$VENV_SIM/.jtac-franka-sim-requirements.sha256"
want=$(sha256sum "$REQS" | cut -d' ' -f1)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  # PIP_REQUIRE_VIRTUALENV guards against installing into anything but this venv.
  PIP_REQUIRE_VIRTUALENV=1 "$PY" -m pip install $PIP_ARGS -q -r "$REQS"
  "$PY" -c "import franka_sim, mujoco, numpy; print('    franka_sim imports; mujoco', mujoco.__version__, 'numpy', numpy.__version__)"
  echo "$want" > "$STAMP"
else
  echo "    requirements-franka-sim.txt unchanged since the last install"
fi
done_step

echo "=== franka-sim setup finished in $(seconds_since "$T_ALL") s; run: .venv/bin/python -m pytest test/franka"
