# source scripts/env.sh — an interactive shell for builds and tests after scripts/setup.sh.
_jtac_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck disable=SC1091
source "$_jtac_root/.venv/bin/activate"
export AMENT_PREFIX_PATH="$VIRTUAL_ENV" CMAKE_PREFIX_PATH="$VIRTUAL_ENV"
# DDS stays on this machine unless you say otherwise.
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
# What ros-wheels-bootstrapper's .pth would compute on every Python start (by re-executing it),
# set once in a fixed order: faster starts, and valgrind/embedding see a single process.
_jtac_sp="$("$VIRTUAL_ENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")"
export LD_LIBRARY_PATH="$VIRTUAL_ENV/lib$(for d in "$_jtac_sp"/ros_*.libs; do printf ':%s' "$d"; done)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1
unset _jtac_root _jtac_sp
