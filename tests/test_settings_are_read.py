"""Every setting is either read by code or marked "not built yet", never neither and never both.

Locks in the fix for settings that were validated, shown by `rose config` and documented in
the present tense while no code read them (`recall.strategy`, `compress.*`,
`routing.max_tokens`, `reflect.*`): a setting nothing reads must carry the mark
(`json_schema_extra=NOT_BUILT` on its Field), and a marked setting that code starts reading
must lose it, so the docs stop calling it unbuilt.

"Read" is decided statically over the AST of rose/, leaving out the modules that touch every
key generically (config.py, the `rose config` command, docgen). A key counts as read by
`<anything>.<section>.<key>`; by `<alias>.<key>` where the alias was assigned from an
expression ending in `.<section>` in the same or an enclosing function; for a top-level key,
by `config.<key>`, `cfg.<key>` or `<anything>.config.<key>`; or by its environment variable
name as a string literal (the hook's stdlib fast path reads some settings that way).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose import config
from rose.cli import app

ROSE = Path(config.__file__).resolve().parent
GENERIC = {
    "config.py",
    "config_schema.py",
    "cli/config_cmds.py",
    "cli/docgen.py",
}  # every key, by name
CONFIG_NAMES = {"config", "cfg"}  # what a Config object is called
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _own(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `scope` itself: everything under it except the insides of nested functions."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _assigned(node: ast.AST) -> Iterator[tuple[str, ast.expr | None]]:
    """(name, value) for each plain name `node` assigns."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.NamedExpr):
        targets = [node.target]
    else:
        return
    for target in targets:
        if isinstance(target, ast.Name):
            yield target.id, node.value


def _key_read(node: ast.AST, aliases: dict[str, str], by_env: dict[str, str]) -> str | None:
    """The key `node` would read if it is one: `a.recall.max_depth` -> `recall.max_depth`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return by_env.get(node.value)
    if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)):
        return None
    owner = node.value
    if isinstance(owner, ast.Attribute):
        parent = owner.attr
    elif isinstance(owner, ast.Name):
        parent = aliases.get(owner.id, owner.id if owner.id in CONFIG_NAMES else "")
    else:
        return None
    return node.attr if parent in CONFIG_NAMES else f"{parent}.{node.attr}"


def reads(source: str, keys: Iterable[str]) -> dict[str, list[int]]:
    """The keys `source` reads, each with the lines that read it."""
    keys = set(keys)
    by_env = {config.env_name(k): k for k in keys}
    found: dict[str, list[int]] = {}

    def visit(scope: ast.AST, inherited: dict[str, str]) -> None:
        nodes = list(_own(scope))
        aliases = dict(inherited)  # local name -> the section (or "config") it was taken from
        for node in nodes:
            for name, value in _assigned(node):
                if isinstance(value, ast.Attribute):
                    aliases[name] = value.attr
        for node in nodes:
            key = _key_read(node, aliases, by_env)
            if key in keys:
                found.setdefault(key, []).append(node.lineno)
        for node in nodes:
            if isinstance(node, _SCOPES):
                visit(node, aliases)

    visit(ast.parse(source), {})
    return found


def read_in_rose() -> dict[str, list[str]]:
    """Every key read somewhere in rose/, each with its `path:line` places."""
    out: dict[str, list[str]] = {}
    for path in sorted(ROSE.rglob("*.py")):
        rel = path.relative_to(ROSE).as_posix()
        if rel in GENERIC:
            continue
        for key, lines in reads(path.read_text(encoding="utf-8"), config.keys()).items():
            out.setdefault(key, []).extend(f"rose/{rel}:{n}" for n in lines)
    return out


def problems(keys: Iterable[str], marked: set[str], read: dict[str, list[str]]) -> list[str]:
    out = []
    for key in keys:
        if key not in marked and key not in read:
            out.append(
                f"{key} is read by no code in rose/: read it, or mark its Field "
                "json_schema_extra=NOT_BUILT in rose/config_schema.py"
            )
        if key in marked and key in read:
            out.append(
                f"{key} is marked not built yet but read at {', '.join(read[key])}: "
                "remove json_schema_extra=NOT_BUILT from its Field in rose/config_schema.py"
            )
    return out


def marked() -> set[str]:
    return set(filter(config.not_built, config.keys()))


def test_every_setting_is_read_or_marked_not_built():
    assert problems(config.keys(), marked(), read_in_rose()) == []


def test_marked_settings_say_so_where_users_look():
    for key, (_default, description) in config.keys().items():
        assert description.startswith(config.NOT_BUILT_LABEL) == config.not_built(key), key


@pytest.mark.graph
def test_rose_config_shows_the_mark():
    run = CliRunner().invoke
    assert run(app, ["init"]).exit_code == 0
    lines = {line.split(" = ")[0]: line for line in run(app, ["config"]).output.splitlines()}
    for key in config.fields():  # none is marked since routing was built; each says so if it is
        assert lines[key].endswith(config.NOT_BUILT_LABEL) == (key in marked()), key
    assert config.NOT_BUILT_LABEL not in lines["recall.max_depth"]
    rows = json.loads(run(app, ["config", "--json"]).output)
    assert {r["key"]: r["built"] for r in rows} == {k: k not in marked() for k in config.fields()}
    said = run(app, ["config", "routing.max_tokens", "200"]).output
    assert ("nothing reads it yet" in said) == ("routing.max_tokens" in marked())
    assert "nothing reads it yet" not in run(app, ["config", "recall.max_depth", "2"]).output


SYNTHETIC = """
import os

def serve(store):
    rc = store.config.recall
    cfg = store.config
    return rc.judge_calls, store.config.graph.engine, cfg.agent, rc.strategy

def fast_path():
    def inner():
        return rc.max_depth  # the enclosing function's alias: still recall
    rc = load().recall
    return os.environ.get("ROSE_RECALL_ENABLED"), inner

def not_reads(self, rng, compress, store, rc):
    rc.max_pack_tokens              # `rc` is a parameter here, no alias of a section
    rng.sample([], 0)               # `sample` of something else than compress
    compress.ratio                  # a bare name is not the section
    self.model                      # not a Config object
    store.config.recall.stays_fresh_turns = 1   # a write, not a read
    "recall.max_pack_tokens"        # the dotted key as text
    "ROSE_REFLECT_MODE is set"      # the env name inside other text
"""


def test_detector_finds_reads_and_only_reads():
    found = reads(SYNTHETIC, config.keys())
    assert set(found) == {
        "recall.judge_calls",
        "recall.strategy",
        "recall.max_depth",
        "recall.enabled",
        "graph.engine",
        "agent",
    }
    assert found["recall.judge_calls"] == [7]


def test_the_check_fails_both_ways():
    """On the synthetic source, the real marks (and recall.strategy and routing.max_tokens,
    marked as they once were)
    give both kinds of complaint."""
    read = {
        k: [f"synthetic:{n}" for n in lines] for k, lines in reads(SYNTHETIC, config.keys()).items()
    }
    found = problems(config.keys(), marked() | {"recall.strategy", "routing.max_tokens"}, read)
    assert any(p.startswith("recall.strategy is marked not built yet but read") for p in found)
    assert any(p.startswith("recall.max_pack_tokens is read by no code") for p in found)
    assert not any(p.startswith(("recall.judge_calls", "routing.max_tokens")) for p in found)
