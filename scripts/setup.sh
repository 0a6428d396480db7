#!/usr/bin/env bash
# Installs what `make build`, `make test` and `make demo` need on Debian 12, and the Python
# tooling into .venv. Idempotent: when everything is present it installs nothing and takes ~1 s.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev libsodium-dev nlohmann-json3-dev libabsl-dev liburing-dev
  fio clang-format openmpi-bin libopenmpi-dev mpich libmpich-dev ccache libsimgrid-dev
  python3-venv python3-h5py-mpi python3-mpi4py
)
# `setup.sh fuzz` also installs clang and libFuzzer (g++ has no libFuzzer), for `make fuzz` only.
if [[ ${1:-} == fuzz ]]; then APT_PACKAGES+=(clang-14 libfuzzer-14-dev libclang-rt-14-dev); fi
# `setup.sh browser` also installs Chromium, for `make test` only: a test opens the analysis
# report in headless Chromium and checks what a reader sees (python/tests/test_report_browser.py).
if [[ ${1:-} == browser ]]; then APT_PACKAGES+=(chromium); fi
# `setup.sh testbed` also installs what `iorelay testbed` builds a cluster from (GlusterFS, Slurm,
# munge, ip/tc), for `make testbed-deps` only. Their services must not start on their own.
TESTBED_SERVICES=(glusterd glustereventsd munged slurmctld slurmd slurmdbd)
TESTBED_UNITS=(glusterd glustereventsd munge slurmctld slurmd slurmdbd)
if [[ ${1:-} == testbed ]]; then
  APT_PACKAGES+=(glusterfs-server glusterfs-client slurm-wlm munge iproute2 util-linux procps
    openssh-server)
  # The machine's own sshd (if it had openssh-server before) is left alone; a newly installed
  # one is disabled like the others (the testbed starts one sshd per host namespace).
  if ! dpkg-query -W -f='${Status}' openssh-server 2>/dev/null | grep -q 'install ok installed'; then
    TESTBED_SERVICES+=(sshd)
    TESTBED_UNITS+=(ssh)
  fi
fi
VENV=.venv
PYTHON=${PYTHON:-python3}
# Python extras installed for `make test` (the analysis libraries are main dependencies).
PY_EXTRAS=${IORELAY_PY_EXTRAS:-test}

log() { printf 'setup: %s\n' "$*"; }

wait_for_dpkg() {
  # Another apt/dpkg run (e.g. an unattended install) holds the lock: wait instead of failing.
  if command -v fuser >/dev/null 2>&1; then
    while fuser /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock \
      >/dev/null 2>&1; do
      log "waiting for another apt/dpkg process to finish"
      sleep 5
    done
  fi
}

missing_apt_packages() {
  local pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      echo "$pkg"
    fi
  done
}

install_apt_packages() {
  local missing
  mapfile -t missing < <(missing_apt_packages)
  if ((${#missing[@]} == 0)); then
    log "apt packages: all ${#APT_PACKAGES[@]} present"
    return
  fi
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
  log "apt packages missing: ${missing[*]}"
  wait_for_dpkg
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update
  wait_for_dpkg
  if [[ ${1:-} == testbed ]]; then hold_services "${sudo[@]}"; fi
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y \
    --no-install-recommends "${missing[@]}"
  if [[ ${1:-} == testbed ]]; then release_services "${sudo[@]}"; fi
  mapfile -t missing < <(missing_apt_packages)
  if ((${#missing[@]} != 0)); then
    log "ERROR: still missing after apt-get install: ${missing[*]}" >&2
    exit 1
  fi
}

# The testbed's daemons (glusterd, munged, slurmctld, slurmd) are started by `iorelay testbed up`
# inside its namespaces, never by the packages: during the install a policy-rc.d that denies
# every start (unless the machine already has one), afterwards the units disabled on systemd
# machines, and any daemon that started anyway (and was not running before) stopped.
PRE_RUNNING=()
OWN_POLICY=0
service_pids() {
  local name
  for name in "${TESTBED_SERVICES[@]}"; do pgrep -x "$name" || true; done
}

hold_services() {
  mapfile -t PRE_RUNNING < <(service_pids)
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\n# iorelay setup.sh testbed: no service starts during the install\nexit 101\n' |
      "$@" tee /usr/sbin/policy-rc.d >/dev/null
    "$@" chmod 755 /usr/sbin/policy-rc.d
    OWN_POLICY=1
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
}

release_services() {
  local pid unit
  if ((OWN_POLICY)); then
    "$@" rm -f /usr/sbin/policy-rc.d
    trap - EXIT
  fi
  if [[ -d /run/systemd/system ]]; then
    for unit in "${TESTBED_UNITS[@]}"; do
      "$@" systemctl disable --now "$unit.service" >/dev/null 2>&1 || true
    done
  fi
  for pid in $(service_pids); do
    if [[ " ${PRE_RUNNING[*]} " != *" $pid "* ]]; then
      log "stopping $(cat "/proc/$pid/comm" 2>/dev/null) (pid $pid), started by its package"
      "$@" kill "$pid" || true
    fi
  done
}

check_python() {
  if ! command -v "$PYTHON" >/dev/null 2>&1; then
    log "ERROR: $PYTHON not found; iorelay's tooling needs Python >= 3.11" >&2
    exit 1
  fi
  if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    log "ERROR: $("$PYTHON" --version 2>&1) is too old; iorelay's tooling needs Python >= 3.11" >&2
    log "       (set PYTHON=/path/to/python3.11 to choose another interpreter)" >&2
    exit 1
  fi
}

# The stamp records what the venv was installed from; when it matches, pip is not run at all.
venv_stamp() {
  {
    "$VENV/bin/python" --version 2>&1
    echo "extras=$PY_EXTRAS"
    sha256sum pyproject.toml
  } | sha256sum | cut -d' ' -f1
}

install_python_tooling() {
  if [[ ! -x $VENV/bin/python ]] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    log "creating $VENV with $("$PYTHON" --version 2>&1)"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
  fi
  local stamp_file=$VENV/.iorelay-setup-stamp
  if [[ -f $stamp_file && $(cat "$stamp_file") == "$(venv_stamp)" && -x $VENV/bin/iorelay ]] &&
    "$VENV/bin/python" -c 'import iorelay' >/dev/null 2>&1; then
    log "python tooling: up to date in $VENV"
    return
  fi
  log "installing the iorelay Python package (editable, extras: $PY_EXTRAS) into $VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[$PY_EXTRAS]"
  venv_stamp >"$stamp_file"
}

# Two setups at once (e.g. `make -j test demo`) would race in apt and pip: serialize them.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TMPDIR:-/tmp}/iorelay-setup-$(id -u)-$(pwd | cksum | cut -d' ' -f1).lock"
  flock 9
fi
install_apt_packages "${1:-}"
check_python
install_python_tooling
log "done"
