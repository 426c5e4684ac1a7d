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

# shellcheck source=scripts/lib_setup.sh
source "$ROOT/scripts/lib_setup.sh"
side_venv "$VENV_SIM" "$REQS" "import franka_sim, mujoco, numpy; print('    franka_sim imports; mujoco', mujoco.__version__, 'numpy', numpy.__version__)"

echo "=== franka-sim setup finished in $(seconds_since "$T_ALL") s; run: .venv/bin/python -m pytest test/franka"
