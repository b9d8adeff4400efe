"""The quality benchmark's plot: tokens per prompt and success over the session stream.

matplotlib is an optional extra (`pip install 'rose-memory[bench]'`), imported here only,
inside `plot`, so the benchmark runs, and says how to get the plot, without it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HINT = "no plot: matplotlib is not installed (pip install 'rose-memory[bench]')"
PANELS = (("tokens_per_prompt", "injected tokens / prompt"), ("success_rate", "success rate"))


def plot(result: Mapping[str, Any], path: Path) -> Path | None:
    """Draw each arm's `over_time` series into a two-panel PNG at `path`; None (and one line
    on stderr saying how to get it) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # never a window: the benchmark runs headless
        from matplotlib import pyplot as plt
    except ImportError:
        print(HINT, file=sys.stderr, flush=True)
        return None
    fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    try:
        for arm, figures in result["arms"].items():
            series = figures.get("over_time") or []
            xs = [_middle(b["sessions"]) for b in series]
            for ax, (key, _) in zip(axes, PANELS, strict=True):
                ax.plot(xs, [b[key] for b in series], marker="o", markersize=3, label=arm)
        for ax, (_, label) in zip(axes, PANELS, strict=True):
            ax.set_ylabel(label)
            ax.grid(True, alpha=0.3)
        # flat's ~9,500 tokens would flatten every other arm on a linear axis; 0 stays visible
        axes[0].set_yscale("symlog", linthresh=100)
        axes[1].set_ylim(-0.05, 1.05)
        axes[1].set_xlabel("session (middle of each slice of the stream)")
        handles, labels = axes[0].get_legend_handles_labels()
        # Five to a row: nine arms side by side run past the figure's edge.
        rows = -(-len(labels) // 5)
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 5), fontsize="small")
        fig.suptitle(_title(result["params"]), fontsize="medium")
        fig.tight_layout(rect=(0, 0.04 * rows, 1, 1))  # room for the legend below the panels
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png", dpi=110)
    finally:
        plt.close(fig)
    return path


def _middle(sessions: str) -> float:
    first, _, last = sessions.partition("-")
    return (int(first) + int(last or first)) / 2


def _title(params: Mapping[str, Any]) -> str:
    seeds = [str(s) for s in params["seeds"]]
    commit = (params.get("commit") or "unknown")[:10]
    dirty = " + uncommitted changes" if params.get("uncommitted_changes") else ""
    return (
        f"quality · seeds {','.join(seeds)} (trend of seed {seeds[0]}) · "
        f"{params['sessions']} sessions · noise {params['noise']:.0%}\n"
        f"commit {commit}{dirty}"
    )
