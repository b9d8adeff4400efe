"""`rose view` writes one self-contained HTML page of the lesson DAG, and it is safe to open.

Locks in: every lesson's title is text in the page as written (not only pixels), one edge
per `derived_from` link, a merge parent's children and a lesson's two parents both drawn;
the detail each lesson carries (body, provenance, record, dropped claims with holders,
patches, conflict question); the search box and its `#q=` fragment; lesson text that
looks like markup stays text (`</script>` in a body cannot end the data element); the
default page is machine-local and git-ignored; the demo's trend appears only for a
store the demo made. The browser test runs the page's script in headless Chromium; it
skips where there is none, but under CI (`CI` set) a missing browser fails it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.disk.atomic import write_json
from rose.inspect.viewer import page, script_json, view
from rose.models import Node
from rose.redaction.redact import redact
from rose.store.facade import Store
from tests._lineage import FIRST, L0, L1, L2, THIRD, absorb, patch, three_levels
from tests._lineage import unit as record

pytestmark = pytest.mark.graph

A, B, MERGED, SHORT = "n_http0001", "n_http0002", "n_merge0001", "n_short0001"
EVIL = "n_evil00001"
XSS = "</script><script>document.documentElement.setAttribute('data-pwned','1')</script>"
IMG = "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','2')\">"
QUESTION = "Is the timeout 30 s or 60 s?"
HELD = "came from a web page the agent read"


def small(store: Store) -> None:
    """A compressed lineage (retry: L0 <- L1 <- L2), a merge (MERGED from A and B) with B
    also compressed on its own (SHORT), so B has two parents; a quarantined lesson from
    outside whose body is markup; a conflict question; a patch and a recorded success."""
    three_levels(store)
    a = Node(id=A, family="http", title="Timeouts for the billing API", body="Use 30 s.",
             provenance="repository", conflict=QUESTION, parents=[MERGED])  # fmt: skip
    b = Node(id=B, family="http", title="Keep-alive pools", body="Reuse one pool per host.",
             provenance="user", parents=[MERGED, SHORT])  # fmt: skip
    merged = Node(id=MERGED, family="http", title="Talking to remote services", level=1,
                  origin="merge", body="Timeouts and pools.", derived_from=[A, B])  # fmt: skip
    short = Node(id=SHORT, family="http", title="One pool per host", level=1,
                 origin="compression", body="Pool per host.", derived_from=[B])  # fmt: skip
    evil = Node(id=EVIL, family="web", title=f"Markup {IMG}", body=f"Watch out: {XSS}",
                gist="a <b>bold</b> claim & more", provenance="outside",
                status="quarantined", held=HELD)  # fmt: skip
    store.write([a, b, merged, short, evil])
    patch(store, L2, FIRST)
    record(store, "s1", 1, lesson=L2, outcome="success")
    absorb(store, "s1")


class _Dom(HTMLParser):
    """The parts of a page the tests read: lesson boxes, edges, the detail's text."""

    VOID = {"input", "br", "img", "meta", "link", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.boxes: dict[str, str] = {}  # id -> class
        self.titles: dict[str, str] = {}  # id -> the box's title text
        self.edges: list[str] = []
        self.inputs: list[dict] = []
        self.detail: list[str] = []
        self.data = ""
        self._box = ""
        self._in: list[str] = [""]  # what the text of each open element belongs to

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if "data-edge" in a:
            self.edges.append(a["data-edge"])
        if tag == "input":
            self.inputs.append(a)
        if tag in self.VOID:
            return
        where = self._in[-1]
        if "data-id" in a:
            self.boxes[a["data-id"]] = a.get("class", "")
            self._box, where = a["data-id"], "box"
        elif a.get("id") in ("detail", "rose-data"):
            where = a["id"]
        elif where == "box" and a.get("class") == "title":
            where = "title"
        self._in.append(where)

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and len(self._in) > 1:
            self._in.pop()

    def handle_data(self, text: str) -> None:
        where = self._in[-1]
        if where == "title":
            self.titles[self._box] = self.titles.get(self._box, "") + text
        elif where == "detail":
            self.detail.append(text)
        elif where == "rose-data":
            self.data += text


def _read(html: str) -> _Dom:
    dom = _Dom()
    dom.feed(html)
    return dom


def _lessons(dom: _Dom) -> dict[str, dict]:
    return {lesson["id"]: lesson for lesson in json.loads(dom.data)["lessons"]}


def test_page_draws_every_title_as_text_and_every_derived_from_link(store: Store):
    small(store)
    html, n = page(store)
    dom = _read(html)
    ids = {L0, L1, L2, A, B, MERGED, SHORT, EVIL}
    assert n == len(ids) and set(dom.boxes) == ids
    assert dom.titles[L2] == "Retries" and dom.titles[MERGED] == "Talking to remote services"
    assert dom.titles[EVIL] == f"Markup {IMG}"  # the text, shown as text
    links = {f"{L1} {L0}", f"{L2} {L1}", f"{MERGED} {A}", f"{MERGED} {B}", f"{SHORT} {B}"}
    assert sorted(dom.edges) == sorted(links)
    assert re.search(rf'class="edge merge" data-edge="{MERGED} {A}"', html)
    assert re.search(rf'class="edge compression" data-edge="{SHORT} {B}"', html)
    lessons = _lessons(dom)
    assert lessons[MERGED]["children"] == [A, B]
    assert lessons[B]["parents"] == [MERGED, SHORT]
    assert [i for i in dom.inputs if i.get("id") == "q" and i.get("type") == "search"]


def test_each_lesson_carries_its_detail(store: Store):
    small(store)
    lessons = _lessons(_read(page(store)[0]))
    l1, l2 = lessons[L1], lessons[L2]
    assert [(c["claim"], c["holder"]) for c in l1["dropped"]][0] == (FIRST, L0)
    assert l2["dropped"] == [{"claim": THIRD, "kind": "parameter", "holder": L1, "rescues": 0}]
    assert l2["patches"] == [{"claim": FIRST, "rescues": 0}]
    assert l2["record"]["attempts"] == 1 and l2["record"]["successes"] == 1
    assert l2["body"] == "Retry remote calls with backoff."
    assert lessons[A]["conflict"] == QUESTION
    assert lessons[A]["from"] == "the repository and the work in it"
    assert lessons[L0]["from"] == "not recorded"
    assert lessons[EVIL]["held"] == HELD and lessons[EVIL]["status"] == "quarantined"
    assert lessons[EVIL]["from"].startswith("outside content")


def test_lesson_text_that_looks_like_markup_stays_text(store: Store):
    small(store)
    html, _ = page(store)
    assert "</script><script>" not in html and "<img src=x" not in html
    assert html.count("</script>") == 2  # the data element's end and the script's own
    assert "<b>bold</b>" not in html
    assert _lessons(_read(html))[EVIL]["body"] == f"Watch out: {XSS}"
    assert script_json({"t": "</script>&<!--"}) == '{"t": "\\u003c/script\\u003e\\u0026\\u003c!--"}'


def test_the_page_passes_redaction_unchanged(store: Store):
    small(store)
    html, _ = page(store)
    assert redact(html) == html


def _rose(*args: str):
    res = CliRunner().invoke(app, ["view", *args], prog_name="rose")
    assert res.exit_code == 0, res.output
    return res


def test_view_writes_the_default_page_git_ignored(store: Store):
    small(store)
    gi = store.primary.root / ".gitignore"
    gi.write_text(gi.read_text().replace("view.html\n", ""))  # a store made before `view`
    res = _rose()
    out = store.primary.root / "view.html"
    assert res.output.strip() == f"wrote {out} (8 lessons)"
    assert "Talking to remote services" in out.read_text()
    assert "view.html" in gi.read_text().splitlines()
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q"], cwd=store.primary.root.parent, check=True)
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", str(out)], cwd=store.primary.root.parent
        )
        assert ignored.returncode == 0


def test_view_out_and_open(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    small(store)
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: opened.append(url) or True)
    out = tmp_path / "elsewhere" / "graph.html"
    _rose("--out", str(out), "--open")
    assert out.is_file() and opened == [out.resolve().as_uri()]
    assert not (store.primary.root / "view.html").exists()
    _rose("--out", str(out))
    assert len(opened) == 1  # without --open, nothing is opened


def test_an_empty_store_says_there_are_no_lessons_yet(store: Store):
    done = view(store)
    html = done.path.read_text()
    assert done.lessons == 0 and "No lessons yet" in html
    dom = _read(html)
    assert dom.boxes == {} and dom.edges == [] and _lessons(dom) == {}


def _trend(success: list[float], tokens: list[float]) -> list[dict]:
    return [
        {"sessions": f"{i + 1}-{i + 1}", "success_rate": s, "tokens_per_prompt": t}
        for i, (s, t) in enumerate(zip(success, tokens, strict=True))
    ]


def test_the_demos_trend_is_shown_only_for_a_demo_store(store: Store):
    small(store)
    assert 'id="demo"' not in page(store)[0]
    over = {
        "none": _trend([0, 0, 0], [0, 0, 0]),
        "rose": _trend([0, 0.5, 1], [0, 100, 200]),
        "ceiling": _trend([0.5, 1, 1], [50, 50, 50]),
    }
    write_json(store.primary.demo, {"sessions": 3, "seed": 0, "over_time": over})
    html = page(store)[0]
    assert 'id="demo"' in html and "The demo's 3 sessions" in html
    assert html.count("<polyline") == 5  # success: three arms; tokens: ROSE and the ceiling
    assert "0.0,0.0 160.0,55.0 320.0,110.0" not in html  # y grows downwards: 100% is at the top
    assert 'points="0.0,110.0 160.0,55.0 320.0,0.0"' in html


# -- the page's script, run in a real browser -------------------------------------------------


def _browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if found := shutil.which(name):
            return found
    if os.environ.get("CI_NO_BROWSER"):  # .ci/run tried to install one and says why not
        pytest.skip(f"no headless Chromium: {os.environ['CI_NO_BROWSER']}")
    if os.environ.get("CI"):
        pytest.fail("no Chromium on PATH under CI: .ci/run installs Debian's chromium first")
    pytest.skip(
        "no headless Chromium here (`apt-get install chromium`): the page's script is not run"
    )


def _rendered(url: str, profile: Path) -> str:
    """The DOM after the page's script ran, as headless Chromium serialises it."""
    argv = [
        _browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={profile}", "--virtual-time-budget=5000",
        "--dump-dom", url,
    ]  # fmt: skip
    res = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "</html>" in res.stdout, res.stderr[-2000:]
    return res.stdout


def test_in_a_browser_the_graph_renders_selects_and_filters(store: Store, tmp_path: Path):
    small(store)
    url = view(store).path.resolve().as_uri()
    dom = _read(_rendered(f"{url}#lesson={L1}", tmp_path / "p1"))
    assert set(dom.boxes) == {L0, L1, L2, A, B, MERGED, SHORT, EVIL} and len(dom.edges) == 5
    assert "selected" in dom.boxes[L1].split()
    shown = "".join(dom.detail)
    assert "Retry remote calls with backoff. Jitter each wait" in shown
    assert f"parameter: {FIRST}" in shown and f"Retries ({L0})" in shown  # held by L0
    assert "not recorded" in shown
    assert not any("dim" in c.split() for c in dom.boxes.values())

    dom = _read(_rendered(f"{url}#q=pool", tmp_path / "p2"))
    lit = {i for i, c in dom.boxes.items() if "dim" not in c.split()}
    assert lit == {B, MERGED, SHORT}  # "pool" in B's body, MERGED's body, SHORT's title


def test_in_a_browser_lesson_markup_never_runs(store: Store, tmp_path: Path):
    small(store)
    url = view(store).path.resolve().as_uri()
    html = _rendered(f"{url}#lesson={EVIL}", tmp_path / "p")
    assert not re.search(r"<html[^>]*data-pwned", html)
    shown = "".join(_read(html).detail)
    assert f"Watch out: {XSS}" in shown and HELD in shown
