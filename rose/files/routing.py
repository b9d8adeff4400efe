"""Selection rules on disk: `.rose/routing/<id>.yaml`, one file a rule, committed like lessons.

A rule file holds what was written about the rule (its `when`, its `then`, where it came
from), never its record: how the selections it took part in went is counted from the
episodes that name it (`rule_record` in `rose/queries`). Rules live in the project store
only; they are not lessons, so the graph's lesson tables never see them and recall's own
mechanism never retrieves them. A file that cannot be read is reported by path with the
reason, and the other rules still load.

Before reflection writes a rule, the sessions that proposed it are recorded under
`routing/proposed/`: one file a rule and session (`<rule id>.<session digest>.yaml`),
written once and never edited, so concurrent reflectors lose nothing and teammates'
proposals merge through git like episodes. The rule is written once enough distinct
sessions proposed it (`routing.propose_after`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml
from pydantic import ValidationError

from rose.disk.atomic import write_text
from rose.errors import LessonFileError
from rose.models import RoutingRule

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def rule_path(folder: Path, rule_id: str) -> Path:
    return folder / f"{rule_id}.yaml"


def dump(rule: RoutingRule) -> str:
    data = rule.model_dump(mode="json")
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def save(folder: Path, rule: RoutingRule) -> Path:
    """Write `rule` (atomically, redacted): a rule is written once, and only removed."""
    path = rule_path(folder, rule.id)
    write_text(path, dump(rule))
    return path


def load(path: Path) -> RoutingRule:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise LessonFileError(path, f"unreadable selection rule: {exc}") from exc
    if not isinstance(data, dict):
        raise LessonFileError(path, "a selection rule file must be a mapping (when, then)")
    try:
        rule = RoutingRule.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "rule"
        raise LessonFileError(path, f"{where}: {first['msg']}") from exc
    if rule.id != path.stem:
        raise LessonFileError(path, f"its id {rule.id!r} is not its file name {path.stem!r}")
    return rule


def load_all(folder: Path) -> tuple[list[RoutingRule], list[LessonFileError]]:
    """Every readable rule in `folder` (oldest first), and the files that could not be read."""
    rules: list[RoutingRule] = []
    problems: list[LessonFileError] = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            rules.append(load(path))
        except LessonFileError as exc:
            problems.append(exc)
    rules.sort(key=lambda r: (r.created, r.id))
    return rules, problems


def delete(folder: Path, rule_id: str) -> bool:
    """Remove rule `rule_id` and the proposals that led to it (proposed again, it must
    clear the bar again); False when there is no such rule."""
    path = rule_path(folder, rule_id)
    for proposal in proposals(folder, rule_id):
        proposal.unlink(missing_ok=True)
    if not path.is_file():
        return False
    path.unlink()
    return True


def proposals(folder: Path, rule_id: str) -> list[Path]:
    """The files recording the sessions that proposed rule `rule_id`."""
    return sorted((folder / "proposed").glob(f"{rule_id}.*.yaml"))


def propose(folder: Path, rule_id: str, when: str, then: str, session: str) -> int:
    """Record that `session` proposed rule `rule_id`; how many distinct sessions have."""
    digest = hashlib.sha256(session.encode()).hexdigest()[:12]
    path = folder / "proposed" / f"{rule_id}.{digest}.yaml"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"rule": rule_id, "when": when, "then": then, "session": session}
        write_text(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))
    return len(proposals(folder, rule_id))
