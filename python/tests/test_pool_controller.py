"""The pool controller's policy core as pure functions: arrivals, departures, lease expiries
and ticks in, the next hosts of every job and the admin actions out, with hysteresis."""

from __future__ import annotations

import json
import random

import pytest

from iorelay.arbiter.problem import ArbiterError, Job
from iorelay.pool.actions import Admit, Release, Revoke, RunDirect, carry_out
from iorelay.pool.controller import step
from iorelay.pool.events import Arrival, Departure, Expiry, Measured, Tick
from iorelay.pool.state import PoolState, Settings

HOSTS = ("io0", "io1", "io2", "io3")
# Gains from 1 and 2 I/O nodes; 4 is no better than 2 (FORGE has many such patterns).
RISING = {0: 100.0, 1: 300.0, 2: 500.0, 4: 500.0}
FLAT = {0: 100.0, 1: 110.0, 2: 115.0, 4: 120.0}
SLOWER = {0: 400.0, 1: 100.0, 2: 150.0, 4: 200.0}  # direct is best


def job(name: str, values: dict[int, float], nodes: int = 4) -> Job:
    return Job(name, nodes, values)


def pool(interval_s: float = 0.0, **settings) -> PoolState:
    return PoolState(HOSTS, Settings(options=(0, 1, 2, 4), min_interval_s=interval_s, **settings))


def test_arrivals_take_free_hosts_and_a_direct_job_is_told() -> None:
    s = step(pool(), Arrival(0.0, job("a", RISING)))
    assert s.actions == (Admit("a", "io0", 30.0), Admit("a", "io1", 30.0))  # 2: 4 gains nothing
    s = step(s.state, Arrival(1.0, job("b", SLOWER)))
    assert s.actions == (RunDirect("b"),)
    assert s.state.holding("a").hosts == ("io0", "io1")
    assert s.state.free_hosts() == ["io2", "io3"]
    line = json.loads(json.dumps(s.record))
    assert line["event"] == "arrival" and line["ionodes"] == [2, 0]
    assert line["hosts"] == {"a": ["io0", "io1"], "b": []}


def test_a_move_releases_before_it_admits_and_never_revokes() -> None:
    s = step(pool(), Arrival(0.0, job("a", RISING)))
    s = step(s.state, Arrival(1.0, job("b", SLOWER)))
    assert s.state.free_hosts() == ["io2", "io3"]
    # c gains most from all 4 (1500 + a direct 100 > 400 + a's 500): a's hosts move to c.
    s = step(s.state, Arrival(2.0, job("c", {0: 100.0, 1: 300.0, 2: 400.0, 4: 1500.0})))
    assert s.record["ionodes"] == [0, 0, 4]
    assert s.actions == (
        Release("a", "io0"),
        Release("a", "io1"),
        RunDirect("a"),
        *(Admit("c", h, 30.0) for h in HOSTS),
    )
    assert not any(isinstance(a, Revoke) for a in s.actions)


def test_departure_releases_and_expiry_revokes() -> None:
    s = step(pool(), Arrival(0.0, job("a", RISING)))
    s = step(s.state, Arrival(0.0, job("b", FLAT)))
    hosts_b = s.state.holding("b").hosts
    gone = step(s.state, Expiry(5.0, "b"))
    assert gone.actions[: len(hosts_b)] == tuple(Revoke("b", h) for h in hosts_b)
    assert gone.state.holding("b") is None
    left = step(s.state, Departure(5.0, "a"))
    assert left.actions[:2] == (Release("a", "io0"), Release("a", "io1"))
    assert step(left.state, Departure(6.0, "a")).actions == ()  # already gone: nothing


def test_hysteresis_holds_a_recent_mapping_until_its_interval_ends() -> None:
    s = step(pool(interval_s=60.0), Arrival(0.0, job("a", RISING)))
    s = step(s.state, Arrival(10.0, job("b", RISING)))
    s = step(s.state, Arrival(20.0, job("c", RISING)))
    s = step(s.state, Departure(30.0, "a"))  # frees 2 hosts; b and c were mapped < 60 s ago
    counts = {r.job.name: len(r.hosts) for r in s.state.running}
    assert s.record["held"] == ["b", "c"]
    assert not any(isinstance(a, Admit) for a in s.actions)
    assert counts == {"b": 2, "c": 0}
    s = step(s.state, Tick(71.0))  # b's interval is over (4 gains it nothing), c's is not
    assert s.record["held"] == ["c"] and s.actions == ()
    s = step(s.state, Tick(80.0))  # c's is over: it takes the hosts a left
    assert s.record["held"] == []
    assert s.actions == (Admit("c", "io0", 30.0), Admit("c", "io1", 30.0))


def test_guarded_policy_keeps_static_without_a_believed_gain() -> None:
    unsure = Job("a", 4, {0: 400.0, 1: 100.0, 2: 150.0, 4: 200.0})  # no error band: none believed
    s = step(pool(policy="guarded"), Arrival(0.0, unsure))
    assert len(s.state.holding("a").hosts) == 4  # static gives a lone job the whole pool
    sure = Job("a", 4, unsure.values, {(0, 4): 0.5})  # log(400 / 200) = 0.69 > 0.5
    s = step(pool(policy="guarded"), Arrival(0.0, sure))
    assert s.state.holding("a").hosts == () and s.actions == (RunDirect("a"),)


def test_bad_events_are_errors() -> None:
    s = step(pool(), Arrival(5.0, job("a", RISING)))
    with pytest.raises(ArbiterError, match="already"):
        step(s.state, Arrival(6.0, job("a", RISING)))
    with pytest.raises(ArbiterError, match="forward"):
        step(s.state, Tick(1.0))
    with pytest.raises(ArbiterError, match="unknown pool policy"):
        step(pool(policy="fastest"), Arrival(0.0, job("a", RISING)))


class Recording:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def admit(self, host: str, job: str, lease_s: float) -> None:
        self.calls.append(("admit", host, job, lease_s))

    def release(self, host: str, job: str) -> None:
        self.calls.append(("release", host, job))

    def revoke(self, host: str, job: str) -> None:
        self.calls.append(("revoke", host, job))

    def renew(self, host: str, job: str, lease_s: float) -> None:
        self.calls.append(("renew", host, job, lease_s))

    def jobs(self, host: str) -> list:
        return []


def test_random_event_sequences_keep_the_invariants() -> None:
    rng = random.Random(52)
    shapes = (RISING, FLAT, SLOWER)
    for trial in range(40):
        keep = rng.random() < 0.5
        s = step(
            pool(interval_s=rng.choice((0.0, 15.0)), floor_share=0.5, keep_forwarded=keep),
            Tick(0.0),
        )
        t, names, channel = 0.0, [], Recording()
        holders: dict[str, str] = {}  # host -> job, as the daemons would see it
        for n in range(30):
            t += rng.uniform(0, 10)
            running = [r.job.name for r in s.state.running]
            kind = rng.random()
            if kind < 0.5 or not running:
                names.append(f"j{trial}-{n}")
                event = Arrival(t, Job(names[-1], rng.choice((1, 4)), rng.choice(shapes)))
            elif kind < 0.8:
                event = Departure(t, rng.choice(running))
            elif kind < 0.9:
                event = Expiry(t, rng.choice(running))
            else:
                event = Tick(t)
            had = {r.job.name: len(r.hosts) for r in s.state.running}
            s = step(s.state, event)
            carry_out(s.actions, channel)
            if keep:  # a running job that held I/O nodes still holds some
                assert all(r.hosts for r in s.state.running if had.get(r.job.name, 0) > 0)
            for a in s.actions:
                if isinstance(a, Admit):
                    assert a.host not in holders  # released or revoked before it is reused
                    holders[a.host] = a.job
                elif isinstance(a, Release | Revoke):
                    assert holders.pop(a.host) == a.job
            mine = {h: r.job.name for r in s.state.running for h in r.hosts}
            assert mine == holders
            for r, k in zip(s.state.running, s.record["ionodes"], strict=True):
                assert len(r.hosts) == k
        assert channel.calls  # the plan went through the admin interface


def test_keep_forwarded_leaves_a_running_job_at_least_one_ionode() -> None:
    # As in test_a_move_releases_before_it_admits_and_never_revokes, c would take all 4 and
    # leave a none; a live pool's running job keeps one (its clients cannot go direct mid-run).
    big = {0: 100.0, 1: 300.0, 2: 400.0, 4: 1500.0}
    s = step(pool(keep_forwarded=True), Arrival(0.0, job("a", RISING)))
    s = step(s.state, Arrival(2.0, job("c", big)))
    assert s.record["ionodes"] == [2, 2]  # a: 500 + c: 400, the best with a on 1 or more
    assert s.actions == (Admit("c", "io2", 30.0), Admit("c", "io3", 30.0))
    s = step(pool(), Arrival(0.0, job("a", RISING)))
    assert step(s.state, Arrival(2.0, job("c", big))).record["ionodes"] == [0, 4]  # without


def test_anchored_policy_leaves_static_only_after_a_measurement_there() -> None:
    # a's predictions say direct is best (400), but static gives a lone job the whole pool:
    # anchored keeps it there until its bandwidth there is measured
    s = step(pool(policy="anchored"), Arrival(0.0, job("a", SLOWER)))
    assert len(s.state.holding("a").hosts) == 4
    same = step(s.state, Measured(1.0, "a", 2, 50.0))  # of an option a does not hold: stale
    assert same.actions == () and same.state.holding("a").job.measured == frozenset()
    high = step(s.state, Measured(1.0, "a", 4, 450.0))  # measured above every prediction: stays
    assert high.actions == () and high.state.holding("a").job.values[4] == 450.0
    s = step(s.state, Measured(1.0, "a", 4, 200.0))  # now direct's predicted 400 >= 200
    assert s.state.holding("a").hosts == ()
    assert s.actions == (*(Release("a", h) for h in HOSTS), RunDirect("a"))
    assert s.record["event"] == "measured" and s.record["jobs"][0]["measured"] == [4]
    assert s.record["jobs"][0]["values"]["4"] == 200.0
    with pytest.raises(ArbiterError, match="finite"):
        step(high.state, Measured(2.0, "a", 4, float("nan")))
