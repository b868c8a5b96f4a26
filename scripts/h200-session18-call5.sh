#!/usr/bin/env bash
# Eighteenth session, H200 call 5: conformance on the session's final tree (the engine
# of call 3, the kernels' knobs as committed).
#   bash .device/on-device.sh bash .device/h200-session18-call5.sh
set -uo pipefail
log=$OUT/call5.log
. "$(dirname "$0")/h200-lib.sh"
run 70 "conformance --backend all" crucible conformance --backend all
run 70 "conformance cuda 2^20" crucible conformance --backend cuda --max-log-size 20
grep -E "^(===|--- exit)|passed" "$log"
