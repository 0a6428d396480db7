"""`iorelay advise`: the number of I/O nodes for a pattern, from measured results, with the
evidence (which source answered, its cross-validated score, the simple rules' scores)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from iorelay.advise import inputs


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "advise",
        help="how many I/O nodes a pattern should get, from measured results",
        description="Advise the number of I/O nodes for an access pattern from measured results "
        "(iorelay explore results or FORGE CSV): the options not significantly worse than the "
        "predicted best, and the cheapest of them. Each source (the nearest measured pattern, a "
        "learned model) is scored by cross-validation on the data; the best covering one "
        "answers. Scores are cached by the data's hash in $XDG_CACHE_HOME/iorelay/advise.",
    )
    inputs.add_arguments(p, pattern_required=True)
    p.add_argument("--measured", required=True, nargs="+", help="results files or directories")
    p.add_argument(
        "--scheduler",
        help="use the runs with this scheduler (needed when the results vary the scheduler)",
    )
    p.add_argument(
        "--secret-file",
        help="with --stats: the daemons' job credential (default: $IORELAY_SECRET_FILE)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    p.set_defaults(func=run)


def fail(message: str) -> int:
    print(f"iorelay advise: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from iorelay.advise.service import AdviceError, advice

    try:
        given = inputs.asked(args)
        answer = advice(args.measured, given.pattern_text, args.scheduler, args.choices)
    except AdviceError as e:
        return fail(str(e))
    if given.observed is not None:
        answer["read_from"] = given.source
        answer["evidence"] = given.observed.evidence
        answer["notes"] = {k: v for k, v in given.observed.notes.items() if k != "phases"}
        found = given.observed.notes.get("phases")
        if found:
            answer["phases"] = phase_advice(args, found)
    if args.json:
        print(json.dumps(answer, indent=2))
    else:
        print(readable(answer))
    return 0


def phase_advice(args: argparse.Namespace, phases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Advice for each I/O phase a Darshan log shows (from_darshan.phases), each on at most as
    many nodes as it has ranks; a phase without advice carries the reason instead."""
    from iorelay.advise.service import AdviceError, advice

    out = []
    for p in phases:
        keys = dict(p["keys"])
        keys["nodes"] = str(min(int(args.nodes), int(keys["ranks"])))
        text = ",".join(f"{k}={v}" for k, v in keys.items())
        entry: dict[str, Any] = {
            "operation": p["operation"],
            "window_s": p["window_s"],
            "records": p["records"],
            "bytes": p["bytes"],
            "evidence": p["evidence"],
        }
        try:
            a = advice(args.measured, text, args.scheduler, args.choices)
        except AdviceError as e:
            out.append({**entry, "pattern": text, "error": str(e)})
            continue
        out.append(
            {
                **entry,
                "pattern": a["pattern"],
                "recommended": a["recommended"]["ionodes"],
                "not_worse": a["not_worse"],
                "predicted": a["predicted"],
                "source": a["source"],
            }
        )
    return out


def readable(a: dict[str, Any]) -> str:
    rec = a["recommended"]
    lines = [f"pattern: {a['pattern']}"]
    if a.get("read_from"):
        lines[0] += f"  (read from the {a['read_from']})"
        lines += [f"  {e}" for e in a["evidence"]]
    if a["odirect_assumed"]:
        lines[0] += "  (odirect not given: " + (
            "all measured runs are O_DIRECT)" if a["pattern"].endswith("yes") else "taken as no)"
        )
    if a["distance"] == 0:
        lines.append(f"measured: {a['nearest_measured']}")
    else:
        lines.append(f"nearest measured: {a['nearest_measured']} (distance {a['distance']:g})")
    if a["far"]:
        lines.append(f"warning: {a['far']}")
    lines += ["", f"{'I/O nodes':>9}  {'predicted MiB/s':>15}  not worse"]
    for k, v in sorted(a["predicted"].items(), key=lambda kv: int(kv[0])):
        mark = "yes" if int(k) in a["not_worse"] else ""
        star = "  <- recommended" if int(k) == rec["ionodes"] else ""
        shape = "  (not measured: min(a*n, c))" if int(k) in a["extrapolated"] else ""
        lines.append(f"{k:>9}  {v:>15.1f}  {mark}{star}{shape}")
    low, high = rec["interval_mib_s"]
    lines.append("")
    lines.append(
        f"recommended: {rec['ionodes']} I/O nodes, {rec['predicted_mib_s']:.1f} MiB/s "
        f"(95% {low:.1f}-{high:.1f})"
    )
    if rec["gain_over_direct"] is not None:
        g_low, g_high = rec["gain_interval"]
        lines.append(
            f"gain over direct: {rec['gain_over_direct']:.2f}x (95% {g_low:.2f}-{g_high:.2f})"
        )
    lines.append("")
    lines.append(f"regret ratio by {a['cross_validation_folds']}-fold cross-validation:")
    for name, score in sorted(a["sources"].items(), key=lambda kv: -(kv[1] or 0)):
        if score is None:
            lines.append(f"  (none)  {name}: predicted no held-out pattern")
            continue
        used = "  <- used" if name == a["source"] else ""
        lines.append(f"  {score:.3f}  {name}{used}")
    if a["always_direct_regret"] is not None:
        lines.append(f"  {a['always_direct_regret']:.3f}  always direct")
    lines.append(f"  {a['always_largest_regret']:.3f}  always {a['largest_option']} I/O nodes")
    if a.get("source_rule"):
        lines.append(f"used: {a['source_rule']}")
    if a.get("phases"):
        lines += ["", f"{len(a['phases'])} I/O phases with different patterns (per-file records):"]
        for i, p in enumerate(a["phases"], 1):
            start, end = p["window_s"]
            head = (
                f"  phase {i}: {p['operation']} {start:.3f}-{end:.3f} s, {p['records']} "
                f"record(s), {p['bytes']} bytes: {p['pattern']}"
            )
            if "error" in p:
                lines += [head, f"    no advice: {p['error']}"]
            else:
                lines += [
                    head,
                    f"    -> {p['recommended']} I/O nodes (not worse: "
                    f"{', '.join(map(str, p['not_worse']))})",
                ]
    lines += ["", a["command"]]
    return "\n".join(lines)
