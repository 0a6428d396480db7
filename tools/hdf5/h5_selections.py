#!/usr/bin/python3
"""A parallel HDF5 workload of small selections, the kind that costs forwarding most: ranks of
one MPI job write and read one shared HDF5 file through h5py's MPI-IO driver, then check every
element. Run under mpirun with the system Python (Debian's python3-h5py-mpi, python3-mpi4py):

    mpirun -np 4 /usr/bin/python3 tools/hdf5/h5_selections.py --dir DIR [--rows 256]
        [--width 8] [--elements 4096] [--collective] [--keep]
    /usr/bin/python3 tools/hdf5/h5_selections.py --check FILE   # a kept file, read serially

Two datasets in DIR/h5-selections.h5:
- `tiles`, ROWS x (P x WIDTH) int64: rank r owns columns [r*WIDTH, (r+1)*WIDTH) and writes and
  reads them one row at a time (a WIDTH-element selection per call);
- `strided`, P x ELEMENTS int64: rank r owns every P-th element from r, written and read as one
  hyperslab with stride P (element-strided: HDF5 turns it into ELEMENTS tiny accesses, or with
  --collective into a two-phase exchange).
Every element's value names its rank and position, so a misplaced byte is found. Prints one JSON
object: per phase the slowest rank's seconds, the bytes, and ok (every element checked by its
owner, and rank 0 reading the whole file back). Exit 1 on wrong data.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import h5py
import numpy as np
from mpi4py import MPI


def expected_tiles(rank: int, rows: int, width: int) -> np.ndarray:
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(width, dtype=np.int64)[None, :]
    return (rank << 40) | (r << 20) | c


def expected_strided(rank: int, elements: int) -> np.ndarray:
    return (rank << 40) | (1 << 39) | np.arange(elements, dtype=np.int64)


def check_whole(f: h5py.File) -> bool:
    """Every element of a finished file, as one reader sees it (the rank count and the shapes
    are read from the file)."""
    tiles, spread = f["tiles"], f["strided"]
    rows, cols = tiles.shape
    ranks = spread.shape[0] // f.attrs["elements"]
    width, elements = cols // ranks, int(f.attrs["elements"])
    full = np.hstack([expected_tiles(r, rows, width) for r in range(ranks)])
    spread_all = np.empty(ranks * elements, dtype=np.int64)
    for r in range(ranks):
        spread_all[r::ranks] = expected_strided(r, elements)
    return bool(np.array_equal(tiles[...], full) and np.array_equal(spread[...], spread_all))


def timed(comm: MPI.Comm, phase) -> float:
    comm.Barrier()
    began = time.perf_counter()
    phase()
    comm.Barrier()
    return comm.allreduce(time.perf_counter() - began, op=MPI.MAX)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir")
    ap.add_argument("--check", metavar="FILE", help="check a kept file, serially, and exit")
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--width", type=int, default=8)
    ap.add_argument("--elements", type=int, default=4096)
    ap.add_argument("--collective", action="store_true")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if args.check:
        with h5py.File(args.check, "r") as f:
            ok = check_whole(f)
        print(json.dumps({"file": args.check, "ok": ok}))
        return 0 if ok else 1
    if not args.dir:
        ap.error("--dir is required")
    comm = MPI.COMM_WORLD
    rank, ranks = comm.Get_rank(), comm.Get_size()
    path = os.path.join(args.dir, "h5-selections.h5")
    rows, width, elements = args.rows, args.width, args.elements
    mine = expected_tiles(rank, rows, width)
    strided = expected_strided(rank, elements)
    cols = slice(rank * width, (rank + 1) * width)
    f = h5py.File(path, "w", driver="mpio", comm=comm)
    tiles = f.create_dataset("tiles", (rows, ranks * width), dtype="i8")
    spread = f.create_dataset("strided", (ranks * elements,), dtype="i8")
    f.attrs["elements"] = elements

    def access(ds: h5py.Dataset):
        return ds.collective if args.collective else _nothing()

    def write() -> None:
        with access(tiles):
            for row in range(rows):
                tiles[row, cols] = mine[row]
        with access(spread):
            spread[rank::ranks] = strided
        f.flush()

    got_tiles = np.zeros_like(mine)
    got_strided = np.zeros_like(strided)

    def read() -> None:
        with access(tiles):
            for row in range(rows):
                got_tiles[row] = tiles[row, cols]
        with access(spread):
            got_strided[:] = spread[rank::ranks]

    write_s = timed(comm, write)
    read_s = timed(comm, read)
    f.close()
    ok = bool(np.array_equal(got_tiles, mine) and np.array_equal(got_strided, strided))
    ok = comm.allreduce(ok, op=MPI.LAND)
    if rank == 0:  # the whole file, as one reader sees it after every rank closed it
        with h5py.File(path, "r") as whole:
            ok = ok and check_whole(whole)
        if not args.keep:
            os.unlink(path)
        data = 8 * ranks * (rows * width + elements)
        print(json.dumps({
            "ranks": ranks, "collective": args.collective, "ok": ok, "bytes": data,
            "phases": [{"operation": "write", "seconds": write_s},
                       {"operation": "read", "seconds": read_s}],
        }))  # fmt: skip
    ok = comm.bcast(ok, root=0)
    return 0 if ok else 1


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


if __name__ == "__main__":
    sys.exit(main())
