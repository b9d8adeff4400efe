"""What a stage needs to ask a question of meaning: each call declared, and the judge protocol.

A call is a `Call[Ctx, Ans]`: its name, a Jinja2 template (``prompts/<name>.j2``), the
pydantic model its context must fit and the one its answer must fit (whose JSON schema
the backend enforces), and whether its judgements are cached. A stage asks
``judge.ask(RELEVANCE, ctx)`` and gets a `RelevanceAnswer` back, typed.

`Judge` is the protocol a stage holds: `rose.judge.calls.Judge` is the real one (cache,
backend, event log). This module imports pydantic and the answer models only, so a stage
can name the calls without loading the template engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from rose.errors import RoseError
from rose.judge import models as m

if TYPE_CHECKING:
    from rose.model.base import Backend

Ctx = TypeVar("Ctx", bound=BaseModel)
Ans = TypeVar("Ans", bound=BaseModel)
_Ctx_co = TypeVar("_Ctx_co", bound=BaseModel, covariant=True)
_Ans_co = TypeVar("_Ans_co", bound=BaseModel, covariant=True)


@dataclass(frozen=True)
class Call(Generic[_Ctx_co, _Ans_co]):
    """One semantic call: what it asks, what it is rendered from, what must come back."""

    name: str
    question: str
    context: type[_Ctx_co]
    answer: type[_Ans_co]
    cache: bool
    # (list field of the context, then the fields of the answer) whose ids must be offered.
    ids: tuple[str, ...] | None = None


RELEVANCE = Call(
    "relevance",
    "Which remembered lessons bear on this prompt?",
    m.RelevanceContext,
    m.RelevanceAnswer,
    cache=True,
    ids=("candidates", "verdicts"),
)

FAMILY_GIST = Call(
    "family_gist",
    "What are this family's lessons about, in one line?",
    m.FamilyGistContext,
    m.FamilyGistAnswer,
    cache=True,
)

RELATED = Call(
    "related",
    "Which existing lessons cover the same subject as this new one?",
    m.RelatedContext,
    m.RelatedAnswer,
    cache=True,
    ids=("candidates", "matches", "descend"),
)

RECONCILE = Call(
    "reconcile",
    "How does this new lesson relate to what is already known?",
    m.ReconcileContext,
    m.ReconcileAnswer,
    cache=True,
    ids=("existing", "target"),
)

SCOPE = Call(
    "scope",
    "Does this lesson belong to this repository, or everywhere?",
    m.ScopeContext,
    m.ScopeAnswer,
    cache=True,
)

ASSESS = Call(
    "assess",
    "How did this session go, and which served lessons bore on it?",
    m.AssessContext,
    m.AssessAnswer,
    cache=False,
    ids=("served", "lessons"),
)

REFLECT = Call(
    "reflect",
    "Are there lessons in this session? If so, write each out in full, one per subject.",
    m.ReflectContext,
    m.ReflectAnswer,
    cache=False,
)

RANK_REPAIRS = Call(
    "rank_repairs",
    "Which dropped detail explains this failure?",
    m.RankRepairsContext,
    m.RankRepairsAnswer,
    cache=True,
    ids=("claims", "ranking"),
)

RULE_FORM = Call(
    "rule_form",
    "Is this selection rule conditioned on a kind of task, not a verdict on a lesson?",
    m.RuleFormContext,
    m.RuleFormAnswer,
    cache=True,
)

RULE_CONFLICT = Call(
    "rule_conflict",
    "Which stored selection rules say the opposite for the same kind of task?",
    m.RuleConflictContext,
    m.RuleConflictAnswer,
    cache=True,
    ids=("existing", "conflicts"),
)

GIST = Call(
    "gist",
    "Rewrite this lesson's line to name every subject it is about.",
    m.GistContext,
    m.GistAnswer,
    cache=True,
)

COMPRESS = Call(
    "compress",
    "Rewrite this lesson shorter, declaring every claim removed.",
    m.CompressContext,
    m.CompressAnswer,
    cache=False,
)

REPLAY_PROBE = Call(
    "replay_probe",
    "Given only this lesson, how would you approach this task?",
    m.ReplayProbeContext,
    m.ReplayProbeAnswer,
    cache=True,
)

REPLAY_JUDGE = Call(
    "replay_judge",
    "Does this approach reproduce the accepted outcome?",
    m.ReplayJudgeContext,
    m.ReplayJudgeAnswer,
    cache=True,
)

COUNTERFACTUAL_PROBE = Call(
    "counterfactual_probe",
    "Given only these lessons (or none), how would you approach this task?",
    m.CounterfactualProbeContext,
    m.ReplayProbeAnswer,
    cache=True,
)

COUNTERFACTUAL = Call(
    "counterfactual",
    "Did this lesson change the approach to this task?",
    m.CounterfactualContext,
    m.CounterfactualAnswer,
    cache=True,
)

SPLIT = Call(
    "split",
    "Split this part of a document the user gave into lessons of one point each.",
    m.SplitContext,
    m.SplitAnswer,
    cache=False,
)

MERGE = Call(
    "merge",
    "Write the shared parent of lessons used together, declaring what it drops.",
    m.MergeContext,
    m.MergeAnswer,
    cache=False,
)


CALLS: dict[str, Call[BaseModel, BaseModel]] = {
    c.name: c
    for c in (
        RELEVANCE,
        FAMILY_GIST,
        RELATED,
        RECONCILE,
        SCOPE,
        ASSESS,
        REFLECT,
        RANK_REPAIRS,
        RULE_FORM,
        RULE_CONFLICT,
        GIST,
        COMPRESS,
        REPLAY_PROBE,
        REPLAY_JUDGE,
        COUNTERFACTUAL_PROBE,
        COUNTERFACTUAL,
        SPLIT,
        MERGE,
    )
}


def call_spec(name: str) -> Call[BaseModel, BaseModel]:
    """The call named `name`."""
    try:
        return CALLS[name]
    except KeyError:
        raise RoseError(
            f"no semantic call named {name!r}; the calls are {', '.join(CALLS)}"
        ) from None


class Judge(Protocol):
    """What a stage asks its questions of meaning through: `rose.judge.calls.Judge`, or any
    judge a test builds that answers the same way."""

    @property
    def backend(self) -> Backend: ...

    @property
    def timeout_s(self) -> float: ...

    def ask(self, call: Call[Ctx, Ans], context: BaseModel | Mapping[str, Any]) -> Ans:
        """Call `call`'s answer about `context` (from the cache, else from the backend)."""
        ...

    def cached(self, call: Call[Ctx, Ans], context: BaseModel | Mapping[str, Any]) -> Ans | None:
        """The cached answer of `call` about `context`, or None: never asks the backend."""
        ...

    def prewarm(self, name: str, n: int = 1) -> int:
        """Let the backend get ready for `n` questions of call `name` still to come."""
        ...
