"""`rose digest`: show what a background reflector would read of a session's transcript."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    app.command("digest")(digest)


def digest(
    path: str = typer.Argument(..., help="A Claude Code session file or a Codex rollout."),
    as_json: bool = typer.Option(False, "--json", help="Print the digest and its counts as JSON."),
    budget: int = typer.Option(
        3000, "--budget", min=50, help="About how many tokens the digest may take."
    ),
) -> None:
    """Show the digest of a transcript: what a background reflector would see of the session.

    Reads a Claude Code session file (~/.claude/projects/*/*.jsonl, 1.x and 2.x) or a Codex
    rollout (~/.codex/sessions/**/rollout-*.jsonl) and prints a header (host, version,
    prompts, tool calls, failed calls, lesson ids the agent cited), then one line a step:
    `User:` for what the person typed, `Agent:` for the agent's messages and reasoning,
    `Tool:` for each tool call and, when it failed, its error. Secrets are redacted. A long
    session is cut to the budget, keeping prompts, failures, citations and the final
    message first; `[… N steps left out …]` marks each cut.
    """
    from rose.transcripts import digest as digests
    from rose.transcripts.transcript import read

    t = read(path)
    d = digests.build(t, budget_tokens=budget)
    if as_json:
        from rose.cli._out import emit_json

        emit_json(d.to_json())
        return
    cited = ", ".join(d.cited) or "none"
    typer.echo(
        f"{d.host} {d.version or '(version not recorded)'}: {len(d.user_prompts)} prompts, "
        f"{d.tool_calls} tool calls, {d.failed_tool_calls} failed, cited: {cited}"
        + (f", {d.left_out} of {d.steps} steps left out" if d.left_out else "")
    )
    if d.text:
        typer.echo(d.text)
    else:
        typer.echo("(nothing in it yet)")
