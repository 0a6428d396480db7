"""Collective MPI-IO advice (iorelay.collective_advice): settings from src/collective's choice
and the measured k, as ROMIO hints, OMPIO parameters and a Lustre stripe line; no advice
without a measured k."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from iorelay import collective_advice as ca
from iorelay.simulate import PLATFORMS_DIR

MIB = 1 << 20


def platform_with(tmp_path: Path, name: str, collective: dict, file: str) -> Path:
    """platforms/NAME.json with `collective` as its collective section, as tmp_path/FILE."""
    doc = json.loads((PLATFORMS_DIR / f"{name}.json").read_text())
    doc["collective"] = collective
    (tmp_path / file).write_text(json.dumps(doc))
    return tmp_path / file


def choice(aggregators: int, ranks: list[int], stripes: int) -> dict:
    """What iorelay-aggregators prints, reduced to what the advice reads."""
    return {"aggregators": aggregators, "ranks": ranks, "reasons": ["a reason"],
            "job": {"stripe-count": stripes}}  # fmt: skip


def test_small_calls_gather_into_cycles_of_whole_stripes() -> None:
    job = ca.Job(ranks=16, ranks_per_node=4, bytes_per_call=64 * MIB, targets=8,
                 stripe_size=4 * MIB, interleaved=True)  # fmt: skip
    a = ca.settings(job, choice(4, [0, 4, 8, 12], 4), saturation_point=6 * MIB, source="m.json")
    assert a.collective  # 4 MiB per rank < k
    # k (6 MiB) is below the MPIs' default cycle, which stays: 16 MiB, whole 4 MiB stripes.
    assert a.cb_buffer_size == 16 * MIB
    assert a.romio_hints() == {
        "cb_nodes": "4", "cb_buffer_size": str(16 * MIB), "romio_cb_write": "enable",
        "romio_cb_read": "enable", "striping_factor": "4", "striping_unit": str(4 * MIB),
    }  # fmt: skip
    # OMPIO's collective buffer is bytes_per_agg, twice the cycle (it halves it to overlap two
    # cycles); io_ompio_cycle_buffer_size (which splits independent calls) is left alone.
    assert a.ompio_parameters() == {"io_ompio_num_aggregators": "4",
                                    "io_ompio_bytes_per_agg": str(32 * MIB)}  # fmt: skip
    assert a.setstripe("/lustre/out.h5") == f"lfs setstripe -c 4 -S {4 * MIB} /lustre/out.h5"
    assert "measured (m.json)" in a.evidence[0]
    assert any("no striped file system was measured" in e for e in a.evidence)
    assert any("simulator evidence only" in e for e in a.evidence)


def test_cycle_reaches_k_in_whole_stripes_and_never_shrinks_below_the_default() -> None:
    assert ca.cycle_for(64 * MIB, MIB)[0] == 64 * MIB  # k above the default
    assert ca.cycle_for(33 * MIB, 4 * MIB)[0] == 36 * MIB  # ... in whole stripes
    assert ca.cycle_for(MIB, MIB)[0] == 16 * MIB  # the testbed's idle k: the default
    assert ca.cycle_for(MIB, 12 * MIB)[0] == 24 * MIB  # the default in whole stripes
    assert "k (64MiB) rounded up to whole stripes" in ca.cycle_for(64 * MIB, MIB)[1]
    assert "never below the default cycle (16MiB)" in ca.cycle_for(MIB, MIB)[1]
    job = ca.Job(ranks=4, ranks_per_node=1, bytes_per_call=256 * MIB)
    a = ca.settings(job, choice(4, [0, 1, 2, 3], 1), saturation_point=64 * MIB, source="m")
    assert a.ompio_parameters()["io_ompio_bytes_per_agg"] == str(128 * MIB)
    assert "cycle per aggregator: 64MiB" in a.text()


def test_romio_gathers_only_interleaved_calls() -> None:
    # ROMIO's `automatic` runs two-phase I/O only where the ranks' ranges in a call interleave;
    # where they do not, the advice leaves it automatic instead of forcing an exchange.
    job = ca.Job(ranks=12, ranks_per_node=4, bytes_per_call=3 * MIB)
    a = ca.settings(job, choice(3, [0, 4, 8], 1), saturation_point=64 * MIB, source="m")
    assert a.collective and a.romio_hints()["romio_cb_write"] == "automatic"
    assert a.romio_hints()["romio_cb_read"] == "automatic"
    assert any("automatic" in r for r in a.reasons)
    job = ca.Job(ranks=12, ranks_per_node=4, bytes_per_call=3 * MIB, interleaved=True)
    a = ca.settings(job, choice(3, [0, 4, 8], 1), saturation_point=64 * MIB, source="m")
    assert a.romio_hints()["romio_cb_write"] == "enable"


def test_one_aggregator_per_host_where_host_links_are_the_narrow_path() -> None:
    testbed = PLATFORMS_DIR / "testbed.json"  # hosts 200 Mbit/s, storage 2000, I/O node 1000
    assert ca.host_link_floor(ca.Job(12, 4, MIB), testbed)[0] == 3
    assert ca.host_link_floor(ca.Job(12, 4, MIB, ionodes=1), testbed)[0] == 3
    floor, why = ca.host_link_floor(ca.Job(64, 2, MIB, ionodes=1), testbed)  # 32 hosts
    assert floor == 5 and "one per host" in why  # 1000 / 200: the I/O node's link takes 5
    assert ca.host_link_floor(ca.Job(64, 2, MIB), testbed)[0] == 10  # the storage link: 10
    # local.json: one host; a platform without link speeds gives no floor.
    assert ca.host_link_floor(ca.Job(4, 4, MIB), PLATFORMS_DIR / "local.json")[0] == 1


def test_calls_already_at_k_stay_independent() -> None:
    job = ca.Job(ranks=4, ranks_per_node=1, bytes_per_call=4 * 40 * MIB)
    a = ca.settings(job, choice(4, [0, 1, 2, 3], 1), saturation_point=32 * MIB, source="m")
    assert not a.collective and a.romio_hints()["romio_cb_write"] == "disable"
    assert "striping_factor" not in a.romio_hints()
    assert "if collective calls are used" in a.text()


def test_independent_calls_on_interleaved_ranges_write_their_pieces_without_sieving() -> None:
    # Each rank's 2 MiB per call reaches k = 1 MiB: independent calls. Its pieces interleave
    # with the others', so ROMIO's data sieving would read and rewrite their bytes: off.
    job = ca.Job(ranks=6, ranks_per_node=2, bytes_per_call=12 * MIB, interleaved=True)
    a = ca.settings(job, choice(3, [0, 2, 4], 1), saturation_point=MIB, source="m")
    assert not a.collective and a.romio_hints()["romio_ds_write"] == "disable"
    assert any("romio_ds_write disable" in r for r in a.reasons)
    # Contiguous ranges have no holes to sieve; collective calls gather before writing.
    contiguous = ca.settings(dataclasses.replace(job, interleaved=False),
                             choice(3, [0, 2, 4], 1), saturation_point=MIB, source="m")  # fmt: skip
    gathered = ca.settings(job, choice(3, [0, 2, 4], 1), saturation_point=4 * MIB, source="m")
    for other in (contiguous, gathered):
        assert "romio_ds_write" not in other.romio_hints()
        assert not any("romio_ds_write" in r for r in other.reasons)


def test_one_target_per_aggregator_where_there_are_enough() -> None:
    assert ca.stripe_count_for(ca.Job(16, 4, MIB, targets=8), aggregators=4) == 4
    assert ca.stripe_count_for(ca.Job(16, 4, MIB, targets=2), aggregators=4) == 2
    assert ca.stripe_count_for(ca.Job(16, 4, MIB, targets=0), aggregators=4) == 1


def test_no_advice_without_a_measured_k(tmp_path: Path) -> None:
    with pytest.raises(ca.CollectiveAdviceError, match=r"not measured.*collective_saturation"):
        ca.advise(ca.Job(4, 1, MIB), PLATFORMS_DIR / "marenostrum4-nominal.json")
    # Another MPI's k is not this one's: the error names the MPI's key and how to measure it.
    platform_with(
        tmp_path, "testbed", {"saturation_point_by_mpi": {"ompio": "64MiB"}}, "ompio-only.json"
    )
    with pytest.raises(ca.CollectiveAdviceError, match=r"saturation_point_by_mpi\.mpich .*"
                       r"--component mpich"):  # fmt: skip
        ca.advise(ca.Job(4, 1, MIB, mpi="mpich"), tmp_path / "ompio-only.json")


@pytest.mark.needs_build("iorelay-aggregators")
def test_advice_through_the_aggregator_rules(tmp_path: Path) -> None:
    # cori: a pfs, its targets stripe
    platform = platform_with(tmp_path, "cori", {"saturation_point": "32MiB"}, "measured.json")
    # 16 ranks on 4 nodes, 100 MiB per call: ceil(100 / 32) = 4 aggregators, one per node; 8
    # targets: 4 stripes, one target each.
    job = ca.Job(ranks=16, ranks_per_node=4, bytes_per_call=100 * MIB, targets=8)
    a = ca.advise(job, platform)
    assert (a.aggregators, a.aggregator_ranks, a.stripe_count) == (4, (0, 4, 8, 12), 4)
    assert a.collective and a.cb_buffer_size == 32 * MIB
    # A k of 64 MiB (the testbed's on a loaded day) asks for 1 aggregator for 3 MiB calls; the
    # testbed's hosts' links raise it to one per host, and the reasons say both.
    loaded = platform_with(tmp_path, "testbed", {"saturation_point": "64MiB"}, "loaded.json")
    testbed = ca.advise(ca.Job(12, 4, 3 * MIB, ionodes=1), loaded)
    assert (testbed.aggregators, testbed.aggregator_ranks) == (3, (0, 4, 8))
    assert any("= 1" in r for r in testbed.reasons)
    assert any("one per host" in r for r in testbed.reasons)
    # Counts and sizes no job can have, each named by its option.
    bad = [
        (ca.Job(0, 1, MIB), "--ranks 0: must be at least 1"),
        (ca.Job(4, 0, MIB), "--ranks-per-node 0"),
        (ca.Job(4, 1, MIB, ionodes=-1), "--ionodes -1: must be at least 0"),
        (ca.Job(4, 1, MIB, max_per_node=0), "--max-per-node 0"),
        (ca.Job(16, 4, 10), "--bytes-per-call 10: below one byte for each of the 16"),
    ]
    for job, message in bad:
        with pytest.raises(ca.CollectiveAdviceError, match=message):
            ca.advise(job, platform)


@pytest.mark.needs_build("iorelay-aggregators")
def test_romio_hints_allow_the_aggregators_per_node_advised(tmp_path: Path) -> None:
    """More than one aggregator per node needs cb_config_list *:M: ROMIO's default *:1 takes
    one per host whatever cb_nodes says. M is what the count needs, not --max-per-node: ROMIO's
    wildcard takes up to M ranks of each host in rank order and stops at cb_nodes, so a larger
    M would pack the aggregators on the first hosts."""
    platform = platform_with(tmp_path, "cori", {"saturation_point": "32MiB"}, "measured.json")
    a = ca.advise(ca.Job(128, 32, 1 << 30, max_per_node=4), platform)
    assert a.aggregators == 16
    assert a.romio_hints()["cb_config_list"] == "*:4"
    six = ca.advise(ca.Job(128, 32, 192 * MIB, max_per_node=4), platform)
    assert six.aggregators == 6 and six.romio_hints()["cb_config_list"] == "*:2"
    for job in (ca.Job(128, 32, 1 << 30), ca.Job(128, 32, 128 * MIB, max_per_node=4)):
        one = ca.advise(job, platform)
        assert one.aggregators == 4 and "cb_config_list" not in one.romio_hints()


def test_a_cycle_beyond_an_mpi_int_is_refused(tmp_path: Path) -> None:
    """OMPIO's io_ompio_bytes_per_agg (twice the cycle) and ROMIO's cb_buffer_size are C ints:
    a 1 GiB stripe makes a cycle whose bytes_per_agg OpenMPI would refuse."""
    platform = platform_with(tmp_path, "cori", {"saturation_point": "32MiB"}, "measured.json")
    with pytest.raises(ca.CollectiveAdviceError, match=r"1GiB .*2147483648.* at most 2147483647"):
        ca.advise(ca.Job(64, 16, 64 * MIB, targets=4, stripe_size=1 << 30), platform)
    assert ca.cycle_for(32 * MIB, 512 * MIB)[0] == 512 * MIB  # 1 GiB bytes_per_agg: an int


@pytest.mark.parametrize(
    ("collective", "message"),
    [
        ({"saturation_point": "0B"}, r"collective\.saturation_point: '0B' must be above 0"),
        ({"saturation_point": 1048576}, r"collective\.saturation_point: 1048576 must be a string"),
        ({"saturation_point": "banana"}, r"collective\.saturation_point: .*banana"),
        (
            {"saturation_point": "1MiB", "saturation_point_by_mpi": {"foompi": "1MiB"}},
            r"saturation_point_by_mpi\.foompi: MPI 'foompi' unknown",
        ),
        (
            {"saturation_point_by_mpi": {"ompio": "0B"}},
            r"saturation_point_by_mpi\.ompio: '0B' must be above 0",
        ),
        ({"saturation_point_by_mpi": ["1MiB"]}, r"saturation_point_by_mpi must map MPIs to sizes"),
    ],
)
def test_a_platforms_bad_k_is_refused_naming_file_and_key(
    tmp_path: Path, collective: dict, message: str
) -> None:
    """k as the simulator's platform loader takes it: a string with a unit, above 0, under a
    known MPI; else an error naming the file and the key, never advice from it."""
    platform = platform_with(tmp_path, "testbed", collective, "bad-k.json")
    with pytest.raises(ca.CollectiveAdviceError, match=message) as e:
        ca.advise(ca.Job(4, 1, MIB, mpi="ompio"), platform)
    assert str(platform) in str(e.value)


@pytest.mark.needs_build("iorelay-aggregators")
def test_iorelay_hints_writes_the_romio_hints_file(tmp_path: Path, capsys) -> None:
    from iorelay import cli

    platform = platform_with(tmp_path, "local", {"saturation_point": "32MiB"}, "measured.json")
    hints = tmp_path / "romio-hints"
    argv = ["hints", "--ranks", "16", "--ranks-per-node", "4", "--bytes-per-call", "100M",
            "--platform", str(platform), "--romio-hints", str(hints), "--json"]  # fmt: skip
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["aggregators"] == 4 and out["romio_hints"]["cb_nodes"] == "4"
    assert hints.read_text().splitlines()[0] == "cb_nodes 4"
    assert cli.main(["hints", "--ranks", "4", "--bytes-per-call", "1M", "--platform", "cori"]) == 2
    err = capsys.readouterr().err
    # (the command it suggests measures this platform, not collective_saturation's default)
    assert "not measured" in err and f"--platform {PLATFORMS_DIR / 'cori.json'}" in err


def test_stripes_the_platform_cannot_hold_are_refused(tmp_path: Path) -> None:
    platform = platform_with(tmp_path, "cori", {"saturation_point": "32MiB"}, "cori-measured.json")
    with pytest.raises(ca.CollectiveAdviceError, match=r"--targets 300 is above the 248"):
        ca.advise(ca.Job(64, 16, 64 * MIB, targets=300), platform)
    with pytest.raises(ca.CollectiveAdviceError, match=r"--stripe-size 1000000: .*64 KiB"):
        ca.advise(ca.Job(64, 16, 64 * MIB, targets=8, stripe_size=1_000_000), platform)
    with pytest.raises(ca.CollectiveAdviceError, match=r"--targets -1"):
        ca.advise(ca.Job(64, 16, 64 * MIB, targets=-1), platform)
    local = json.loads((PLATFORMS_DIR / "local.json").read_text())  # nfs: one server
    local["collective"] = {"saturation_point": "32MiB"}
    (tmp_path / "local.json").write_text(json.dumps(local))
    with pytest.raises(ca.CollectiveAdviceError, match=r"above the 1 storage target"):
        ca.advise(ca.Job(4, 1, 4 * MIB, targets=2), tmp_path / "local.json")


@pytest.mark.needs_build("iorelay-aggregators")
def test_each_mpi_its_own_k_and_spread_point(tmp_path: Path) -> None:
    platform = platform_with(tmp_path, "testbed",
                             {"saturation_point": "64MiB",
                              "saturation_point_by_mpi": {"ompio": "64MiB", "mpich": "2MiB"},
                              "spread_point_by_mpi": {"ompio": "2MiB"}},
                             "per-mpi.json")  # fmt: skip
    # OMPIO, 1.5 MiB calls on 3 hosts: below its spread point, so no aggregator per host.
    a = ca.advise(ca.Job(12, 4, 3 * MIB // 2, mpi="ompio"), platform)
    assert a.aggregators == 1 and any("below ompio's spread point (2MiB), measured" in r
                                      for r in a.reasons)  # fmt: skip
    assert "measured with ompio; ompio's spread point 2MiB, measured" in a.evidence[0]
    assert ca.advise(ca.Job(12, 4, 3 * MIB, mpi="ompio"), platform).aggregators == 3
    # MPICH: its own k (ceil(6 / 2) = 3) and no spread point measured, so the hosts' floor.
    mpich = ca.advise(ca.Job(6, 2, 6 * MIB, mpi="mpich"), platform)
    assert mpich.saturation_point == 2 * MIB and mpich.aggregators == 3
    assert ca.advise(ca.Job(12, 4, 3 * MIB // 2, mpi="mpich"), platform).aggregators == 3
    # ROMIO has no k of its own here: the single value, and the evidence says so.
    romio = ca.advise(ca.Job(12, 4, 3 * MIB, mpi="romio321"), platform)
    assert romio.saturation_point == 64 * MIB
    assert "not with romio321" in romio.evidence[0]
    with pytest.raises(ca.CollectiveAdviceError, match="MPI 'intelmpi' unknown"):
        ca.advise(ca.Job(12, 4, 3 * MIB, mpi="intelmpi"), platform)


def test_interleaved_calls_take_the_spread_point_measured_with_interleaved_calls() -> None:
    collective = {
        "spread_point_by_mpi": {"mpich": "1751KiB", "ompio": "1781KiB"},
        "spread_point_interleaved_by_mpi": {"mpich": "0B", "romio321": "3MiB"},
    }
    assert ca.spread_point_for(collective, "mpich", interleaved=True) == (
        0, "mpich's spread point for interleaved calls")  # fmt: skip
    assert ca.spread_point_for(collective, "mpich", interleaved=False) == (
        1751 << 10, "mpich's spread point")  # fmt: skip
    # No interleaved point for OMPIO: the contiguous one, and the text says so.
    point, which = ca.spread_point_for(collective, "ompio", interleaved=True)
    assert point == 1781 << 10 and "none measured with interleaved calls" in which
    # ROMIO has only an interleaved one: contiguous jobs get none.
    assert ca.spread_point_for(collective, "romio321", interleaved=False) == (None, "")
    assert ca.spread_point_for(collective, "", interleaved=True) == (None, "")


@pytest.mark.needs_build("iorelay-aggregators")
def test_advice_count_for_interleaved_calls_uses_their_spread_point(tmp_path: Path) -> None:
    platform = platform_with(tmp_path, "testbed",
                             {"saturation_point_by_mpi": {"mpich": "4MiB"},
                              "spread_point_by_mpi": {"mpich": "2MiB"},
                              "spread_point_interleaved_by_mpi": {"mpich": "0B"}},
                             "interleaved.json")  # fmt: skip
    # 1.5 MiB calls on 3 hosts: below the contiguous point, above the interleaved one (0).
    contiguous = ca.advise(ca.Job(12, 4, 3 * MIB // 2, mpi="mpich"), platform)
    assert contiguous.aggregators == 1
    assert any("below mpich's spread point (2MiB)" in r for r in contiguous.reasons)
    interleaved = ca.advise(ca.Job(12, 4, 3 * MIB // 2, interleaved=True, mpi="mpich"), platform)
    assert interleaved.aggregators == 3
    said = "at or above mpich's spread point for interleaved calls (0: one per host never slower)"
    assert any(said in r for r in interleaved.reasons)
    assert "collective_spread.py --interleaved" in interleaved.evidence[0]


@pytest.mark.needs_build("iorelay-aggregators")
def test_below_the_spread_point_one_aggregator_whatever_k_asks(tmp_path: Path) -> None:
    platform = platform_with(tmp_path, "testbed",
                             {"saturation_point_by_mpi": {"ompio": "1MiB"},
                              "spread_point_interleaved_by_mpi": {"ompio": "3652KiB"}},
                             "small-k.json")  # fmt: skip
    # 2 MiB interleaved calls on 2 hosts: k = 1 MiB asks for 2 aggregators, but one aggregator
    # was measured faster than one per host below 3652 KiB.
    a = ca.advise(ca.Job(8, 4, 2 * MIB, interleaved=True, mpi="ompio"), platform)
    assert (a.aggregators, a.aggregator_ranks) == (1, (0,))
    said = "1 aggregator, not the rule's 2: a call of 2MiB is below ompio's spread point for "
    assert any(r.startswith(said) for r in a.reasons), a.reasons
    # At or above the spread point, the rule's count stands (ceil(6 / 1) capped at 3 hosts).
    above = ca.advise(ca.Job(12, 4, 6 * MIB, interleaved=True, mpi="ompio"), platform)
    assert above.aggregators == 3
    assert not any("1 aggregator, not the rule's" in r for r in above.reasons)
    # One host: the spread point (measured across hosts) does not cap its aggregators.
    one_host = ca.advise(ca.Job(4, 4, 2 * MIB, interleaved=True, mpi="ompio", max_per_node=4),
                         platform)  # fmt: skip
    assert one_host.aggregators == 2
