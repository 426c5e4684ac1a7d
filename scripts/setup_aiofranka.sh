#!/usr/bin/env bash
# Isolated venv for aiofranka 0.9.0, the peer whose native 1 kHz loop bench/bench_franka_sim.py runs
# against franka-sim side by side with jtac's (the Python-stall comparison).
#
#   scripts/setup_aiofranka.sh   # idempotent: a re-run with requirements-aiofranka.txt unchanged
#                                # takes well under a second
#
# aiofranka pins nothing of ours but wants mujoco >= 3.10 and its own numpy, so it gets a venv of its
# own (.venv-aiofranka) that shares nothing with .venv or .venv-sim; only the bench's aiofranka client
# process runs there. The wheel (cp311 manylinux_2_28) carries the compiled loop, aiofranka/_native,
# built for libfranka 0.21 (pylibfranka 0.21.3's): nothing is compiled here.
# Knobs: VENV_AIOFRANKA=path  PYTHON=python3.11  PIP_ARGS="..."
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV_AIOFRANKA="${VENV_AIOFRANKA:-$ROOT/.venv-aiofranka}"
PYTHON="${PYTHON:-python3}"
PIP_ARGS="${PIP_ARGS:-}"
REQS="$ROOT/requirements-aiofranka.txt"
cd "$ROOT"

# shellcheck source=scripts/lib_setup.sh
source "$ROOT/scripts/lib_setup.sh"
# --only-binary: the wheel has the native loop; an sdist fallback would need libfranka's headers.
side_venv "$VENV_AIOFRANKA" "$REQS" "import aiofranka, aiofranka.native as n; n.load_native(); print('    aiofranka', aiofranka.__version__, 'native loop for libfranka', n._native.LIBFRANKA_VERSION)" --only-binary aiofranka

echo "=== aiofranka setup finished in $(seconds_since "$T_ALL") s; run: .venv/bin/python bench/bench_franka_sim.py"
