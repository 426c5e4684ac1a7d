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

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
seconds_since() { local ms=$(( $(now_ms) - $1 )); printf '%d.%d' $((ms / 1000)) $(((ms % 1000) / 100)); }
T_ALL=$(now_ms)
step() { STEP="$1"; T0=$(now_ms); echo "=== [$(date +%T)] $STEP"; }
done_step() { printf '=== %-62s %6s s\n' "$STEP" "$(seconds_since "$T0")"; }

step "1/2 virtual environment $VENV_AIOFRANKA (isolated from .venv)"
if [ ! -x "$VENV_AIOFRANKA/bin/python" ]; then
  # No --system-site-packages, and never created from .venv's interpreter: nothing is shared.
  "$PYTHON" -m venv "$VENV_AIOFRANKA"
else
  echo "    exists"
fi
# git ignores the whole venv through this file (as `python3.13 -m venv` writes by itself).
[ -f "$VENV_AIOFRANKA/.gitignore" ] || echo '*' > "$VENV_AIOFRANKA/.gitignore"
PY="$VENV_AIOFRANKA/bin/python"
done_step

step "2/2 pinned wheels (requirements-aiofranka.txt)"
STAMP="$VENV_AIOFRANKA/.jtac-aiofranka-requirements.sha256"
want=$(sha256sum "$REQS" | cut -d' ' -f1)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  # --only-binary: the wheel has the native loop; an sdist fallback would need libfranka's headers.
  # PIP_REQUIRE_VIRTUALENV guards against installing into anything but this venv.
  PIP_REQUIRE_VIRTUALENV=1 "$PY" -m pip install $PIP_ARGS -q --only-binary aiofranka -r "$REQS"
  "$PY" -c "import aiofranka, aiofranka.native as n; n.load_native(); print('    aiofranka', aiofranka.__version__, 'native loop for libfranka', n._native.LIBFRANKA_VERSION)"
  echo "$want" > "$STAMP"
else
  echo "    requirements-aiofranka.txt unchanged since the last install"
fi
done_step

echo "=== aiofranka setup finished in $(seconds_since "$T_ALL") s; run: .venv/bin/python bench/bench_franka_sim.py"
