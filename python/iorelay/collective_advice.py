"""Collective MPI-IO settings for a job: how many aggregators and where, `cb_buffer_size`,
collective or independent calls, and the file's stripes, written out as a ROMIO hints file,
OMPIO MCA parameters and an `lfs setstripe` line, each with the evidence behind it.

The aggregators come from src/collective's rules (through `iorelay-aggregators`, which prints
its choice as JSON): Chaarawi & Gabriel's count from the write saturation point k, capped per
node, aligned to the stripes and the I/O nodes. k must have been measured on the machine
(`collective.saturation_point` in its platform file, bench/collective_saturation.py): there is
no default k, as OMPIO's built-in 32 MiB is a guess about another machine. Each MPI's
aggregators write their own way, so a platform may carry k per MPI
(`collective.saturation_point_by_mpi`), and the spread point per MPI
(`collective.spread_point_by_mpi`, bench/collective_spread.py): the call size from which one
aggregator per host beats one aggregator for all; for interleaved calls the one measured with
interleaved calls (`collective.spread_point_interleaved_by_mpi`). The job's MPI picks its own.

Whether to forward at all: where the platform has the job's MPI's measured forwarding ladder
(`collective.forwarding_by_mpi`, bench/collective_forwarding.py; iorelay.forwarding_cost), a
job keeps its I/O nodes only where calls of its size gained significantly through 1 I/O node on
the calibration pattern, and otherwise goes direct (0 I/O nodes), unless it keeps them for
another reason (`keep_ionodes`). Without a ladder it forwards as asked.

`settings()` is pure (the tool's JSON and the job in, the advice out); `advise()` runs the tool.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iorelay import forwarding_cost, paths, units
from iorelay.tools import run_json_tool

DEFAULT_STRIPE_SIZE = 1 << 20  # Lustre's default stripe size
# The bytes one aggregator takes in one cycle of a collective call by default: ROMIO's
# cb_buffer_size (OpenMPI's romio321 and MPICH), and half of OMPIO's io_ompio_bytes_per_agg
# (32 MiB), which OpenMPI 4.1's fcoll components halve to overlap two cycles.
DEFAULT_CYCLE = 16 << 20
MPIS = ("ompio", "romio321", "mpich")  # the MPI-IO implementations a platform's k may name
MPI_INT_MAX = (1 << 31) - 1  # the MPIs read cb_buffer_size and io_ompio_bytes_per_agg as ints


def ompio_bytes_per_agg(cycle: int) -> int:
    """OMPIO's io_ompio_bytes_per_agg for `cycle` bytes per aggregator and cycle: its collective
    buffer, of which OpenMPI 4.1's fcoll components (vulcan, dynamic_gen2) take half per cycle
    to overlap two cycles. (Its io_ompio_cycle_buffer_size splits independent calls instead.)"""
    return 2 * cycle


class CollectiveAdviceError(ValueError):
    """The job or the platform cannot be advised (k not measured, a bad size or count)."""


@dataclass(frozen=True)
class Job:
    ranks: int
    ranks_per_node: int
    bytes_per_call: int  # all ranks' data in one collective call
    ionodes: int = 0
    targets: int = 0  # storage targets (OSTs) the file may be striped over; 0: not striped
    stripe_size: int = DEFAULT_STRIPE_SIZE
    max_per_node: int = 1
    # The ranks' byte ranges in one call interleave (a view with several requests per call):
    # only then does ROMIO's `automatic` use two-phase I/O (see Advice.romio_hints).
    interleaved: bool = False
    mpi: str = ""  # ompio, romio321 or mpich: whose measured k and spread point apply
    # The I/O nodes are needed whatever forwarding costs (the daemons' scheduling, isolation).
    keep_ionodes: bool = False

    @property
    def nodes(self) -> int:
        return -(-self.ranks // self.ranks_per_node)


@dataclass(frozen=True)
class Advice:
    aggregators: int
    aggregator_ranks: tuple[int, ...]
    cb_buffer_size: int  # one aggregator's cycle (OMPIO's io_ompio_bytes_per_agg is twice it)
    collective: bool
    stripe_count: int  # 1: not striped
    stripe_size: int
    saturation_point: int
    reasons: tuple[str, ...]
    evidence: tuple[str, ...]
    interleaved: bool = False
    ionodes: int = 0  # the I/O nodes to forward through; 0: direct
    forwarding: str = ""  # why forward or not (forwarding_cost.decide)
    # ROMIO's cb_config_list for these aggregators (iorelay-aggregators): "*:M" with M the
    # aggregators a node must take; ROMIO's default, "*:1", takes one per host whatever
    # cb_nodes says.
    cb_config_list: str = "*:1"

    def romio_mode(self) -> str:
        """romio_cb_write / romio_cb_read. ROMIO's `automatic` runs two-phase I/O only when the
        ranks' ranges in a call interleave (each rank's start below the previous rank's end);
        otherwise each rank writes its own contiguous range itself. Where nothing interleaves,
        two-phase would only move every byte across the network once more to merge pieces that
        are already contiguous per rank, so the advice leaves ROMIO's `automatic` in place;
        `enable` is for interleaved calls, which `automatic` gathers anyway."""
        if not self.collective:
            return "disable"
        return "enable" if self.interleaved else "automatic"

    def collective_line(self) -> str:
        if not self.collective:
            return "off (independent)"
        if self.romio_mode() == "automatic":
            return ("on (ROMIO, romio_cb_write automatic: gathers only calls whose ranks' "
                    "ranges interleave; OMPIO gathers every call)")  # fmt: skip
        return "on"

    def romio_hints(self) -> dict[str, str]:
        mode = self.romio_mode()
        hints = {
            "cb_nodes": str(self.aggregators),
            "cb_buffer_size": str(self.cb_buffer_size),
            "romio_cb_write": mode,
            "romio_cb_read": mode,
        }
        if self.cb_config_list != "*:1":
            hints["cb_config_list"] = self.cb_config_list
        if not self.collective and self.interleaved:
            # ROMIO's independent write of a view with holes sieves by default: it reads the
            # rank's extent in buffers of ind_wr_buffer_size, fills its pieces in and writes
            # each back, under a lock. The other ranks' pieces fill that extent, so every rank
            # reads and rewrites them all; OMPIO (OpenMPI 4.1) writes the pieces themselves.
            hints["romio_ds_write"] = "disable"
        if self.stripe_count > 1:
            hints |= {"striping_factor": str(self.stripe_count),
                      "striping_unit": str(self.stripe_size)}  # fmt: skip
        return hints

    def ompio_parameters(self) -> dict[str, str]:
        # io_ompio_cycle_buffer_size (independent calls) is left alone.
        return {
            "io_ompio_num_aggregators": str(self.aggregators),
            "io_ompio_bytes_per_agg": str(ompio_bytes_per_agg(self.cb_buffer_size)),
        }

    def setstripe(self, path: str = "FILE") -> str:
        return f"lfs setstripe -c {self.stripe_count} -S {self.stripe_size} {path}"

    def text(self) -> str:
        ranks = ", ".join(map(str, self.aggregator_ranks))
        when = "" if self.collective else " if collective calls are used"
        lines = [*([f"I/O nodes: {self.ionodes}; {self.forwarding}"] if self.forwarding else []),
                 f"aggregators{when}: {self.aggregators} (ranks {ranks})",
                 f"collective calls: {self.collective_line()}",
                 f"cycle per aggregator: {units.format_bytes(self.cb_buffer_size)}",
                 f"stripes: {self.stripe_count} x {units.format_bytes(self.stripe_size)}", "",
                 "ROMIO hints file (ROMIO_HINTS=FILE):",
                 *(f"  {k} {v}" for k, v in self.romio_hints().items()), "",
                 "OMPIO (OpenMPI's default MPI-IO):",
                 *(f"  --mca {k} {v}" for k, v in self.ompio_parameters().items()),
                 "  (an application's cb_nodes / cb_buffer_size info hints override these;",
                 "   OMPIO reads cb_buffer_size as bytes_per_agg, twice the cycle)", "",
                 f"Lustre: {self.setstripe()}", "", "why:",
                 *(f"  {r}" for r in self.reasons), "evidence:",
                 *(f"  {e}" for e in self.evidence)]  # fmt: skip
        return "\n".join(lines)


def stripe_count_for(job: Job, aggregators: int) -> int:
    """One target per aggregator where there are enough (ROMIO on Lustre then gives each
    aggregator its own target), else every target: the count the aggregators are aligned to."""
    return 1 if job.targets <= 1 else min(job.targets, aggregators)


def settings(job: Job, choice: Mapping[str, Any], saturation_point: int, source: str) -> Advice:
    """The advice from iorelay-aggregators' JSON choice for `job` (run with the stripe count of
    stripe_count_for) and the measured k."""
    aggregators = int(choice["aggregators"])
    stripes = int(choice["job"]["stripe-count"])
    per_rank = job.bytes_per_call // job.ranks
    cycle, why_cycle = cycle_for(saturation_point, job.stripe_size)
    collective = per_rank < saturation_point
    why_collective = (
        f"each rank's own call ({units.format_bytes(per_rank)}) is below k "
        f"({units.format_bytes(saturation_point)}): gathered, the aggregators' calls reach it"
        if collective
        else f"each rank's own call ({units.format_bytes(per_rank)}) already reaches k "
        f"({units.format_bytes(saturation_point)}): gathering would only add an exchange"
    )
    mode = (
        "romio_cb_write enable: the ranks' ranges in a call interleave, so gathering merges "
        "pieces no rank could write contiguously"
        if job.interleaved
        else "romio_cb_write automatic: no rank's range in a call interleaves with another's, so "
        "ROMIO writes each rank's contiguous range itself; forcing two-phase would send every "
        "byte across the network once more for nothing to merge"
    )
    sieving = (
        "romio_ds_write disable: independent calls on interleaved ranges; ROMIO's data sieving "
        "would read and rewrite every other rank's pieces in each rank's extent"
    )
    extra = [mode] if collective else [sieving] if job.interleaved else []
    reasons = (*choice["reasons"], why_collective, why_cycle, *extra)
    evidence = (
        f"k = {units.format_bytes(saturation_point)}, measured ({source})",
        "aggregator count and placement: Chaarawi & Gabriel's rule and ROMIO's per-node "
        "placement (src/collective), not yet checked against measured runs of this job",
        "stripes: the Lustre alignment rule, with simulator evidence only (iorelay-sim-collective "
        "on platforms/cori.json: spread aggregators, one per target; docs/collective.md); no "
        "striped file system was measured here (the testbed's GlusterFS has no striping)",
    )
    config_list = choice.get("romio_hints", {}).get("cb_config_list", "*:1")
    return Advice(aggregators, tuple(int(r) for r in choice["ranks"]), cycle, collective,
                  stripes, job.stripe_size, saturation_point, reasons, evidence,
                  job.interleaved, cb_config_list=config_list)  # fmt: skip


def cycle_for(saturation_point: int, stripe_size: int) -> tuple[int, str]:
    """One aggregator's bytes per cycle, in whole stripes, and why: at least k, so that its
    write in each cycle reaches k, and never below the MPIs' default cycle. A cycle above k adds
    no write size that k says is missing, but one below the default splits a call into more
    cycles, each an exchange among all ranks: with k = 1 MiB on the testbed, OMPIO with one
    aggregator and a 1 MiB io_ompio_bytes_per_agg ran two patterns slower than with its 32 MiB
    (design runs in commit bf44c55's message; docs/collective.md)."""
    cycle = -(-max(saturation_point, DEFAULT_CYCLE) // stripe_size) * stripe_size
    k = units.format_bytes(saturation_point)
    if ompio_bytes_per_agg(cycle) > MPI_INT_MAX:
        raise CollectiveAdviceError(
            f"a cycle per aggregator of {units.format_bytes(cycle)} (k {k} in whole stripes of "
            f"{units.format_bytes(stripe_size)}) cannot be set: OMPIO's io_ompio_bytes_per_agg "
            f"({ompio_bytes_per_agg(cycle)}, twice the cycle) and ROMIO's cb_buffer_size are C "
            f"ints, at most {MPI_INT_MAX}"
        )
    said = (f"cycle per aggregator {units.format_bytes(cycle)} (cb_buffer_size; OMPIO's "
            "io_ompio_bytes_per_agg twice it: OMPIO halves it to overlap two cycles)")  # fmt: skip
    if saturation_point > DEFAULT_CYCLE:
        return cycle, f"{said}: k ({k}) rounded up to whole stripes"
    return cycle, (f"{said}: at least k ({k}) and never below the default cycle "
                   f"({units.format_bytes(DEFAULT_CYCLE)}), in whole stripes: a shorter cycle only "
                   "splits a call into more cycles, each an exchange among all ranks")  # fmt: skip


def measured_forwarding(platform_file: Path, mpi: str) -> forwarding_cost.Ladder | None:
    """`mpi`'s forwarding ladder (collective.forwarding_by_mpi), None when not measured."""
    doc = collective_section(platform_file, mpi).get("forwarding_by_mpi", {}).get(mpi)
    if not mpi or doc is None:
        return None
    try:
        return forwarding_cost.ladder_from_json(mpi, doc)
    except (KeyError, TypeError, ValueError, units.UnitError) as e:
        where = f"{platform_file}: collective.forwarding_by_mpi.{mpi}"
        raise CollectiveAdviceError(f"{where}: {e}") from e


def collective_section(platform_file: Path, mpi: str) -> dict[str, Any]:
    """The platform file's `collective` section, after checking that `mpi` (or "") is known."""
    if mpi and mpi not in MPIS:
        raise CollectiveAdviceError(f"MPI {mpi!r} unknown (known: {', '.join(MPIS)})")
    return json.loads(platform_file.read_text()).get("collective", {})


def measured_k(platform_file: Path, mpi: str = "") -> tuple[int, str]:
    """k for `mpi` from a platform file, and where it came from: the MPI's own
    (collective.saturation_point_by_mpi), else the single collective.saturation_point; an error
    saying how to measure it when neither is there."""
    collective = collective_section(platform_file, mpi)
    by_mpi = collective.get("saturation_point_by_mpi", {})
    if not isinstance(by_mpi, dict):
        raise CollectiveAdviceError(
            f"{platform_file}: collective.saturation_point_by_mpi must map MPIs to sizes"
        )
    for name, value in by_mpi.items():
        if name not in MPIS:
            raise CollectiveAdviceError(
                f"{platform_file}: collective.saturation_point_by_mpi.{name}: MPI {name!r} "
                f"unknown (known: {', '.join(MPIS)})"
            )
        size_value(platform_file, f"saturation_point_by_mpi.{name}", value)
    if mpi in by_mpi:
        own = size_value(platform_file, f"saturation_point_by_mpi.{mpi}", by_mpi[mpi])
        return own, f"{platform_file}, measured with {mpi}"
    if "saturation_point" not in collective:
        own_key = f"collective.saturation_point_by_mpi.{mpi} or " if mpi else ""
        component = f" --component {mpi}" if mpi else ""
        raise CollectiveAdviceError(
            f"{platform_file}: the write saturation point k is not measured (no "
            f"{own_key}collective.saturation_point): measure it with .venv/bin/python "
            f"bench/collective_saturation.py{component} --platform {platform_file} "
            "--platform-out FILE (on the testbed, with --testbed HOST)"
        )
    value = size_value(platform_file, "saturation_point", collective["saturation_point"])
    other = f", not with {mpi} (no saturation_point_by_mpi.{mpi})" if mpi else ""
    return value, f"{platform_file}{other}"


def size_value(platform_file: Path, key: str, value: Any) -> int:
    """A size of the platform's collective section, as its loader takes one: a string with a
    unit ("1MiB"), above 0; an error naming the file and key."""
    where = f"{platform_file}: collective.{key}"
    if not isinstance(value, str):
        raise CollectiveAdviceError(f'{where}: {value!r} must be a string with a unit ("1MiB")')
    try:
        size = units.parse_bytes(value)
    except units.UnitError as e:
        raise CollectiveAdviceError(f"{where}: {e}") from e
    if size <= 0:
        raise CollectiveAdviceError(f"{where}: {value!r} must be above 0")
    return size


def measured_saturation_point(platform_file: Path, mpi: str = "") -> int:
    """k from a platform file (the MPI's own when measured); an error when absent."""
    return measured_k(platform_file, mpi)[0]


def spread_point_for(
    collective: Mapping[str, Any], mpi: str, interleaved: bool
) -> tuple[int | None, str]:
    """The spread point that applies to a job of `mpi` from a platform's `collective` section,
    and which one it is. Interleaved calls (several requests per rank per call, gathered by
    two-phase I/O whatever the count) take the one measured with such calls
    (spread_point_interleaved_by_mpi, bench/collective_spread.py --interleaved; 0: one
    aggregator per host was never slower), others the contiguous one (spread_point_by_mpi);
    an interleaved job falls back to the contiguous one, saying so. (None, "") when neither."""
    if not mpi:
        return None, ""
    own = collective.get("spread_point_interleaved_by_mpi", {}).get(mpi)
    if interleaved and own:
        return units.parse_bytes(own), f"{mpi}'s spread point for interleaved calls"
    value = collective.get("spread_point_by_mpi", {}).get(mpi)
    if not value:
        return None, ""
    which = f"{mpi}'s spread point"
    if interleaved:
        which += " for contiguous calls (none measured with interleaved calls)"
    return units.parse_bytes(value), which


LUSTRE_STRIPE_GRANULE = 64 << 10  # Lustre stripe sizes are multiples of 64 KiB


def check_stripes(job: Job, platform_file: Path) -> None:
    """The targets asked for must exist on the platform, and the stripe size must be one Lustre
    takes: an error naming the value, never a silent cap."""
    if job.targets < 0:
        raise CollectiveAdviceError(f"--targets {job.targets}: a count of storage targets, >= 0")
    if job.stripe_size <= 0 or job.stripe_size % LUSTRE_STRIPE_GRANULE:
        raise CollectiveAdviceError(
            f"--stripe-size {job.stripe_size}: Lustre stripe sizes are positive multiples of "
            "64 KiB (lfs setstripe -S)"
        )
    storage = json.loads(platform_file.read_text()).get("storage", {})
    have = int(storage.get("targets", 1)) if storage.get("kind") == "pfs" else 1
    if job.targets > have:
        raise CollectiveAdviceError(
            f"--targets {job.targets} is above the {have} storage target(s) of {platform_file} "
            "(storage.targets): a file cannot be striped over more"
        )


def host_link_floor(job: Job, platform_file: Path) -> tuple[int, str]:
    """The fewest aggregators the platform's links allow, and why.

    k is measured through one aggregator, on one host: it says how large an aggregator's calls
    must be, not whether a second aggregator on another host adds bandwidth. Where each host's
    own link is narrower than the path all hosts share (the storage server's link, or the I/O
    nodes' links), an aggregator on every host adds its link; fewer aggregators than hosts send
    the other hosts' bytes over their links to the aggregators and then all of them again over
    the aggregators' links. So there is one aggregator on each of as many hosts as the shared
    path can take at their link speed. A platform without the link speeds gives no floor."""
    doc = json.loads(platform_file.read_text())
    try:
        host = units.parse_bytes_per_second(doc["compute"]["nic"])
        storage = doc["storage"]
        shared = units.parse_bytes_per_second(storage["nic"])
        if storage.get("kind") == "pfs":
            shared *= int(storage.get("targets", 1))
        if job.ionodes:
            shared = min(shared, job.ionodes * units.parse_bytes_per_second(doc["ionode"]["nic"]))
    except (KeyError, units.UnitError):
        return 1, ""
    floor = max(1, min(job.nodes, int(shared // host)))
    why = (
        f"at least {floor} aggregator(s), one per host: a host's link "
        f"({doc['compute']['nic']}) is narrower than the shared path "
        f"({units.format_bytes(int(shared))}/s), so each host's aggregator adds its link"
    )
    return floor, why


def check_job(job: Job) -> None:
    """Counts and sizes no job can have: an error naming the option, never a silent default."""
    for option, value, least in (("--ranks", job.ranks, 1),
                                 ("--ranks-per-node", job.ranks_per_node, 1),
                                 ("--ionodes", job.ionodes, 0),
                                 ("--max-per-node", job.max_per_node, 1)):  # fmt: skip
        if value < least:
            raise CollectiveAdviceError(f"{option} {value}: must be at least {least}")
    if job.bytes_per_call < job.ranks:
        raise CollectiveAdviceError(
            f"--bytes-per-call {job.bytes_per_call}: below one byte for each of the "
            f"{job.ranks} ranks (all ranks' data in one collective call)"
        )


def advise(job: Job, platform_file: Path) -> Advice:
    """Measured k, then iorelay-aggregators: for the unstriped count (raised to the hosts'
    link floor), then aligned to the stripe count that count asks for."""
    check_job(job)
    k, k_source = measured_k(platform_file, job.mpi)
    check_stripes(job, platform_file)
    decision = forwarding_cost.decide(job.ionodes, job.bytes_per_call,
                                      measured_forwarding(platform_file, job.mpi),
                                      job.keep_ionodes, job.mpi)  # fmt: skip
    job = dataclasses.replace(job, ionodes=decision.ionodes)

    floor, why_floor = host_link_floor(job, platform_file)
    spread, which = spread_point_for(collective_section(platform_file, job.mpi), job.mpi,
                                     job.interleaved)  # fmt: skip
    call = units.format_bytes(job.bytes_per_call)
    # Below the spread point one aggregator was measured faster than one per host: neither the
    # links' floor nor Chaarawi & Gabriel's count from k adds aggregators there (their added
    # aggregators cost more than their links and call sizes add). It was measured across hosts:
    # it says nothing of several aggregators on one host.
    below_spread = spread is not None and job.bytes_per_call < spread and job.nodes > 1
    below = f"a call of {call} is below {which} ({units.format_bytes(spread or 0)}), measured"
    skipped = f"no aggregator per host: {below}" if below_spread and floor > 1 else ""
    if below_spread:
        floor, why_floor = 1, ""
    elif floor > 1 and spread is not None:
        point = units.format_bytes(spread) if spread else "0: one per host never slower"
        why_floor += f"; a call of {call} is at or above {which} ({point})"

    def choose(stripes: int, cb_nodes: int = 0) -> dict[str, Any]:
        argv = [str(paths.find("iorelay-aggregators")), "--ranks", str(job.ranks),
                "--ranks-per-node", str(job.ranks_per_node), "--ionodes", str(job.ionodes),
                "--bytes-per-call", str(job.bytes_per_call), "--saturation-point", str(k),
                "--max-per-node", str(job.max_per_node),
                "--stripe-count", str(stripes)]  # fmt: skip
        if stripes > 1:
            argv += ["--stripe-size", str(job.stripe_size)]
        if cb_nodes:
            argv += ["--cb-nodes", str(cb_nodes)]
        return run_json_tool(argv, error=CollectiveAdviceError, timeout_s=30)

    first = choose(1)
    raised = 0
    if below_spread and int(first["aggregators"]) > 1:
        raised, rule, ruled = 1, first["reasons"], first["aggregators"]
        first = choose(1, raised)
        first["reasons"] = [*rule, f"1 aggregator, not the rule's {ruled}: {below}"]
    elif skipped:
        first["reasons"] = [*first["reasons"], skipped]
    if int(first["aggregators"]) < floor:
        raised = floor
        rule = first["reasons"]
        first = choose(1, raised)
        first["reasons"] = [*rule, why_floor]
    stripes = stripe_count_for(job, int(first["aggregators"]))
    choice = first
    if stripes > 1:
        choice = choose(stripes, raised)
        if raised:  # the count came from the floor: say what the rule said first
            choice["reasons"] = [*first["reasons"], *choice["reasons"]]
    if spread is not None:
        own = which.endswith("for interleaved calls")
        bench = "bench/collective_spread.py" + (" --interleaved" if own else "")
        k_source += f"; {which} {units.format_bytes(spread)}, measured ({bench})"
    advice = settings(job, choice, k, k_source)
    evidence = (*advice.evidence, *([decision.evidence] if decision.evidence else []))
    return dataclasses.replace(advice, ionodes=decision.ionodes, forwarding=decision.reason,
                               evidence=evidence)  # fmt: skip
