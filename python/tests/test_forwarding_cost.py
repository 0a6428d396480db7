"""Direct or through I/O nodes (iorelay.forwarding_cost): the ladder from measured runs, and the
rule that only a significant gain keeps a job's I/O nodes (the tie rule: direct is cheapest)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iorelay import collective_advice as ca
from iorelay import forwarding_cost as fc
from iorelay.simulate import PLATFORMS_DIR

MIB = 1 << 20
# Small calls lose clearly through the I/O node (every forwarded run below every direct one);
# medium ones are even; large ones gain clearly.
RUNS = [(MIB, 0, v) for v in (10.0, 11, 12, 10.5, 11.5)] + [
    (MIB, 1, v) for v in (8.0, 8.5, 9, 8.2, 8.8)] + [
    (16 * MIB, 0, v) for v in (40.0, 42, 38, 41, 39)] + [
    (16 * MIB, 1, v) for v in (41.0, 37, 43, 40, 38.5)] + [
    (256 * MIB, 0, v) for v in (50.0, 52, 51, 49, 50.5)] + [
    (256 * MIB, 1, v) for v in (60.0, 62, 61, 59, 60.5)]  # fmt: skip


def ladder() -> fc.Ladder:
    return fc.ladder_from_runs("mpich", RUNS, "calibration X")


def test_the_ladder_is_the_median_ratio_with_its_p() -> None:
    small, medium, large = ladder().steps
    assert small.bytes_per_call == MIB and small.ratio == pytest.approx(8.5 / 11)
    assert small.p < 0.01 and small.significant_loss() and small.runs == 5
    assert not small.significant_gain()
    assert medium.ratio == pytest.approx(1.0)
    assert not medium.significant_loss() and not medium.significant_gain()
    assert large.significant_gain() and large.ratio == pytest.approx(60.5 / 50.5)
    again = fc.ladder_from_json("mpich", json.loads(json.dumps(fc.ladder_to_json(ladder()))))
    assert [s.bytes_per_call for s in again.steps] == [MIB, 16 * MIB, 256 * MIB]
    assert again.steps[0].ratio == pytest.approx(small.ratio, abs=1e-3)
    with pytest.raises(ValueError, match="fewer than 2"):
        fc.ladder_from_runs("mpich", RUNS[:5], "")


def test_only_a_significant_gain_keeps_the_ionodes() -> None:
    # 2 MiB calls are nearest to 1 MiB in log size: a significant loss, so direct.
    d = fc.decide(1, 2 * MIB, ladder())
    said = "direct: through 1 I/O node collective writes with mpich were measured at 0.77x"
    assert d.ionodes == 0 and d.reason.startswith(said) and "a significant loss" in d.reason
    assert "1MiB 0.77x" in d.evidence and "calibration X" in d.evidence
    # 8 MiB calls take 16 MiB's step: even, so the tie rule's cheaper option, direct.
    even = fc.decide(2, 8 * MIB, ladder())
    assert even.ionodes == 0 and "not a significant gain" in even.reason
    # 128 MiB calls take 256 MiB's step: a significant gain keeps the I/O nodes asked for.
    gain = fc.decide(2, 128 * MIB, ladder())
    assert gain.ionodes == 2 and gain.reason.startswith("forward as asked")
    assert "1.20x direct" in gain.reason and "a significant gain" in gain.reason
    assert "extrapolation" not in gain.evidence
    # Far beyond the sizes measured the nearest step is a guess, and the evidence says so.
    for far in (MIB // 4, 1024 * MIB):
        assert (
            "outside the sizes measured (1MiB to 256MiB): an extrapolation"
            in fc.decide(2, far, ladder()).evidence
        )
    # Kept for another reason, whatever the loss.
    forced = fc.decide(1, MIB, ladder(), keep=True)
    assert forced.ionodes == 1 and "--keep-ionodes" in forced.reason and "0.77x" in forced.reason
    # No evidence: the asked I/O nodes, and the reason says there is none.
    blind = fc.decide(1, MIB, None, mpi="ompio")
    assert blind.ionodes == 1 and "no evidence" in blind.reason and blind.evidence == ""
    assert "forwarding_by_mpi.ompio" in blind.reason and "--component ompio" in blind.reason
    # Without the MPI no ladder applies, and the reason says to name it.
    unnamed = fc.decide(1, MIB, None)
    assert unnamed.ionodes == 1 and "without --mpi none applies" in unnamed.reason
    assert fc.decide(0, MIB, ladder()).ionodes == 0


@pytest.mark.needs_build("iorelay-aggregators")
def test_iorelay_hints_says_direct_with_its_evidence(tmp_path: Path, capsys) -> None:
    from iorelay import cli

    doc = json.loads((PLATFORMS_DIR / "testbed.json").read_text())
    doc["collective"]["forwarding_by_mpi"] = {"mpich": fc.ladder_to_json(ladder())}
    platform = tmp_path / "testbed.json"
    platform.write_text(json.dumps(doc))
    argv = ["hints", "--ranks", "12", "--ranks-per-node", "4", "--bytes-per-call", "1M",
            "--platform", str(platform), "--ionodes", "1", "--mpi", "mpich"]  # fmt: skip
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("I/O nodes: 0; direct: through 1 I/O node collective writes "
                          "with mpich were measured at 0.77x direct")  # fmt: skip
    assert "forwarding (mpich, through 1 I/O node / direct): 1MiB 0.77x" in out
    assert cli.main([*argv, "--keep-ionodes"]) == 0
    assert capsys.readouterr().out.startswith("I/O nodes: 1; forward as asked (--keep-ionodes")
    assert cli.main([*argv[:-1], "ompio"]) == 0  # no ladder for OMPIO: says so
    assert "no evidence of what forwarding costs" in capsys.readouterr().out
    doc["collective"]["forwarding_by_mpi"]["mpich"] = {"ladder": [{"ratio": 1}]}
    platform.write_text(json.dumps(doc))
    assert cli.main(argv) == 2
    assert "collective.forwarding_by_mpi.mpich" in capsys.readouterr().err
    with pytest.raises(ca.CollectiveAdviceError, match=r"forwarding_by_mpi\.mpich"):
        ca.measured_forwarding(platform, "mpich")
