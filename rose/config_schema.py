"""The settings ROSE has: each section's keys, their types, defaults and descriptions (the
reference in docs/configuration.md is generated from these). Reading and writing them is
`rose.config`, which re-exports what its callers name (`Config`, `Reflect`, `NOT_BUILT`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

if TYPE_CHECKING:
    from rose.config import ConfigProblem

#: The mark on a setting that is validated and shown but read by no code yet.
NOT_BUILT: dict[str, Any] = {"not_built": True}
#: How the mark reads in descriptions, `rose config` and the reference docs.
NOT_BUILT_LABEL = "(not built yet)"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Recall(Section):
    enabled: bool = Field(True, description="Inject lessons on each prompt at all.")
    max_pack_tokens: int = Field(
        2000, ge=0, description="The most tokens of lessons one prompt is given."
    )
    whole_tokens: int = Field(
        500,
        ge=0,
        description="A store whose apexes fit this many tokens (and `max_pack_tokens`) is"
        " served whole, with no model call; past it the model chooses what bears on the"
        " prompt. Kept small: a store served whole pays for every lesson on every prompt.",
    )
    judge_calls: int = Field(
        8,
        ge=0,
        description="Most relevance calls one prompt's first pass may make (chunks of one "
        "level are asked in parallel).",
    )
    max_candidates: int = Field(
        60,
        ge=1,
        description="Most one-line candidates in one relevance question, about 2,000 tokens.",
    )
    apex_chunks: int = Field(
        2,
        ge=1,
        description="Most questions (asked in parallel: one round trip) the apexes may be "
        "split into; past that many times recall.max_candidates apexes, recall offers "
        "their families first, then the apexes of the families opened.",
    )
    second_look_calls: int = Field(
        1,
        ge=0,
        description="Relevance calls of the second pass, which shows the first pass's lessons "
        "and asks again about what it judged unrelated (0: one pass).",
    )
    second_look: Literal["auto", "always"] = Field(
        "auto",
        description="When the second pass runs: auto, only for a store whose apexes outgrow "
        "one relevance question (where the benchmarks show it pays); always, whenever the "
        "model decides.",
    )
    max_depth: int = Field(3, ge=0, description="Most levels recall descends below the apexes.")
    stays_fresh_turns: int = Field(
        8, ge=1, description="Turns a served lesson counts as still in context."
    )
    strategy: Literal["delta-patch", "delta-jump", "stepwise"] = Field(
        "delta-patch",
        description="How descent restores detail when a compressed lesson fails.",
    )


class Graph(Section):
    engine: Literal["kuzu", "ladybug"] = Field(
        "kuzu", description="Embedded graph engine: kuzu 0.11.3, or its fork ladybug."
    )
    lock_timeout_s: float = Field(
        30.0, gt=0, description="How long a command waits for another process's database lock."
    )
    hook_lock_timeout_s: float = Field(
        2.0, gt=0, description="How long a hook waits for the database lock before degrading."
    )
    keep_open_s: float = Field(
        600.0,
        ge=0,
        description="Seconds a graph server keeps the database open after its last use, so "
        "the next command, hook or job skips the engine's open (~25-45 ms at 10,000 "
        "lessons; ~100-130 MB there, one per store); 0: each process opens it itself.",
    )


class Attribute(Section):
    counterfactual_calls: int = Field(
        6,
        ge=0,
        description=(
            "Model calls one run of counterfactual checks may make (the job after a session,"
            " or `rose attribute --counterfactual`): each probe and each judgement counts, at"
            " most three a served lesson checked; 0 turns the checks off."
        ),
    )


class Compress(Section):
    max_level: int = Field(6, ge=1, description="No compression above this level.")
    min_successes: int = Field(
        2, ge=1, description="Used-and-succeeded recalls a lesson needs before compressing."
    )
    ratio: float = Field(
        0.75, gt=0, le=1, description="A compression must be at most this share of the tokens."
    )
    claims_after: int = Field(
        5,
        ge=0,
        description=(
            "Attributed successes a lesson needs before a compression or merge may drop a"
            " claim it makes (a value, name, command, step, pitfall or rule: anything but"
            " anecdote and reasons); until then a candidate dropping one is refused. 0 lets"
            " claims go from the first compression."
        ),
    )
    sample: int = Field(5, ge=1, description="Regression episodes replayed per compression.")
    held_out: float = Field(
        0.25,
        ge=0,
        lt=1,
        description=(
            "Share of a lesson's episodes (at least one, from three episodes on) never shown"
            " to validation, checked after a compression is accepted."
        ),
    )
    repair_after: int = Field(
        3,
        ge=1,
        description=(
            "Rescues of one lesson by the same dropped claim (failures it turned, successful"
            " uses its patch was served on) after which the claim is folded into the lesson's"
            " body and leaves its manifest."
        ),
    )
    demote_after: int = Field(
        3,
        ge=1,
        description=(
            "Failures in a row of work that used a compression, with no rescue by descent in"
            " between, after which it is demoted and what it was derived from serves again."
        ),
    )


class Merge(Section):
    min_co_uses: int = Field(
        1,
        ge=1,
        description="Successful episodes a group of lessons must have been used (or, with"
        " `together: served`, served) on together before it earns a shared parent.",
    )
    max_children: int = Field(4, ge=2, description="Most lessons one merge generalises.")
    within: Literal["scope", "family"] = Field(
        "family",
        description="Where a group's members come from: any apexes of one scope, or of one"
        " family (the subject reconciliation filed them under) as well.",
    )
    together: Literal["used", "served"] = Field(
        "served",
        description="What counts an episode for a group: it used a lesson under every member"
        " (`used`), or it was served every member and used one at least (`served`): lessons"
        " recall serves together are paid for together.",
    )
    budget: Literal["bodies", "served"] = Field(
        "served",
        description="What a merged parent must be smaller than: its children's bodies together"
        " (`bodies`), or its children as recall serves them, each in its own frame (`served`):"
        " one parent served in their place saves every frame but its own.",
    )


class Descend(Section):
    """Descent's score of a claim: w_judge * usefulness + w_prior * prior - w_cost * cost."""

    w_judge: float = Field(
        0.60, ge=0, description="Weight of the model's judgement that a claim explains a failure."
    )
    w_prior: float = Field(
        0.28, ge=0, description="Weight of how often the claim rescued this lesson before."
    )
    w_cost: float = Field(0.12, ge=0, description="Weight of the claim's (normalised) token cost.")


class Routing(Section):
    enabled: bool = Field(
        True,
        description="Write selection rules from reflections and give them to recall's selection.",
    )
    max_tokens: int = Field(
        300,
        ge=0,
        description=(
            "Token cap on the selection rules given to each of recall's selection questions;"
            " when it binds, the rules with the worst record drop out first."
        ),
    )
    propose_after: int = Field(
        2,
        ge=1,
        description=(
            "Distinct sessions that must propose the same selection rule (the same kind of"
            " task, the same selection mistake) before reflection writes it; 1 writes it at once."
        ),
    )
    retire_after_misses: int = Field(
        2,
        ge=1,
        description=(
            "Misses (work that needed a lesson the rule turned away) after which a selection"
            " rule is retired: kept on disk, out of selection, never written again."
        ),
    )


class Reflect(Section):
    mode: Literal["background", "fork", "block", "off"] = Field(
        "background",
        description=(
            "How the per-turn reflector sees the session: background (a digest to one detached"
            " call), fork (Claude Code: a detached fork of the session; under Codex, background),"
            " block (the agent reflects in its own context for one turn), off (session end only)."
        ),
    )
    nudge_after_tool_calls: int = Field(
        12, ge=1, description="Tool calls since the last reflection that make one worthwhile."
    )
    nudge_after_turns: int = Field(
        3, ge=1, description="Turns since the last reflection that make one worthwhile."
    )
    min_surprises: int = Field(
        2, ge=1, description="Failed tool calls since the last reflection that make one worthwhile."
    )
    nudge_cooldown_s: int = Field(
        300, ge=0, description="Least seconds between two reflections in a session."
    )
    nudge_backoff_after: int = Field(
        3,
        ge=1,
        description=(
            "Reflections in a row that produced nothing, after which the cooldown doubles with"
            " each further one (reset by a reflection that produces something)."
        ),
    )
    digest_tokens: int = Field(
        3000, ge=200, description="Size of the transcript digest a background reflector reads."
    )


class Calls(Section):
    prompt_s: float = Field(
        15.0,
        gt=0,
        le=25,  # the hooks' own timeout is 30 s (hooks/hooks.json): recall ends inside it
        description="Seconds recall on the prompt's path may wait for the model in all; each "
        "question gets 60% of it, and none is retried (the prompt cannot wait twice).",
    )
    judge_s: float = Field(
        120.0,
        gt=0,
        description="Seconds a background judgement (assess, scope, reconcile, a replay ...) "
        "may take before it counts as timed out.",
    )
    write_s: float = Field(
        300.0,
        gt=0,
        description="Seconds a call that writes lessons (reflect, compress, merge) may take.",
    )
    retries: int = Field(
        1, ge=0, le=5, description="Retries of a background call that timed out or failed."
    )
    backoff_s: float = Field(
        5.0, ge=0, description="Seconds before a retry, doubled for each further one."
    )


class Jobs(Section):
    max_concurrent: int = Field(
        2, ge=1, description="Detached jobs that may run at once per store; the rest wait."
    )
    queue_max: int = Field(
        20,
        ge=1,
        description="Jobs that may wait for a slot; past that a job is deferred: kept, and "
        "run when there is room (`rose jobs` shows it).",
    )
    deadline_s: float = Field(
        600.0,
        gt=0,
        description="Seconds a job may run at least; a kind making model calls may run as "
        "long as its calls' deadlines and retries allow (`calls.*`).",
    )
    keep_days: float = Field(
        7.0,
        gt=0,
        description="Days a done job is kept (failed ones stay); its key is not rerun meanwhile.",
    )


class Config(Section):
    agent: Literal["claude", "codex", "simulated"] = Field(
        "claude", description="Which model backend answers the judge's calls."
    )
    model: str = Field("", description="Model name passed to the backend CLI; empty: its default.")
    recall: Recall = Field(default_factory=Recall)
    graph: Graph = Field(default_factory=Graph)
    attribute: Attribute = Field(default_factory=Attribute)
    compress: Compress = Field(default_factory=Compress)
    merge: Merge = Field(default_factory=Merge)
    descend: Descend = Field(default_factory=Descend)
    routing: Routing = Field(default_factory=Routing)
    reflect: Reflect = Field(default_factory=Reflect)
    calls: Calls = Field(default_factory=Calls)
    jobs: Jobs = Field(default_factory=Jobs)

    _problems: list[ConfigProblem] = PrivateAttr(default_factory=list)

    @property
    def problems(self) -> list[ConfigProblem]:
        """What `load` ignored: unknown keys, invalid values, unreadable files."""
        return self._problems
