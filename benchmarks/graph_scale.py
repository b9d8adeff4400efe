"""How the graph keeps up as a store grows: reindex, sync on open, and every named read query.

    python benchmarks/graph_scale.py [--json] [--sizes 1000,10000,100000] [--repeat N]
                                     [--engine kuzu|ladybug] [--keep DIR]

For each size a seeded synthetic store (see `_synth.py`) is written to a temp
folder (or under --keep, where the next run reuses it), then timed: a full
reindex from scratch (the graph and the recall view deleted first, as on a
fresh clone), opening the graph when nothing changed, opening it after one
lesson file changed, and, inside one open graph, the median of --repeat runs
of each read query. Only the project scope is used: `~/.rose` is never read.
Targets are printed beside the figures; a miss is reported, never an error. The opens
and writes are timed twice: each open the process's own (as when no graph server is up),
then with a graph server holding the database (`graph.keep_open_s`), stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _synth import Synth, generate  # beside this script, which is run as a file

QUERY_TARGET_MS = ((10_000, 10.0), (100_000, 50.0))  # (up to this many lessons, ms)
REINDEX_TARGET_S = ((10_000, 30.0),)
OPEN_NOOP_TARGET_MS = ((10_000, 30.0),)  # opening a store when nothing changed
OPEN_EDIT_TARGET_MS = ((10_000, 60.0),)  # after one edited lesson, recall view included
WRITE_KEYS = ("write_save_lesson_ms", "write_record_episode_ms", "write_next_open_ms")

Params = Callable[[Synth, int], dict[str, Any]]


def _pick(ids: list[str], i: int) -> str:
    return ids[i % len(ids)]


#: Each read query and its parameters for the i-th repeat (ids rotate so no run repeats one).
QUERIES: dict[str, Params] = {
    "apexes": lambda s, i: {"scope": ""},
    "subtree": lambda s, i: {"id": _pick(s.deep, i)},
    "regression_set": lambda s, i: {"id": _pick(s.deep, i + 1)},
    "delta_manifest": lambda s, i: {"id": _pick(s.deep, i + 2)},
    "descent_candidates": lambda s, i: {"id": _pick(s.deep, i + 3)},
    "ancestors": lambda s, i: {"id": _pick(s.bases, i)},
    "families": lambda s, i: {},
    "conflicts": lambda s, i: {},
    "co_usage": lambda s, i: {"limit": 50},
    "level_counts": lambda s, i: {},
    "episode_count": lambda s, i: {},
    "lessons_all": lambda s, i: {},
}


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _ms(seconds: float) -> float:
    return seconds * 1000.0


def _target(table: tuple[tuple[int, float], ...], size: int) -> float | None:
    return next((limit for upto, limit in table if size <= upto), None)


@contextmanager
def _workdir(size: int, keep: Path | None) -> Iterator[Path]:
    """The `.rose` folder for one size: kept under `keep` (and reused next time), or temporary."""
    if keep is not None:
        yield (keep / str(size) / ".rose").resolve()
        return
    with tempfile.TemporaryDirectory(prefix=f"rose-graph-scale-{size}-") as tmp:
        yield Path(tmp) / ".rose"


def _drop_derived(root: Path) -> None:
    """Remove what a fresh clone would lack (the graph, the recall view): reindex from scratch."""
    for p in [*root.glob("graph.*"), root / "recall-view.json"]:
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)


def _touch(path: Path, n: int) -> None:
    """Change one lesson's body, as an edit or a `git pull` would."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text.rstrip("\n") + f" Edited {n}.\n", encoding="utf-8")


def _parse_estimate(store: Any, synth: Synth, sample: int = 300) -> float:
    """Seconds a full reindex spends parsing files, from a timed sample of them."""
    from rose.files.nodefile import read_episode, read_node
    from rose.graph.sync import scan

    files = list(scan(store.dirs).states().values())
    rng = random.Random(1)
    total = 0.0
    for kind, count in (("node", synth.lessons), ("episode", synth.episodes)):
        some = [f for f in files if f.kind == kind]
        some = rng.sample(some, min(sample, len(some)))
        t0 = time.perf_counter()
        for f in some:
            read_node(Path(f.path), f.scope) if kind == "node" else read_episode(Path(f.path))
        total += (time.perf_counter() - t0) / max(1, len(some)) * count
    return total


def _noop_breakdown(store: Any, runs: int) -> dict[str, float]:
    """What a no-op open costs, piece by piece: the database, the file scan, the fingerprint."""
    from rose.graph import synced
    from rose.graph.engine import open_graph
    from rose.graph.sync import fingerprint, scan

    opens, scans, prints = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        with open_graph(store.graph_path, store.engine):
            pass
        opens.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        survey = scan(store.dirs, synced.read_listing(store.graph_path))  # as an open does
        scans.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        fingerprint(survey, [])
        prints.append(time.perf_counter() - t0)
    return {
        "database open+close (a no-op open skips it)": _ms(statistics.median(opens)),
        "no-op: file scan": _ms(statistics.median(scans)),
        "no-op: fingerprint": _ms(statistics.median(prints)),
    }


def _time_writes(store: Any, synth: Synth, runs: int) -> dict[str, float]:
    """Median ms of the writes the stages make: one lesson saved, one episode recorded."""
    from rose.models import Episode

    saves, records, folds = [], [], []
    for i in range(runs):
        node = store.get(Path(synth.touch[i % len(synth.touch)]).stem)
        node.body += f" (edit {i})"
        t0 = time.perf_counter()
        store.save(node)
        saves.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        store.save_episodes([Episode(prompt=f"bench {i}", outcome="success", used=[node.id])])
        records.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        with store.graph():  # the next open folds the new episode into the lesson
            pass
        folds.append(time.perf_counter() - t0)
    return {
        "write: save one lesson (Store.save)": _ms(statistics.median(saves)),
        "write: record one episode (file only)": _ms(statistics.median(records)),
        "write: next open, folding it in": _ms(statistics.median(folds)),
    }


def _edit_breakdown(store: Any, path: Path) -> dict[str, float]:
    """One edit split into the graph's own sync and what `Store.graph()` does around it."""
    from rose.graph.engine import open_graph
    from rose.graph.sync import sync

    _touch(path, -1)
    with open_graph(store.graph_path, store.engine) as g:
        t0 = time.perf_counter()
        sync(g, store.dirs)
        synced = time.perf_counter() - t0
    t0 = time.perf_counter()
    with store.graph():  # the graph is current now: what is left is the store's own upkeep
        pass
    return {
        "edit: sync() alone": _ms(synced),
        "edit: next Store.graph() (view rebuild)": _ms(time.perf_counter() - t0),
    }


def _time_open(store: Any) -> tuple[float, float, Any]:
    """Wall and CPU ms of one `Store.graph()`, and its sync report. CPU time (this process's,
    every thread's) is the figure to compare on a busy machine: wall time there counts the
    other processes' turns."""
    t0, c0 = time.perf_counter(), time.process_time()
    with store.graph():
        pass
    return _ms(time.perf_counter() - t0), _ms(time.process_time() - c0), store.last_sync


def _time_syncs(
    store: Any, root: Path, synth: Synth, runs: int, edits: int
) -> tuple[tuple[float, float], tuple[float, float], dict[str, float]]:
    """Median (wall, CPU) ms of an open with nothing changed, and of one after a lesson file
    was edited; and the edits' mean and worst, which include the checkpoints that come every
    few of them (a close leaves the log; the engine folds it in at the commit that takes it
    past a limit)."""
    noop, one = [], []
    for _ in range(runs):
        ms, cpu, rep = _time_open(store)
        noop.append((ms, cpu))
        if rep.changed:
            _say(f"[{synth.lessons:,}] warning: a no-op sync read {rep.read} files")
    for i in range(edits):
        _touch(root / synth.touch[i % len(synth.touch)], i)
        ms, cpu, rep = _time_open(store)
        one.append((ms, cpu))
        if rep.read != 1:
            _say(f"[{synth.lessons:,}] warning: a sync after one edit read {rep.read} files")
    spread = {
        f"edit: mean of {edits}, checkpoints included": statistics.fmean(m for m, _ in one),
        f"edit: worst of {edits}": max(m for m, _ in one),
    }
    return _medians(noop), _medians(one), spread


SERVED_KEYS = ("served_noop_ms", "served_one_ms", "served_one_cpu_ms", "served_one_worst_ms",
               "served_save_lesson_ms", "served_next_open_ms")  # fmt: skip


def _time_served(store: Any, root: Path, synth: Synth, runs: int, edits: int) -> dict[str, float]:
    """The same opens and writes with a graph server holding the database (`graph.keep_open_s`:
    each open a session of the server's, no engine opened here); empty when no server can be
    kept here (ROSE_KEEP_WARM=0, or no socket folder)."""
    from rose.graph import server

    if not server.launch(store.graph_path, store.engine, 600):
        _say(f"[{synth.lessons:,}] no graph server here: its figures are left out")
        return {}
    end = time.monotonic() + 60
    while not server.serving(store.graph_path, store.engine) and time.monotonic() < end:
        time.sleep(0.05)
    if not server.serving(store.graph_path, store.engine):
        _say(f"[{synth.lessons:,}] warning: the graph server did not take the database")
        return {}
    store.keep_open_s = 600
    try:
        with store.graph():  # the server's first session: its buffer pool starts cold
            pass
        noop, one, spread = _time_syncs(store, root, synth, runs, edits)
        writes = _time_writes(store, synth, runs)
    finally:
        server.stop(store.graph_path)
        store.keep_open_s = 0
    worst = max(v for k, v in spread.items() if "worst" in k)
    save, fold = (
        writes["write: save one lesson (Store.save)"],
        writes["write: next open, folding it in"],
    )
    vals = (noop[0], one[0], one[1], worst, save, fold)
    return {k: round(v, 3) for k, v in zip(SERVED_KEYS, vals, strict=True)}


def _medians(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(m for m, _ in pairs), statistics.median(c for _, c in pairs)


def _time_queries(store: Any, synth: Synth, repeat: int) -> tuple[dict, dict]:
    """Median and worst ms of each read query, all in one open graph, and its median row count."""
    queries, rows = {}, {}
    with store.graph() as g:
        for name, params in QUERIES.items():
            times, counts = [], []
            for i in range(repeat):
                p = params(synth, i)
                t0 = time.perf_counter()
                result = g.q(name, **p)
                times.append(_ms(time.perf_counter() - t0))
                counts.append(len(result))
            queries[name] = (statistics.median(times), max(times))
            rows[name] = statistics.median(counts)
    return queries, rows


def bench_size(size: int, repeat: int, seed: int, keep: Path | None) -> dict[str, Any]:
    """Every figure for one store size, plus the facts the plain report shows beside them."""
    from rose.store.facade import Store

    with _workdir(size, keep) as root:
        _say(f"[{size:,}] writing the synthetic store in {root}")
        synth = generate(root, size, seed)
        if synth.reused:
            _say(f"[{size:,}] reusing the store already there")
        _drop_derived(root)
        store = Store(root, None)
        store.keep_open_s = 0  # first each open is the process's own, as with no server up
        _say(f"[{size:,}] reindexing {size:,} lessons and {synth.episodes:,} episodes")
        t0 = time.perf_counter()
        report = store.reindex()
        reindex_s = time.perf_counter() - t0
        if report.errors:
            first = report.errors[0]
            _say(f"[{size:,}] warning: {len(report.errors)} files not indexed, e.g. {first}")
        # Each open after an edit costs seconds at 100k lessons: fewer runs there.
        runs = max(1, min(repeat, 5 if size <= 20_000 else 2))
        edits = max(1, min(2 * repeat, 20 if size <= 20_000 else 4))
        _say(f"[{size:,}] timing syncs ({runs} runs, {edits} edits)")
        noop, one, spread = _time_syncs(store, root, synth, runs, edits)
        breakdown = _noop_breakdown(store, runs)
        breakdown.update(spread)
        breakdown.update(_edit_breakdown(store, root / synth.touch[-1]))
        breakdown["reindex: parsing files (est.)"] = _parse_estimate(store, synth) * 1000
        writes = _time_writes(store, synth, runs)
        _say(f"[{size:,}] timing {len(QUERIES)} queries x {repeat}")
        queries, rows = _time_queries(store, synth, repeat)
        served = _time_served(store, root, synth, runs, edits)
    figures = {name: round(med, 3) for name, (med, _) in queries.items()}
    figures.update(served)
    figures["reindex_s"] = round(reindex_s, 3)
    figures["sync_noop_ms"] = round(noop[0], 3)
    figures["sync_one_ms"] = round(one[0], 3)
    figures["sync_noop_cpu_ms"] = round(noop[1], 3)
    figures["sync_one_cpu_ms"] = round(one[1], 3)
    figures.update({key: round(v, 3) for key, v in zip(WRITE_KEYS, writes.values(), strict=True)})
    return {
        "figures": figures,
        "queries": queries,
        "rows": rows,
        "synth": synth,
        "breakdown": breakdown,
        "writes": writes,
    }


def _verdict(value: float, target: float | None) -> tuple[str, str]:
    if target is None:
        return "", ""
    return f"{target:g}", "pass" if value <= target else "MISS"


def render(size: int, result: dict[str, Any], repeat: int) -> str:
    s: Synth = result["synth"]
    f = result["figures"]
    head = (
        f"{size:,} lessons: {s.episodes:,} episodes, {s.claims:,} dropped claims, "
        f"{s.families:,} families, levels 0-{s.max_level}"
        + (" (store reused)" if s.reused else f" (written in {s.seconds:.1f} s)")
    )
    lines = [head, f"  {'step':<46}{'figure':>10}{'target':>8}  {'':<5} notes"]

    def row(label: str, value: str, target: str = "", mark: str = "", note: str = "") -> None:
        lines.append(f"  {label:<46}{value:>10}{target:>8}  {mark:<5} {note}".rstrip())

    target, mark = _verdict(f["reindex_s"], _target(REINDEX_TARGET_S, size))
    row("reindex (s)", f"{f['reindex_s']:.2f}", target, mark)
    target, mark = _verdict(f["sync_noop_ms"], _target(OPEN_NOOP_TARGET_MS, size))
    row("open, nothing changed (ms)", f"{f['sync_noop_ms']:.1f}", target, mark)
    row("  its CPU time (ms)", f"{f['sync_noop_cpu_ms']:.1f}")
    target, mark = _verdict(f["sync_one_ms"], _target(OPEN_EDIT_TARGET_MS, size))
    row("open, one file edited (ms)", f"{f['sync_one_ms']:.1f}", target, mark)
    row("  its CPU time (ms)", f"{f['sync_one_cpu_ms']:.1f}")
    for label, ms in result["breakdown"].items():
        row(f"  {label} (ms)", f"{ms:.1f}")
    for label, ms in result["writes"].items():
        row(f"{label} (ms)", f"{ms:.1f}")
    if "served_one_ms" in f:
        row("with a graph server holding the database:", "")
        target, mark = _verdict(f["served_noop_ms"], _target(OPEN_NOOP_TARGET_MS, size))
        row("  open, nothing changed (ms)", f"{f['served_noop_ms']:.1f}", target, mark)
        target, mark = _verdict(f["served_one_ms"], _target(OPEN_EDIT_TARGET_MS, size))
        row("  open, one file edited (ms)", f"{f['served_one_ms']:.1f}", target, mark)
        row("    its CPU time (ms)", f"{f['served_one_cpu_ms']:.1f}")
        row("    worst of the edits (ms)", f"{f['served_one_worst_ms']:.1f}")
        row("  write: save one lesson (Store.save) (ms)", f"{f['served_save_lesson_ms']:.1f}")
        row("  write: next open, folding it in (ms)", f"{f['served_next_open_ms']:.1f}")
    qt = _target(QUERY_TARGET_MS, size)
    for name, (med, worst) in result["queries"].items():
        target, mark = _verdict(med, qt)
        note = f"max {worst:.1f} ms, {result['rows'][name]:g} rows"
        row(f"{name} (ms)", f"{med:.2f}", target, mark, note)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print only the figures, as JSON")
    ap.add_argument("--sizes", default="1000,10000,100000", help="lesson counts, comma-separated")
    ap.add_argument("--repeat", type=int, default=20, help="runs of each query (median taken)")
    ap.add_argument("--engine", choices=("kuzu", "ladybug"), help="default: ROSE_GRAPH_ENGINE")
    ap.add_argument("--keep", type=Path, help="build (and reuse) the stores here, not in /tmp")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    sizes = [int(x.replace("_", "")) for x in args.sizes.split(",") if x.strip()]
    if args.engine:
        os.environ["ROSE_GRAPH_ENGINE"] = args.engine
    engine = os.environ.get("ROSE_GRAPH_ENGINE") or "kuzu"
    repeat = max(1, args.repeat)

    from rose.graph.engine import version

    out: dict[str, dict[str, float]] = {}
    if not args.json:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"graph scale: engine {engine} {version(engine)}, seed {args.seed}, "
            f"query figures are medians of {repeat} runs, load average {load}"
        )
    for size in sizes:
        t0 = time.monotonic()
        result = bench_size(size, repeat, args.seed, args.keep)
        _say(f"[{size:,}] done in {time.monotonic() - t0:.1f} s")
        out[str(size)] = result["figures"]
        if not args.json:
            print()
            print(render(size, result, repeat), flush=True)
    if args.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
