"""Who holds the testbed (iorelay.testbed.hold), on a state file of its own in a temporary
directory: holders are live processes, a dead one no longer counts, the last holder takes down
a testbed brought up for holders (and not one brought up by hand), two users at once bring up
one testbed, and `iorelay testbed down` refuses while a run holds it. The same on a real
testbed: test_testbed.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from iorelay.testbed import hold
from iorelay.testbed.plan import TestbedConfig as Config
from iorelay.testbed.state import State
from iorelay.testbed.system import TestbedError as StepError


def _bring_up(state_file: Path) -> State:
    """What `cluster.up` leaves for the holders: a state file in phase "up" (no steps)."""
    state = State.create(state_file, Config().to_json(), [])
    state.doc["phase"] = "up"
    state.save()
    return state


@pytest.fixture
def state_file(tmp_path: Path) -> Path:
    return tmp_path / "tb" / "state.json"


@pytest.fixture
def sleepers() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    yield procs
    for p in procs:
        p.kill()
        p.wait()


def test_the_last_holder_takes_down_a_testbed_brought_up_for_holders(
    state_file: Path, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    first, second = sleepers
    made = hold.acquire(state_file, lambda: _bring_up(state_file), pid=first.pid)
    joined = hold.acquire(state_file, lambda: _bring_up(state_file), pid=second.pid)
    assert made.made and not joined.made
    assert [h.pid for h in joined.others] == [first.pid]

    # The first user is done while the second still runs: the testbed stays.
    assert not hold.release(state_file, state_file.unlink, pid=first.pid)
    assert state_file.exists()
    assert [h.pid for h in hold.holders(state_file)] == [second.pid]

    # The second dies without letting go: its record no longer counts.
    second.kill()
    second.wait()
    assert hold.holders(state_file) == []

    # A third user comes and goes: the last holder, so it takes the testbed down.
    third = hold.acquire(state_file)
    assert not third.made and third.others == []
    assert hold.release(state_file, state_file.unlink)
    assert not state_file.exists()


def test_a_testbed_brought_up_by_hand_stays_after_its_last_holder(state_file: Path) -> None:
    _bring_up(state_file)  # as `iorelay testbed up`: no holder, not down with the last one
    hold.acquire(state_file)
    assert not hold.release(state_file, state_file.unlink)
    assert state_file.exists()


def test_without_a_testbed_a_user_that_may_not_bring_one_up_is_refused(state_file: Path) -> None:
    with pytest.raises(hold.TestbedGone, match="no testbed is up"):
        hold.acquire(state_file)
    state = _bring_up(state_file)
    state.doc["phase"] = "starting"  # an `up` that failed half way
    state.save()
    with pytest.raises(StepError, match="not up"):
        hold.acquire(state_file, lambda: _bring_up(state_file))


USER = """
import sys, time
from pathlib import Path
from iorelay.testbed import hold
from iorelay.testbed.state import State
state_file = Path(sys.argv[1])

def bring_up():
    time.sleep(0.5)  # long enough for the other user to arrive while this one brings it up
    state = State.create(state_file, {}, [])
    state.doc["phase"] = "up"
    state.save()
    return state

h = hold.acquire(state_file, bring_up)
print("made" if h.made else "joined", flush=True)
sys.stdin.read()  # hold until told to go
print("took it down" if hold.release(state_file, state_file.unlink) else "left it up")
"""


def test_two_users_at_once_bring_up_one_testbed_and_the_last_takes_it_down(
    state_file: Path,
) -> None:
    users = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(USER), str(state_file)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        said = sorted(u.stdout.readline().strip() for u in users if u.stdout)
        assert said == ["joined", "made"]
        holders = hold.doc(state_file)
        assert sorted(h["pid"] for h in holders) == sorted(u.pid for u in users)
        first, last = users
        assert first.communicate("", timeout=30)[0].strip() == "left it up"
        assert last.communicate("", timeout=30)[0].strip() == "took it down"
        assert not state_file.exists()
    finally:
        for u in users:
            u.kill()
            u.wait()


def test_down_refuses_while_a_run_holds_the_testbed(
    state_file: Path, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    _bring_up(state_file)
    hold.acquire(state_file, pid=sleepers[0].pid)
    argv = [sys.executable, "-m", "iorelay", "testbed", "down", "--state-file", str(state_file)]
    refused = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and state_file.exists()
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert f"in use by pid {sleepers[0].pid} (sleep 60)" in refused.stderr
    forced = subprocess.run([*argv, "--force"], capture_output=True, text=True, timeout=60)
    assert forced.returncode == 0, forced.stderr
    assert not state_file.exists()
