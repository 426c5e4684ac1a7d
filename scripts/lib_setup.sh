# Shared by the setup scripts (sourced, not run): step timing and the isolated side venvs.

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
seconds_since() { local ms=$(( $(now_ms) - $1 )); printf '%d.%d' $((ms / 1000)) $(((ms % 1000) / 100)); }
T_ALL=$(now_ms)
step() { STEP="$1"; T0=$(now_ms); echo "=== [$(date +%T)] $STEP"; }
done_step() { printf '=== %-62s %6s s\n' "$STEP" "$(seconds_since "$T0")"; }

# side_venv VENV REQUIREMENTS CHECK_PYTHON [PIP OPTION...]
# An isolated venv (no --system-site-packages, never made from .venv's interpreter: a tool with pins
# of its own shares nothing with ours) with REQUIREMENTS installed, skipped while the file's SHA-256
# matches a stamp inside the venv; CHECK_PYTHON (a Python snippet) proves the install. Uses $PYTHON
# and $PIP_ARGS.
side_venv() {
  local venv="$1" reqs="$2" check="$3"
  shift 3
  local name
  name="$(basename "$reqs")"
  step "1/2 virtual environment $venv (isolated from .venv)"
  if [ ! -x "$venv/bin/python" ]; then
    "$PYTHON" -m venv "$venv"
  else
    echo "    exists"
  fi
  # git ignores the whole venv through this file (as `python3.13 -m venv` writes by itself).
  [ -f "$venv/.gitignore" ] || echo '*' > "$venv/.gitignore"
  done_step

  step "2/2 pinned wheels ($name)"
  local stamp="$venv/.jtac-requirements.sha256" want
  want=$(sha256sum "$reqs" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    # PIP_REQUIRE_VIRTUALENV guards against installing into anything but this venv.
    # shellcheck disable=SC2086
    PIP_REQUIRE_VIRTUALENV=1 "$venv/bin/python" -m pip install $PIP_ARGS -q "$@" -r "$reqs"
    "$venv/bin/python" -c "$check"
    echo "$want" > "$stamp"
  else
    echo "    $name unchanged since the last install"
  fi
  done_step
}
