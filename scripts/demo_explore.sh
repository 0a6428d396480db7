#!/usr/bin/env bash
# `make demo` after its fio step: where the default exploration runs, and running it. On the
# testbed when this machine can build one: as root with /dev/fuse the testbed's packages are
# installed first when missing (`setup.sh testbed`, services held from starting); otherwise on
# local daemons, saying why. DEMO_ON=local or DEMO_ON=testbed chooses instead.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

IORELAY=${IORELAY:-.venv/bin/iorelay}
DEMO_ON=${DEMO_ON:-auto}
DEMO_DIR=${DEMO_DIR:-results/demo}
DEMO_TESTBED_DIR=${DEMO_TESTBED_DIR:-results/demo-testbed}

say() { printf 'make demo: %s\n' "$*"; }

case $DEMO_ON in
  auto | local | testbed) ;;
  *)
    say "DEMO_ON=$DEMO_ON: want auto, local or testbed" >&2
    exit 2
    ;;
esac

if [[ $DEMO_ON == auto && $(id -u) -eq 0 && -e /dev/fuse ]] &&
  ! "$IORELAY" testbed check >/dev/null; then
  say "root with /dev/fuse: installing the testbed's packages (GlusterFS, Slurm, munge;" \
    "as \`make testbed-deps\`, their services held from starting)"
  if ! bash scripts/setup.sh testbed; then
    say "installing the testbed's packages failed (see above)"
  fi
fi

if [[ $DEMO_ON == auto ]]; then
  if why=$("$IORELAY" testbed check); then DEMO_ON=testbed; else DEMO_ON=local; fi
fi

if [[ $DEMO_ON == testbed ]]; then
  say "the exploration runs on the testbed: hosts in network namespaces, capped links," \
    "GlusterFS, Slurm (DEMO_ON=local: on local daemons instead)"
  "$IORELAY" demo --testbed --out "$DEMO_TESTBED_DIR"
  echo "report: $DEMO_TESTBED_DIR/report/report.html"
else
  say "the exploration runs on local daemons, where direct access usually wins" \
    "${why:+(${why#iorelay testbed: })}"
  "$IORELAY" explore --out "$DEMO_DIR"
  "$IORELAY" analyze "$DEMO_DIR" --out "$DEMO_DIR/report"
  echo "report: $DEMO_DIR/report/report.html"
fi
