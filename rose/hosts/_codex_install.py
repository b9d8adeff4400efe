"""The Codex half of `rose install` / `rose uninstall` that talks to Codex: which recall
route a Codex gets, what trusting ROSE's hooks said, and taking ROSE's trust records out
of Codex's config on uninstall (rose/hosts/codex_trust.py speaks to Codex)."""

from __future__ import annotations

from pathlib import Path

from rose.hosts import codex_trust as ct


def trust_records(codex: str | None, path: Path, cwd: Path) -> list[str]:
    """The trust records Codex keeps for ROSE's hooks in `path` (before they are removed);
    none when Codex cannot be asked, since uninstall must work without it."""
    if codex is None or not path.is_file():
        return []
    try:
        return ct.trust_records(codex, path, cwd)
    except ct.CodexTrustError:
        return []


def forget_note(codex: str, cwd: Path, keys: list[str]) -> str:
    """Remove Codex's trust records for ROSE's removed hooks; what to tell the user."""
    try:
        ct.forget(codex, cwd, keys)
    except ct.CodexTrustError as exc:
        return (
            f"Codex's trust records for ROSE's hooks stay in its config.toml ({exc}); "
            "with the hooks gone they trust nothing"
        )
    return (
        f"removed Codex's trust records for ROSE's {len(keys)} hooks (hooks.state in config.toml)"
    )


def recall_note(runs: bool | None, agents: Path) -> list[str]:
    if runs is False:
        return [
            f"This Codex runs no hooks (`codex features list`: hooks false), so {agents} "
            "carries ROSE's recall instructions instead; sessions are not learnt from until "
            "hooks run. Turn them on (`[features] hooks = true` in config.toml) and run "
            "`rose install --target codex` again: it drops the block."
        ]
    if runs is None:
        return [
            "codex is not on PATH, so ROSE assumed a Codex that runs hooks (on by default "
            "since 0.1xx) and wrote no AGENTS.md block; with a Codex that runs none, run "
            "this again once `codex` is on PATH. Releases before hooks were on by default "
            "need `[features] codex_hooks = true` in config.toml."
        ]
    return []


def trusted_note(hooks: list, newly: int, path: Path) -> str:
    events = ", ".join(h.event for h in hooks)
    if not newly:
        return f"Codex already trusts ROSE's {len(hooks)} hooks in {path} ({events})."
    return (
        f"Codex now trusts ROSE's {len(hooks)} hooks in {path} for their current content "
        f"({events}; {newly} newly trusted); no other hook was touched. Trust follows the "
        "content: `rose doctor` says when it is stale, and --trust renews it."
    )


def agent_note(scope: str, project_dir: Path | None, *, dry_run: bool) -> str:
    """With no `claude` on PATH, make `codex` the agent ROSE asks for its own model calls,
    in the config of the install's scope (the global store's for the user, created if need
    be; the project store's for a project); the one line saying so, or "" when a `claude`
    is on PATH or another agent is chosen already (in that file, or `ROSE_AGENT`)."""
    import shutil

    from rose import config as configmod
    from rose.files.layout import StoreDir, find_project_root, global_root

    if shutil.which("claude") is not None:
        return ""
    if scope == "user":
        store = StoreDir(global_root(), "global")
    else:
        root = find_project_root((project_dir or Path.cwd()).resolve())
        if root is None:
            return (
                "no `claude` on PATH: after `rose init`, run `rose config agent codex` so "
                "ROSE's own model calls go to Codex"
            )
        store = StoreDir(root, "project")
    if configmod.load([store.config]).agent != "claude":
        return ""  # chosen already
    flag = " --scope global" if scope == "user" else ""
    if dry_run:
        return f"no `claude` on PATH: would set agent codex in {store.config}"
    if scope == "user":
        store.create()
    configmod.set_override(store.config, "agent", "codex")
    return (
        f"no `claude` on PATH: set agent codex in {store.config}, so ROSE's own model calls "
        f"go to Codex (`rose config agent claude{flag}` undoes it)"
    )
