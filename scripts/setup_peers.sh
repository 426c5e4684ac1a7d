#!/usr/bin/env bash
# Isolated venvs for the Franka stacks bench/bench_franka_peers.py runs against franka-sim beside jtac:
# franky-control 2.0.0 (.venv-franky), franka-rs 0.4.0 (.venv-franka-rs) and aiofranka 0.9.0
# (.venv-aiofranka, through scripts/setup_aiofranka.sh). The bare pylibfranka loop runs in .venv.
#
#   scripts/setup_peers.sh   # idempotent: a re-run with the requirements files unchanged takes about
#                            # a second
#
# None of them is a dependency of jtac: each venv shares nothing with .venv or .venv-sim, and only
# the benchmark's client processes run there. Wheels only: franky bundles libfranka 0.21.2, franka-rs
# carries its Rust loop, aiofranka its native loop.
# Knobs: VENV_FRANKY=path  VENV_FRANKA_RS=path  PYTHON=python3.11  PIP_ARGS="..."
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV_FRANKY="${VENV_FRANKY:-$ROOT/.venv-franky}"
VENV_FRANKA_RS="${VENV_FRANKA_RS:-$ROOT/.venv-franka-rs}"
PYTHON="${PYTHON:-python3}"
PIP_ARGS="${PIP_ARGS:-}"
cd "$ROOT"

# shellcheck source=scripts/lib_setup.sh
source "$ROOT/scripts/lib_setup.sh"
side_venv "$VENV_FRANKY" "$ROOT/requirements-franky.txt" \
  "import franky, importlib.metadata as m; print('    franky-control', m.version('franky-control'))" \
  --only-binary franky-control
side_venv "$VENV_FRANKA_RS" "$ROOT/requirements-franka-rs.txt" \
  "import franka; print('    franka-rs', franka.__version__)" --only-binary franka-rs
"$ROOT/scripts/setup_aiofranka.sh"

echo "=== peers set up in $(seconds_since "$T_ALL") s; run: .venv/bin/python bench/bench_franka_peers.py"
