#!/bin/bash
# Runs preload_e2e_prog under LD_PRELOAD against a private iorelayd: one export
# (/fwd/job → a temporary backing dir), one credential; the daemon is always killed.
# Usage: run_e2e.sh IORELAYD LIBIORELAY_PRELOAD_SO PRELOAD_E2E_PROG
set -u
daemon=$1 preload=$2 prog=$3
[ -x "$daemon" ] || { echo "iorelayd not built: $daemon"; exit 1; }
work=$(mktemp -d /tmp/iorXXXX)
daemon_pid=
cleanup() {
  if [ -n "$daemon_pid" ]; then kill "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/backing" "$work/local"
(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/secret")

"$daemon" --listen "unix:$work/d.sock" --export "/fwd/job=$work/backing" \
  --credential "app=$work/secret" --ready-file "$work/ready" > "$work/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
  [ -s "$work/ready" ] && break
  kill -0 "$daemon_pid" 2>/dev/null || break
  sleep 0.1
done
if [ ! -s "$work/ready" ]; then
  echo "iorelayd did not become ready:"; cat "$work/daemon.log"; exit 1
fi

# A sanitizer build of the interposer needs its runtime first in the initial library list:
# preload it too (the test program itself is not instrumented).
runtime=$(ldd "$preload" | awk '/libasan\.so/ {print $3}')
[ -n "$runtime" ] && preload="$runtime:$preload"

env LD_PRELOAD="$preload" IORELAY_SERVERS="unix:$work/d.sock" IORELAY_SECRET_FILE="$work/secret" \
  IORELAY_PREFIX=/fwd/job IORELAY_TIMEOUT_MS=5000 \
  timeout 60 "$prog" /fwd/job "$work/backing" "$work/local"
rc=$?
[ $rc -ne 0 ] && { echo "--- daemon log"; tail -20 "$work/daemon.log"; }
exit $rc
