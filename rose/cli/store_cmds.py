"""Store commands: init, status, reindex, doctor."""

from __future__ import annotations

import typer

from rose.cli._out import emit_json


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("status")(status)
    app.command("reindex")(reindex)
    app.command("doctor")(doctor)


def init(
    scope: str = typer.Option("project", help="project: .rose here; global: ~/.rose."),
) -> None:
    """Create a ROSE store (.rose/) in the current directory, or the global one."""
    from rose.store.facade import Store

    store = Store.init(scope=scope)
    d = store.dir_for(scope)
    with store.graph():
        pass
    typer.echo(f"ROSE store ready at {d.root}")


def status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Families, lesson and episode counts, precision (served lessons used: all time, by
    recall mode and scope, and over the last 50 episodes that served any) and how often
    counterfactual checks agree with it, levels, compressions and merges (with those a
    failed held-out replay demoted), apexes, knowledge gaps, descent's trial patches kept
    and dropped on their next serving, misses (lessons the work needed that recall left
    out, by cause, with the lines rewritten and rules retired for them), transcript reads
    cut by their size cap or deadline and transcripts that could not be read, store health,
    detached jobs, and the model calls, tokens and cost of the last 24 hours."""
    from rose.inspect.status import status as get_status
    from rose.store.facade import Store

    data = get_status(Store.open())
    if as_json:
        emit_json(data)
    else:
        typer.echo(_format(data))


def _format(s: dict) -> str:
    from rose.inspect.precision import text as precision_text

    st = s["store"]
    where = st["project"] or st["global"]
    lines = [
        f"ROSE store {where}"
        + (f"  (global: {st['global']})" if st["project"] and st["global"] else "")
    ]
    lines.append(f"engine     {st['engine']} {st['engine_version']}")
    fams = ", ".join(f"{f['family']} ({f['lessons']})" for f in s["families"]) or "none"
    counts = f"{s['active_lessons']} active ({s['lessons']} in all)"
    lines.append(f"lessons    {counts} in {len(s['families'])} families: {fams}")
    lines.append(f"episodes   {s['episodes']} ({s['successful_episodes']} successful)")
    lines += precision_text(s["precision"])
    lines += _counterfactual_lines(s.get("counterfactual") or {})
    if s["levels"]:
        lines.append("levels     " + "  ".join(f"L{k}: {v}" for k, v in s["levels"].items()))
    held, outside = s["review"]["held"], s["review"]["outside"]
    if held or outside:
        lines.append(
            f"review     {held} held from recall, {outside} from outside kept to this project "
            "(`rose review`)"
        )
    if s["conflicts"]:
        lines.append(f"conflicts  {s['conflicts']} unresolved (`rose conflicts` lists them)")
    lines += _captured_lines(s["captured"])
    lines += _compression_lines(s.get("compression") or {})
    lines += _merge_lines(s.get("merges") or {})
    if s["apexes"]:
        lines.append("apexes")
        for a in s["apexes"]:
            rate = "untried" if a["success_rate"] is None else f"{a['success_rate']:.0%} success"
            facts = f"{a['tokens']} tok, {rate}, {a['scope']}"
            lines.append(f"  L{a['level']} {a['id']}  {a['title']}  ({facts})")
    gaps = s.get("knowledge_gaps") or []
    if gaps:
        lines.append(f"gaps       {len(gaps)} knowledge gap(s): level-0 lessons that failed")
        lines += [f"  {g['lesson']}  {g['title']}" for g in gaps]
    lines += _trial_lines(s.get("trial_patches") or {})
    lines += _miss_lines(s.get("misses") or {})
    lines += _transcript_lines(s.get("transcripts") or {})
    probs = s["health"]["problems"]
    lines.append("health     ok" if not probs else f"health     {len(probs)} problem(s)")
    lines += [f"  {p['path']}: {p['reason']}" for p in probs]
    ignored = s["config"]["problems"]
    if ignored:
        lines.append(f"config     {len(ignored)} setting(s) ignored")
        lines += [f"  {p['message']}" for p in ignored]
    kept = _kept_lines(s["graph_server"])
    jobs = [*_jobs_lines(s["jobs"]), *kept]
    return "\n".join([*lines, *jobs, *_spend_lines(s["spend"])])


def _captured_lines(c: dict) -> list[str]:
    """New lessons offered, by who offered them, and what consolidation made of them."""
    total = sum(c["by_source"].values())
    if not total and not c["unreconciled"]:
        return []
    who = ", ".join(f"{n} from {k.replace('-', ' ')}" for k, n in c["by_source"].items() if n)
    rest = [f"{c['duplicates']} duplicate(s) not stored"] if c["duplicates"] else []
    rest += [f"{c['unreconciled']} not reconciled yet"] if c["unreconciled"] else []
    return [f"captured   {total} lesson(s): {who or 'none here'}" + "".join(f"; {r}" for r in rest)]


def _counterfactual_lines(c: dict) -> list[str]:
    """How often attribution agreed with the counterfactual checks, once any was made."""
    from rose.loop.reflection.counterfactual import text

    return [f"  counterfactual  {text(c)}"] if c.get("checked") else []


def _compression_lines(c: dict) -> list[str]:
    """Compressions accepted and rejected, and how the accepted did on held-out episodes."""
    if not (c.get("accepted") or c.get("rejected")):
        return []
    line = f"compressed {c['accepted']} accepted, {c['rejected']} rejected"
    rate = c.get("held_out_pass_rate")
    if rate is not None:
        line += f"; held-out pass rate {rate:.0%} over {c['held_out_episodes']} episode(s)"
    elif c["accepted"]:
        line += "; none held out yet (fewer than three episodes)"
    return [line + _demoted(c)]


def _merge_lines(c: dict) -> list[str]:
    """Merges accepted and rejected, once any was attempted."""
    if not (c.get("accepted") or c.get("rejected")):
        return []
    return [f"merged     {c['accepted']} accepted, {c['rejected']} rejected" + _demoted(c)]


def _demoted(c: dict) -> str:
    """How many accepted lessons a held-out replay failed, demoted so their sources serve."""
    n = c.get("demoted") or 0
    return f"; {n} demoted by a failed held-out replay" if n else ""


def _trial_lines(t: dict) -> list[str]:
    """Descent's trial patches judged on their next serving, once any was."""
    if not t.get("judged"):
        return []
    return [
        f"trials     {t['judged']} trial patch(es) judged on their next serving: "
        f"{t['kept']} kept, {t['dropped']} dropped (did not help)"
    ]


def _miss_lines(m: dict) -> list[str]:
    """What selection learnt from lessons the work needed and recall left out, once any."""
    if not m.get("misses"):
        return []
    by = ", ".join(f"{n} by {k}" for k, n in m["by"].items() if n)
    return [
        f"misses     {m['misses']} lesson(s) the work needed left out ({by}): "
        f"{m['relined']} line(s) rewritten, {m['rules_retired']} rule(s) retired"
    ]


def _transcript_lines(t: dict) -> list[str]:
    """Transcript reads a bound cut and paths that could not be read, in one line, once any."""
    if not (t.get("cut") or t.get("unreadable")):
        return []
    line = f"transcript {t['cut']} read(s) cut, {t['unreadable']} unreadable"
    last = t.get("last_cut")
    if last:
        line += f"; last cut by its {last['by']} at byte {last['reached']} of {last['path']}"
    return [line]


def _jobs_lines(jobs: dict) -> list[str]:
    waiting = f"{jobs['queued']} queued" + (
        f", {jobs['deferred']} deferred" if jobs.get("deferred") else ""
    )
    counts = f"{jobs['running']} running, {waiting}, {jobs['failed']} failed"
    lines = [f"jobs       {counts}" + ("  (`rose jobs` lists them)" if jobs["failed"] else "")]
    lines += [f"  failed {f['id']}: {f['reason']}" for f in jobs["failures"]]
    return lines


def _kept_lines(graph: dict | None) -> list[str]:
    """The graph server keeping this store's database open, and the folders it cannot watch."""
    held = [
        f"kept       the graph database open for the next command (pid {graph['pid']}; "
        f"lets go after {graph['exits_in_s']:.0f} s more without one, graph.keep_open_s)"
    ] if graph and "pid" in graph else []  # fmt: skip
    return held + [
        f"           it scans {top} in full at every open: {why}"
        for top, why in sorted(((graph or {}).get("unwatched") or {}).items())
    ]


def _spend_lines(sp: dict) -> list[str]:
    def figures(d: dict, cost: bool) -> str:
        money = f", ${d['cost_usd']:.4f}" if cost else ", cost not reported"
        return f"{d['input_tokens']} in / {d['output_tokens']} out tokens{money}"

    hours = f"{sp['hours']:g}h"
    calls = f"{sp['calls']} model calls" + (f" ({sp['failed']} failed)" if sp["failed"] else "")
    line = f"spend {hours:<5}{calls}, {sp['cached']} answered from cache"
    if sp["calls"]:
        line += f": {figures(sp, sp['cost_reported'])}"
    lines = [line]
    sim = sp["simulated"]
    if sim["calls"]:
        lines.append(f"  simulated, not spent: {sim['calls']} calls, {figures(sim, True)}")
    return lines


def reindex() -> None:
    """Rebuild the graph database from the lesson and episode files."""
    from rose.store.facade import Store

    report = Store.open().reindex()
    typer.echo(f"reindexed {report.read} files in {report.seconds:.2f}s")
    for path, reason in report.errors:
        typer.echo(f"  skipped {path}: {reason}", err=True)


def doctor(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Check the store, the settings, the graph engine, the model backends and the wiring.

    ✓ works, ! works with less (no model backend on PATH, an ignored setting, hooks not
    wired, the simulated agent), · absent and not needed here, ✗ ROSE cannot work here (no
    store, a graph that will not open, a wired hook whose command would not start). Exits 1
    exactly when a check shows ✗.
    """
    from rose.inspect.doctor import diagnose

    report = diagnose()
    if as_json:
        emit_json(report)
    else:
        for check in report["checks"]:
            mark = {"ok": "✓", "info": "·", "warn": "!", "fail": "✗"}[check["level"]]
            typer.echo(f"{mark} {check['name']}: {check['detail']}")
    if any(c["level"] == "fail" for c in report["checks"]):
        raise typer.Exit(1)
