"""`rose view`: the lesson graph as one HTML page."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("view")(view)


def view(
    out: str = typer.Option(
        None,
        "--out",
        "-o",
        metavar="FILE",
        help="Write the page here; default: .rose/view.html (machine-local, git-ignored).",
    ),
    open_page: bool = typer.Option(False, "--open", help="Open the page in the web browser."),
) -> None:
    """Write the lesson graph as one HTML page, to look at in a browser.

    Lessons by family and level, with their compression and merge edges; select one for
    its text, provenance, record, dropped claims and patches. A search box filters by
    words (`#q=word` in the URL does too). The page is self-contained: no server, no
    network. A store made by `rose demo` adds its success and tokens over the sessions.
    """
    from rose.inspect.viewer import view as write_view
    from rose.store.facade import Store

    done = write_view(Store.open(), Path(out).expanduser() if out else None)
    typer.echo(f"wrote {done.path} ({done.lessons} lesson{'' if done.lessons == 1 else 's'})")
    if open_page:
        import webbrowser

        webbrowser.open(done.path.resolve().as_uri())
