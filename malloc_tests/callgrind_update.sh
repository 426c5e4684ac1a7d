#!/bin/sh
# Instructions per update() (TrajectoryController, or the composed controller with the admittance
# on), counted by callgrind (machine-independent), against a budget. Registered with ctest (label
# callgrind) by malloc_tests/CMakeLists.txt.
#
# Usage: callgrind_update.sh DRIVER WARMUP COUNT BUDGET_IR_PER_UPDATE BUILD_TYPE [CASE]
#        CASE: trajectory (default) or jtac, passed to the driver
# Exit 77 (ctest skip) when valgrind is missing, the driver lacks <valgrind/callgrind.h>, or the
# build is not optimised (the budget is for Release / RelWithDebInfo code).
set -eu
driver=$1
warmup=$2
count=$3
budget=$4
build_type=$5
case_name=${6:-trajectory}

case "$build_type" in
  Release | RelWithDebInfo) ;;
  *)
    echo "SKIP: build type '$build_type' (the budget holds for Release / RelWithDebInfo)"
    exit 77
    ;;
esac
if ! command -v valgrind > /dev/null 2>&1; then
  echo "SKIP: valgrind not found"
  exit 77
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$dir/callgrind.out" \
  "$driver" "$warmup" "$count" "$case_name" > "$dir/log" 2>&1 || status=$?
if [ "$status" -eq 77 ]; then
  grep -v '^==' "$dir/log" || true
  exit 77
fi
if [ "$status" -ne 0 ]; then
  cat "$dir/log"
  echo "FAIL: the driver exited with $status"
  exit 1
fi
grep -v '^==' "$dir/log" || true

# The profile's "totals:" (or "summary:") line carries the collected Ir.
total=$(awk '/^(totals|summary):/ { print $2; exit }' "$dir/callgrind.out")
if [ -z "$total" ] || [ "$total" -eq 0 ]; then
  echo "FAIL: no instructions collected (toggles not reached?)"
  exit 1
fi
awk -v total="$total" -v count="$count" -v budget="$budget" -v case_name="$case_name" 'BEGIN {
  per = total / count
  printf "instructions per update() (%s): %.1f (total Ir %d over %d calls); budget %d (%.0f %% used)\n",
         case_name, per, total, count, budget, 100 * per / budget
  if (per > budget) { print "FAIL: over budget"; exit 1 }
}'
