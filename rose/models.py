"""The data model: lessons (nodes), episodes, routing rules, sessions and events.

Models whose docstring starts "(not built yet)" keep the names later work will use, but
no code reads or writes them yet.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rose.text import shorten

#: `quarantined`: it carries instructions from outside content (by the reflector's account,
#: or copied from it) and waits for the user (`rose review`): stored, never served.
Status = Literal["active", "superseded", "demoted", "disputed", "archived", "quarantined"]
Origin = Literal["reflection", "compression", "merge", "manual"]
Scope = Literal["project", "global"]
#: Where a lesson's content came from: the user's own words, the repository and the agent's
#: own work in it (files, commands, test output), or outside it (fetched pages, documents
#: and tool results from elsewhere, other servers' MCP tools); "" when it was not recorded
#: (lessons written before it was). A lesson derived from others takes the farthest of theirs.
Provenance = Literal["user", "repository", "outside", ""]
PROVENANCES: tuple[str, ...] = ("user", "repository", "outside")
Outcome = Literal["success", "failure", "partial", "unknown"]
#: Why a served lesson went unused: recall over-served it, the agent knew it anyway, or it
#: bore on the work and was ignored (a salience failure).
Cause = Literal["irrelevant", "redundant", "ignored"]
#: How recall chose a prompt's lessons: all fit the budget, the model chose, or it fell back
#: to the budget-ranked apexes; "" when not known.
RecallMode = Literal["fits", "judged", "degraded", ""]
#: Who said which served lessons were used: the agent or its in-session reflector (`rose
#: used`), a forked reflector, the digest judges (`assess`, a background reflection), and
#: the agent's citations.
AttributionSource = Literal["rose used", "reflector", "assess", "background", "cite"]
#: What kept a lesson the work needed out of its block: a selection rule turned the
#: judgement away, the judgement passed it over (its line named nothing the task was
#: about), or it was chosen and left out over the token budget.
MissedBy = Literal["rule", "relevance", "budget"]
ClaimKind = Literal["parameter", "detail", "step", "example", "caveat", "principle", "other"]
#: What of a lesson is not final yet: a routing field derived (first sentence) rather than
#: written; `family`: a model chose it (a reflection's), not the user, so reconcile may move
#: or rename it, as it may the default `general`; `scope`: filed where it is by default, no
#: one having judged or chosen its scope; or `reconcile`: stored while the judge was
#: unavailable, not yet reconciled with what is known (a later job does both:
#: `rose.loop.reflection.consolidate`).
Provisional = Literal["title", "gist", "family", "scope", "reconcile"]
_PROVISIONAL_ORDER: tuple[str, ...] = ("title", "gist", "family", "scope", "reconcile")

#: Statuses recall may serve: disputed lessons stay servable, their question attached.
SERVABLE: tuple[str, ...] = ("active", "disputed")

_FAMILY_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_ID_RE = re.compile(r"^[a-z]_[0-9a-zA-Z_-]{4,64}$")


def new_id(prefix: str) -> str:
    """A fresh id: one letter, underscore, 80 random bits in hex (20 chars)."""
    return f"{prefix}_{secrets.token_hex(10)}"


def derived_id(prefix: str, *parts: str) -> str:
    """An id fixed by what it names (the work a lesson came of and its text), shaped like
    `new_id`'s: the same run makes the same ids, so the model's prompts, which name lessons
    by id, and its answers repeat."""
    digest = hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:20]
    return f"{prefix}_{digest}"


def now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


def slug(text: str) -> str:
    """A family name usable as a folder: lowercase words joined by dashes, accents dropped.

    Every command that takes a family spells it through here, so `--family "My Family"` is
    `my-family` wherever it is given; a valid family name (`db_ports`) comes back unchanged.
    """
    import unicodedata

    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    s = re.sub(r"[^a-z0-9_]+", "-", plain).lstrip("-_")[:64].rstrip("-")
    return s or "general"


def first_sentence(text: str, limit: int = 160) -> str:
    """The text's first sentence on one line, cut at a word with '…' past `limit` characters
    (mid-word only when a single word is longer than half of it)."""
    flat = " ".join(text.split())
    for end in (". ", "! ", "? "):
        i = flat.find(end)
        if 0 < i < limit:
            return flat[: i + 1]
    return shorten(flat, limit)


def _plain(text: str) -> str:
    """Text for a structural comparison: one line, casefolded, no heading marks or end stops."""
    flat = " ".join(text.split()).casefold()
    return flat.lstrip("#").strip().rstrip(".!?:;,…").rstrip()


def title_repeats(title: str, text: str) -> bool:
    """Whether `title` just repeats how `text` opens: its first line or first sentence.

    A structural comparison (case, whitespace, heading marks and end punctuation aside),
    not a similarity judgement; a title cut with '…' repeats the opening it is a prefix of.
    """
    want = _plain(title)
    lines = text.strip().splitlines()
    if not (want and lines):
        return False
    head = lines[0].strip().lstrip("#")
    openings = {_plain(first_sentence(head, len(head) + 1)), _plain(head)}
    openings.add(_plain(first_sentence(text, len(text) + 1)))
    if want in openings:
        return True
    cut = title.rstrip()
    stem = _plain(cut[:-1]) if cut.endswith("…") else ""
    return bool(stem) and any(o.startswith(stem) for o in openings)


def shown_title(title: str, text: str) -> str:
    """The title as injected above `text`: nothing when it only repeats the text's opening."""
    return "" if title_repeats(title, text) else title


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)


class Claim(_Model):
    """A piece of detail a compression or merge removed, and the node that still holds it."""

    claim: str = Field(min_length=1)
    kind: ClaimKind = "detail"
    holder: str = Field(description="id of the lesson whose body still has this detail")


def claim_id(owner: str, claim: str) -> str:
    """A dropped claim's id: its lesson and a hash of its text, so editing, adding or folding
    back another claim never renumbers it and a record pointing at it stays right. A patch
    (`Node.patches`) is named the same way, by the lesson carrying it."""
    import hashlib

    return f"{owner}#{hashlib.sha256(claim.strip().encode()).hexdigest()[:10]}"


def valid_id(value: object) -> bool:
    return isinstance(value, str) and bool(_ID_RE.match(value))


class Stats(_Model):
    """What the episodes say of a lesson, folded by the graph; never kept in the lesson file.

    `attempts` counts episodes that used the lesson, `successes` and `failures` those of
    them that succeeded or failed; a lesson served but not used is scored neither.
    `expansions` counts dropped claims of this lesson that descent restored, `rescues`
    the failures that detail held by this lesson rescued plus the successful uses its
    patches were served on; `patch_rescues` has those per patch (by `claim_id`).
    """

    attempts: int = Field(0, ge=0)
    successes: int = Field(0, ge=0)
    failures: int = Field(0, ge=0)
    expansions: int = Field(0, ge=0)
    rescues: int = Field(0, ge=0)
    patch_rescues: dict[str, int] = Field(default_factory=dict)
    last_used: datetime | None = None

    @property
    def success_rate(self) -> float | None:
        judged = self.successes + self.failures
        return self.successes / judged if judged else None


def farthest(provenances: list[str]) -> str:
    """The provenance of text drawn from all of `provenances`: outside over the repository over
    the user's words; "" when none was recorded."""
    for p in ("outside", "repository", "user"):
        if p in provenances:
            return p
    return ""


def _check_ids(values: list[str], what: str) -> list[str]:
    for v in values:
        if not _ID_RE.match(v):
            raise ValueError(f"{what} entry {v!r} is not a valid id")
    return list(dict.fromkeys(values))  # drop duplicates, keep order


class Node(_Model):
    """One lesson at one level of abstraction.

    The lesson file holds what was written about it. `stats`, `covers_tasks` (the
    regression set: successful episodes that used it) and `load_bearing` (sentences
    observed doing work) are what was observed: the graph folds them from episodes, and
    they are never written to the file.
    """

    id: str = Field(default_factory=lambda: new_id("n"))
    family: str = "general"
    title: str = Field(min_length=1)
    gist: str = ""
    provisional: list[Provisional] = Field(
        default_factory=list,
        description="title/gist derived from the first sentence, not written: to be replaced; "
        "family: chosen by a model, not the user: may be moved or renamed; "
        "scope: filed by default, its scope not judged; "
        "reconcile: stored without being reconciled with what is known",
    )
    body: str = ""
    level: int = Field(0, ge=0)
    status: Status = "active"
    origin: Origin = "manual"
    provenance: Provenance = ""
    held: str = Field("", description="why it waits for the user's review (`quarantined`)")
    accepted: bool = Field(
        False, description="the user accepted it from review: outside content may go global"
    )
    conflict: str = ""
    disputes: list[str] = Field(default_factory=list)
    derived_from: list[str] = Field(default_factory=list)
    parents: list[str] = Field(default_factory=list)
    covers_tasks: list[str] = Field(default_factory=list)
    dropped: list[Claim] = Field(default_factory=list)
    preserve: list[str] = Field(default_factory=list)
    load_bearing: list[str] = Field(default_factory=list)
    patches: list[str] = Field(
        default_factory=list, description="dropped detail that rescued this lesson: re-attached"
    )
    scope: Scope = "project"
    stats: Stats = Field(default_factory=Stats)
    created: datetime = Field(default_factory=now)
    updated: datetime = Field(default_factory=now)

    @field_validator("id")
    @classmethod
    def _id_ok(cls, v: str) -> str:
        if not _ID_RE.match(v):
            raise ValueError(f"{v!r} is not a valid lesson id (letter, '_', 4+ characters)")
        return v

    @field_validator("family")
    @classmethod
    def _family_ok(cls, v: str) -> str:
        if not _FAMILY_RE.match(v):
            raise ValueError(
                f"{v!r} is not a valid family (lowercase letters, digits, '-' and '_')"
            )
        return v

    @field_validator("derived_from", "parents", "covers_tasks", "disputes")
    @classmethod
    def _ids_ok(cls, v: list[str], info) -> list[str]:
        return _check_ids(v, info.field_name)

    @field_validator("dropped")
    @classmethod
    def _claims_once(cls, v: list[Claim]) -> list[Claim]:
        """A claim stated twice is one claim (its id is its text): keep the first."""
        seen: set[str] = set()
        out = []
        for c in v:
            if c.claim.strip() not in seen:
                seen.add(c.claim.strip())
                out.append(c)
        return out

    @field_validator("provisional")
    @classmethod
    def _provisional_ok(cls, v: list[str]) -> list[str]:
        return [f for f in _PROVISIONAL_ORDER if f in v]  # one order, no duplicates

    @property
    def servable(self) -> bool:
        return self.status in SERVABLE


class Span(_Model):
    """A sentence of a lesson observed doing work in an episode."""

    lesson: str
    span: str = Field(min_length=1)


class ClaimRef(_Model):
    """A dropped claim or a patch (by `claim_id`) of a lesson, named in an episode."""

    lesson: str
    claim: str = Field(min_length=1)


class Miss(_Model):
    """A lesson the work needed that was servable and not served, and what kept it out.

    Found when the lesson a reflection drew from the work is one the store already held
    (reconciled as a duplicate or refinement of it) and neither it nor anything serving it
    was in the block. `rules`: the selection rules the relevance answer cited for passing
    it over (by is "rule")."""

    lesson: str
    by: MissedBy
    rules: list[str] = Field(default_factory=list)


class Episode(_Model):
    """One unit of work as observed, written once and never edited: the record of evidence.

    What was served and used, the outcome, citations, load-bearing spans, descent's
    expansions and which dropped claim rescued the failure: the graph folds every
    episode into the stats of the lessons it names, so no counter is ever rewritten.
    `unused` lists what was served (or named) but not used, with the likely `causes`
    where a judge could tell; `recall` is how that prompt's lessons were chosen and
    `attributed_by` which sources spoke; `rules` the selection rules (ids) that prompt's
    selection questions were given, from which each rule's record is counted. Episodes
    written before these existed load with them empty.

    `misses` are the lessons the work needed that recall held and did not serve, each with
    what kept it out (`Miss`): the evidence a rule's record and a lesson's gist learn from.

    `patch_rescues` are the patches (`Node.patches`, by `claim_id` of the lesson carrying
    them) served in full with a lesson this successful unit used. They are kept apart from
    `rescues` because they are not dropped claims: a patch has no `Claim` row, no holder
    below it and no place in the delta manifest (descent never offers it: it is already
    served), and it is credited on success, where a dropped claim's rescue turned a failure.
    """

    id: str = Field(default_factory=lambda: new_id("e"))
    session: str = ""
    turn: int = Field(0, ge=0, description="the unit's prompt within its session (0: not known)")
    prompt: str = ""
    outcome: Outcome = "unknown"
    served: list[str] = Field(default_factory=list)
    used: list[str] = Field(default_factory=list)
    unused: list[str] = Field(default_factory=list)
    causes: dict[str, Cause] = Field(
        default_factory=dict, description="unused lesson id → why it went unused, where known"
    )
    recall: RecallMode = ""
    rules: list[str] = Field(
        default_factory=list, description="the selection rules recall's selection was given"
    )
    attributed_by: list[AttributionSource] = Field(default_factory=list)
    citations: list[str] = Field(default_factory=list)
    load_bearing: list[Span] = Field(default_factory=list)
    expansions: list[ClaimRef] = Field(default_factory=list)
    rescues: list[ClaimRef] = Field(default_factory=list)
    patch_rescues: list[ClaimRef] = Field(default_factory=list)
    misses: list[Miss] = Field(default_factory=list)
    accepted_summary: str = ""
    time: datetime = Field(default_factory=now)

    @field_validator("served", "used", "unused", "citations")
    @classmethod
    def _ids_ok(cls, v: list[str], info) -> list[str]:
        return _check_ids(v, info.field_name)

    @field_validator("causes")
    @classmethod
    def _causes_ok(cls, v: dict[str, str]) -> dict[str, str]:
        _check_ids(list(v), "causes")
        return v

    @field_validator("attributed_by")
    @classmethod
    def _sources_once(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(v))


class Correction(_Model):
    """A check's correction of what attribution recorded for one lesson on one episode.

    An episode is never edited, so a check that disagrees with its attribution (the
    counterfactual: did the approach change without the lesson?) is written beside it, a
    file of its own under `episodes/` (`c_` ids), once per (episode, lesson). The graph
    reads the episode with its corrections applied: `used` True puts the lesson among
    what the episode used, False among what it did not, so every record counted from
    the episodes (the lesson's successes and failures, its regression set, demotion's
    count, precision) follows the check.
    """

    id: str = ""
    episode: str = Field(min_length=1)
    lesson: str = Field(min_length=1)
    used: bool
    source: Literal["counterfactual"] = "counterfactual"
    reason: str = ""
    time: datetime = Field(default_factory=now)

    def model_post_init(self, _context: object) -> None:
        if not self.id:
            self.id = derived_id("c", self.episode, self.lesson)

    @field_validator("id")
    @classmethod
    def _id_ok(cls, v: str) -> str:
        if v and not _ID_RE.match(v):
            raise ValueError(f"{v!r} is not a valid correction id")
        return v

    @field_validator("episode", "lesson")
    @classmethod
    def _ids_ok(cls, v: str, info) -> str:
        return _check_ids([v], info.field_name)[0]


def corrected(ep: Episode, corrections: list[Correction]) -> Episode:
    """`ep` as its `corrections` say (those naming another episode are passed over): each
    corrected lesson moved to `used` or `unused`, in the order given, the latest last."""
    mine = [c for c in corrections if c.episode == ep.id]
    if not mine:
        return ep
    used, unused, causes = list(ep.used), list(ep.unused), dict(ep.causes)
    for c in mine:
        used = [i for i in used if i != c.lesson]
        unused = [i for i in unused if i != c.lesson]
        (used if c.used else unused).append(c.lesson)
        if c.used:
            causes.pop(c.lesson, None)
    return ep.model_copy(update={"used": used, "unused": unused, "causes": causes})


class RoutingRule(_Model):
    """A selection rule: when a kind of task comes up, where (not) to look in the store.

    Written once (by a reflection, or by hand with `rose route --when --then`) to
    `.rose/routing/<id>.yaml`; its record (the selections it took part in, how much of what
    they served was used, and the lessons it kept from work that needed them) is counted
    from the episodes that name it, never stored here. A rule is retired, never deleted,
    when its record condemns it (`retired` says why): it stays on disk, out of selection,
    so the same mistake proposed again is not written again.
    """

    id: str = Field(default_factory=lambda: new_id("r"))
    when: str = Field(min_length=1, description="the kind of task this applies to")
    then: str = Field(min_length=1, description="where to look, or what to skip")
    origin: Literal["reflection", "manual"] = "manual"
    source: str = Field("", description="the stretch of work a reflection wrote it from")
    # To the microsecond: rules are ordered newest first (selection) and oldest first (the
    # listing), ties by id. Kept to the second, two rules one reflection wrote tied or not
    # as the second turned, so their order, and the selection prompt, went with the clock.
    created: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    retired: str = Field(
        "", description="why it no longer takes part in selection (empty: it does)"
    )

    def text(self) -> str:
        """The rule as one line, as selection is shown it."""
        return f"when {self.when.strip()}: {self.then.strip()}"


class ServedEntry(_Model):
    """(not built yet) When a lesson was served in a session, and in which form."""

    turn: int = Field(ge=0)
    form: Literal["full", "refresher"] = "full"


class SessionRecord(_Model):
    """(not built yet) Per-session scratch: what was served when, for the fresh/stale/refresh
    decision."""

    session: str
    turn: int = 0
    served: dict[str, ServedEntry] = Field(default_factory=dict)
    tool_calls: int = 0
    failed_tool_calls: int = 0
    turns_since_nudge: int = 0
    last_nudge: datetime | None = None
    transcript_path: str = ""
    host: Literal["claude", "codex", "unknown"] = "unknown"


#: (not built yet) The kinds of event the log will be checked against; `rose.events`
#: writes free-form kinds today.
EventKind = Literal[
    "inject",
    "judge",
    "error",
    "add",
    "write",
    "reindex",
    "sync",
    "nudge",
    "reflect",
    "assess",
    "compress",
    "descend",
    "merge",
    "route",
    "config",
]


class Event(_Model):
    """(not built yet) One line of events.jsonl as a model; `rose.events` writes plain dicts."""

    model_config = ConfigDict(extra="allow")

    time: datetime = Field(default_factory=now)
    kind: str
