"""from_darshan.phases: per-file POSIX records cut into I/O phases where the main operation
changes, in the order of each record's first access; each phase's ranks and pattern keys."""

from __future__ import annotations

from iorelay.advise.from_darshan import phases


def record(rank: int, written: int, read: int, start: float, size: int = 65536) -> dict:
    op = "WRITE" if written >= read else "READ"
    n = max(written, read) // size
    return {
        "rank": rank,
        "POSIX_BYTES_WRITTEN": written,
        "POSIX_BYTES_READ": read,
        f"POSIX_{op}S": n,
        f"POSIX_CONSEC_{op}S": n,
        f"POSIX_SIZE_{op}_10K_100K": n,
        "POSIX_ACCESS1_ACCESS": size,
        "POSIX_ACCESS1_COUNT": n,
        f"POSIX_F_{op}_START_TIMESTAMP": start,
        f"POSIX_F_{op}_END_TIMESTAMP": start + 1.0,
    }


def test_phases_follow_the_first_accesses_and_cut_where_the_operation_changes():
    rows = [
        record(-1, 0, 1 << 20, 5.0),  # a shared file read after the writes
        record(0, 1 << 20, 0, 0.0),
        record(1, 1 << 20, 0, 0.5),
        record(2, 0, 0, 0.2),  # moved nothing: in no phase
        record(3, 1 << 20, 0, 9.0),  # written again after the read: a third phase
    ]
    found = phases(rows, nprocs=8)
    assert [p["operation"] for p in found] == ["write", "read", "write"]
    assert found[0]["window_s"] == [0.0, 1.5] and found[0]["records"] == 2
    assert found[0]["keys"]["ranks"] == "2" and found[0]["keys"]["layout"] == "fpp"
    assert found[1]["keys"]["ranks"] == "8" and found[1]["keys"]["layout"] == "shared"
    assert found[1]["keys"]["spatiality"] == "contiguous"
    assert found[1]["keys"]["request"] == "65536"
    assert found[2]["bytes"] == 1 << 20
