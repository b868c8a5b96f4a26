# Sourced by the H200 call scripts (copy it beside them into .device/): `run LIMIT_S
# LABEL COMMAND...` appends the label, the command's output and its exit status and
# milliseconds to $log, which the sourcing script sets.
run() {
  local limit=$1 label=$2; shift 2
  echo "=== $label" >>"$log"
  local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "--- exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"
}
