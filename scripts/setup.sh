#!/usr/bin/env bash
# Installs what `make build`, `make test` and `make demo` need on Debian 12, and the Python
# tooling into .venv. Idempotent: when everything is present it installs nothing and takes ~1 s.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev libsodium-dev nlohmann-json3-dev libabsl-dev
  fio clang-format openmpi-bin libopenmpi-dev mpich libmpich-dev ccache libsimgrid-dev
  python3-venv
)
# `setup.sh fuzz` also installs clang and libFuzzer (g++ has no libFuzzer), for `make fuzz` only.
if [[ ${1:-} == fuzz ]]; then APT_PACKAGES+=(clang-14 libfuzzer-14-dev libclang-rt-14-dev); fi
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
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y \
    --no-install-recommends "${missing[@]}"
  mapfile -t missing < <(missing_apt_packages)
  if ((${#missing[@]} != 0)); then
    log "ERROR: still missing after apt-get install: ${missing[*]}" >&2
    exit 1
  fi
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
install_apt_packages
check_python
install_python_tooling
log "done"
