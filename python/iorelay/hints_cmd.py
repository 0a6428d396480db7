"""`iorelay hints`: the collective MPI-IO settings for a job (iorelay.collective_advice) as a
ROMIO hints file, OMPIO parameters and an `lfs setstripe` line, with the reasons and the
evidence; `--romio-hints FILE` also writes the hints file ROMIO reads (ROMIO_HINTS=FILE)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from iorelay import collective_advice, paths, units
from iorelay.simulate import SimulateError, platform_path


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "hints",
        help="collective MPI-IO settings for a job: aggregators, buffers, stripes",
        description="Collective MPI-IO settings for a job, from the aggregator rules and the "
        "machine's measured write saturation point k (its platform file's "
        "collective.saturation_point, or with --mpi that MPI's own in "
        "collective.saturation_point_by_mpi; bench/collective_saturation.py measures it) and, "
        "with --mpi, that MPI's spread point (collective.spread_point_by_mpi; with "
        "--interleaved, collective.spread_point_interleaved_by_mpi where measured; "
        "bench/collective_spread.py); with --ionodes, whether to forward at all, from that "
        "MPI's measured forwarding ladder (collective.forwarding_by_mpi; "
        "bench/collective_forwarding.py): only a significant gain keeps the I/O nodes; a "
        "loss or a difference within noise sends the job direct (it costs no I/O nodes).",
    )
    p.add_argument("--ranks", type=int, required=True, help="MPI ranks")
    p.add_argument("--ranks-per-node", type=int, default=1)
    p.add_argument("--bytes-per-call", required=True, help="all ranks' data in one call, e.g. 1G")
    p.add_argument("--platform", required=True, help="platforms/NAME.json by NAME, or a path")
    p.add_argument("--ionodes", type=int, default=0, help="I/O nodes the job forwards through")
    p.add_argument("--targets", type=int, default=0, help="storage targets to stripe over")
    p.add_argument("--stripe-size", default="1MiB")
    p.add_argument("--max-per-node", type=int, default=1, help="aggregators per node at most")
    p.add_argument(
        "--interleaved",
        action="store_true",
        help="the ranks' ranges in one call interleave (a view with several requests "
        "per call): ROMIO's two-phase is then enabled, else left automatic",
    )
    p.add_argument(
        "--mpi",
        choices=collective_advice.MPIS,
        default="",
        help="the job's MPI-IO (OpenMPI's ompio or romio321, or mpich): its own measured k "
        "and spread point, where the platform has them",
    )
    p.add_argument(
        "--keep-ionodes",
        action="store_true",
        help="keep the --ionodes whatever forwarding was measured to cost (they are needed for "
        "another reason: the daemons' scheduling or isolation)",
    )
    p.add_argument("--romio-hints", type=Path, help="also write the ROMIO hints file here")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        job = collective_advice.Job(
            ranks=args.ranks, ranks_per_node=args.ranks_per_node,
            bytes_per_call=units.parse_bytes(args.bytes_per_call), ionodes=args.ionodes,
            targets=args.targets, stripe_size=units.parse_bytes(args.stripe_size),
            max_per_node=args.max_per_node, interleaved=args.interleaved, mpi=args.mpi,
            keep_ionodes=args.keep_ionodes,
        )  # fmt: skip
        advice = collective_advice.advise(job, platform_path(args.platform))
    except (collective_advice.CollectiveAdviceError, units.UnitError, SimulateError,
            paths.NotBuiltError, OSError) as e:  # fmt: skip
        print(f"iorelay hints: {e}", file=sys.stderr)
        return 2
    if args.romio_hints:
        lines = (f"{k} {v}" for k, v in advice.romio_hints().items())
        args.romio_hints.write_text("\n".join(lines) + "\n")
    if args.json:
        doc = asdict(advice) | {"romio_hints": advice.romio_hints(),
                                "ompio_parameters": advice.ompio_parameters(),
                                "setstripe": advice.setstripe()}  # fmt: skip
        print(json.dumps(doc, indent=1))
    else:
        print(advice.text())
    return 0
