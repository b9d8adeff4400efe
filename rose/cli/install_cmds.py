"""Wiring commands: install, uninstall."""

from __future__ import annotations

from typing import Literal

import typer

_TARGET_HELP = "claude: Claude Code's settings.json. codex: Codex's hooks.json and AGENTS.md."
_SCOPE_HELP = "user: every project (~/.claude, ~/.codex). project: the current directory only."
_DRY_HELP = "Write nothing; print the diff of what would change."
_FORCE_HELP = "Replace a read-only settings file too (its mode is kept); refused without it."
_TRUST_HELP = (
    "Codex only: then have Codex trust ROSE's hooks (and only those) for their current "
    "content, through `codex app-server`; asks first. Needs `codex` on PATH."
)
_YES_HELP = "With --trust: consent without asking (for scripts)."
_MCP_HELP = (
    "Also register ROSE's MCP server (`rose mcp`) as `rose`: Claude Code's ~/.claude.json "
    "(user) or the project's .mcp.json; Codex's config.toml [mcp_servers.rose]. --no-mcp "
    "leaves it out (and removes an earlier registration)."
)


_INSTALL_HELP = (
    "Wire ROSE's hooks (`rose hook <event>`) into Claude Code or Codex, and register its MCP "
    "server (`rose mcp`) there.\n\n"
    "Adds only ROSE's entries and keeps every other key and hook; running it again replaces "
    "ROSE's entries in place. The first install keeps the file's previous content beside it "
    "as *.rose-backup, with the same permissions. Codex runs a hook only once it is trusted: "
    "--trust does that (or trust each in Codex's /hooks). With no `claude` on PATH, a Codex "
    "install also sets `agent: codex` (ROSE's own model calls) and says so, and a Claude Code "
    "install says its hooks wait for one. A Codex that "
    "runs no hooks gets a "
    "marked recall block in AGENTS.md instead. A read-only file is left alone unless "
    "--force; when a file or folder cannot be written, or Codex will not trust the hooks, "
    "nothing is changed."
)


def register(app: typer.Typer) -> None:
    app.command("install", help=_INSTALL_HELP)(install)
    app.command("uninstall")(uninstall)


def install(
    target: Literal["claude", "codex"] = typer.Option("claude", help=_TARGET_HELP),
    scope: Literal["user", "project"] = typer.Option("user", help=_SCOPE_HELP),
    dry_run: bool = typer.Option(False, "--dry-run", help=_DRY_HELP),
    force: bool = typer.Option(False, "--force", help=_FORCE_HELP),
    trust: bool = typer.Option(False, "--trust", help=_TRUST_HELP),
    yes: bool = typer.Option(False, "--yes", "-y", help=_YES_HELP),
    mcp: bool = typer.Option(True, "--mcp/--no-mcp", help=_MCP_HELP),
) -> None:
    """Wire ROSE's hooks into Claude Code or Codex (help text: _INSTALL_HELP)."""
    from rose.hosts.install import install as do_install
    from rose.hosts.install import trust_preview

    if trust and target != "codex":
        raise typer.BadParameter("--trust is for --target codex", param_hint="--trust")
    if trust and not dry_run and not yes:
        typer.echo(trust_preview(scope))
        try:
            ok = typer.confirm("Trust them?", default=False)
        except typer.Abort:
            ok = False
        if not ok:
            typer.echo(
                "not trusted, and nothing was changed; run it again and answer y, add "
                "--yes, or leave out --trust and trust them in Codex's /hooks",
                err=True,
            )
            raise typer.Exit(1)
    report = do_install(target, scope, dry_run=dry_run, force=force, trust=trust, mcp=mcp)
    typer.echo(report.render())


def uninstall(
    target: Literal["claude", "codex"] = typer.Option("claude", help=_TARGET_HELP),
    scope: Literal["user", "project"] = typer.Option("user", help=_SCOPE_HELP),
    dry_run: bool = typer.Option(False, "--dry-run", help=_DRY_HELP),
    force: bool = typer.Option(False, "--force", help=_FORCE_HELP),
) -> None:
    """Remove exactly the entries `rose install` added: the hooks, the MCP server's entry and,
    for Codex, the AGENTS.md block.

    A hooks folder left empty by that (a project's .claude/) is removed too.
    """
    from rose.hosts.install import uninstall as do_uninstall

    typer.echo(do_uninstall(target, scope, dry_run=dry_run, force=force).render())
