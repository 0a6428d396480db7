#!/usr/bin/env bash
# Builds the examples as a user would, against an installed iorelay (CMake package, pkg-config,
# mpicc), and runs each through daemons that `iorelay run` starts: what `make examples` checks.
# Usage: examples/run_examples.sh PREFIX IORELAY_COMMAND   (PREFIX: of `make install PREFIX=...`)
set -euo pipefail
prefix=$(realpath "$1")
iorelay=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/iorelay-examples-XXXXXX)
trap 'rm -rf "$work"' EXIT

# Runs `iorelay run ARGS...`; its own messages and the daemons' counters go to a log, shown only
# when the run fails (the example's output passes through).
through_daemons() {
  "$iorelay" run --root "$work/root" --prefix /fwd --no-preload "$@" 2>"$work/run.log" ||
    { cat "$work/run.log" >&2; echo "examples: FAILED: $*" >&2; exit 1; }
}

# The forwarded path /fwd does not exist here: a file can only reach $work/root through a daemon.
expect_in_root() {
  [[ -f "$work/root/$1" && $(stat -c %s "$work/root/$1") == "$2" ]] ||
    { echo "examples: $work/root/$1 is missing or not $2 bytes" >&2; exit 1; }
  rm "$work/root/$1"
}

mkdir "$work/root"
echo "examples: hello_relay built with CMake (find_package(iorelay)) against $prefix"
cmake -S "$here/c_api" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" ||
  { cat "$work/cmake.log" >&2; exit 1; }
cmake --build "$work/cmake" >>"$work/cmake.log" || { cat "$work/cmake.log" >&2; exit 1; }
through_daemons --ionodes 1 -- "$work/cmake/hello_relay" /fwd/hello.txt
expect_in_root hello.txt 24

echo "examples: hello_relay built with pkg-config against $prefix"
PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name iorelay.pc -print -quit)")
export PKG_CONFIG_PATH
# shellcheck disable=SC2046 # pkg-config's flags are meant to split into words
cc -Wall -Werror -o "$work/hello_relay_pc" "$here/c_api/hello_relay.c" \
  $(pkg-config --cflags --libs iorelay) -Wl,-rpath,"$(pkg-config --variable=libdir iorelay)"
through_daemons --ionodes 1 -- "$work/hello_relay_pc" /fwd/hello.txt
expect_in_root hello.txt 24

echo "examples: block_write (mpicc), 2 ranks through 2 daemons with iorelay exec"
mpicc -Wall -Werror -O2 -o "$work/block_write" "$here/mpi/block_write.c"
mpirun=(mpirun --oversubscribe -np 2 -x IORELAY_RUN_FILE)
[[ $(id -u) == 0 ]] && mpirun+=(--allow-run-as-root)
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 # one machine: shared memory, no network probing
through_daemons --ionodes 2 -- \
  "${mpirun[@]}" "$iorelay" exec -- "$work/block_write" /fwd/shared.dat
expect_in_root shared.dat $((2 << 20))
echo "examples: all passed"
