"""The semantic calls: every question about meaning, each behind a template, a schema and a cache.

A call is one `Call[Ctx, Ans]` declared in `rose.judge.base` and registered in `CALLS`:
its name, a Jinja2 template (``prompts/<name>.j2``, rendered with `StrictUndefined`), the
pydantic model its context must fit, the pydantic model its answer must fit (whose JSON
schema the backend enforces), and whether its judgements are cached.

Cached calls are the questions that recur with identical inputs (is this lesson relevant
to this prompt, do these two lessons cover the same subject). The generative calls
(compress, merge) and the once-per-session ones (assess, reflect) are not: a retried
compression must be free to come out differently, and a session's digest never recurs.

The cache key covers the call, the template's hash, the model, the answer schema's hash
and the whole context (candidates' text included), so editing a prompt, switching model,
changing a schema or editing a lesson invalidates exactly the judgements it touched.
An answer that does not validate raises `AnswerInvalid`; it is never cached and never
read as a pass.

Every judgement is logged as a ``judge`` event whose ``latency_ms`` is measured around
the call; a backend's figures are logged as it reported them, and a simulated backend's
invented ones only under ``simulated`` (see `usage_fields`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

import jinja2
from pydantic import BaseModel, ValidationError

from rose.errors import AnswerInvalid, BackendFailed, BackendTimeout, RoseError
from rose.frame import closed
from rose.judge.base import CALLS as CALLS
from rose.judge.base import Call as Call
from rose.judge.base import call_spec as call_spec
from rose.judge.cache import JudgeCache, cache_key, canonical, digest
from rose.model.base import Backend, BackendAnswer, Usage
from rose.prompt_files import template_text

if TYPE_CHECKING:
    from rose.store.facade import Store

C = TypeVar("C", bound=BaseModel)
A = TypeVar("A", bound=BaseModel)


@cache
def template_source(name: str) -> str:
    """The packaged template text of call `name`."""
    call_spec(name)
    return template_text(name)


@cache
def _environment() -> jinja2.Environment:
    """Every inserted value is `closed`: a lesson cannot end the frame it is shown in."""
    return jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        finalize=closed,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@lru_cache(maxsize=64)
def _compiled(source: str) -> jinja2.Template:
    return _environment().from_string(source)


def environment() -> jinja2.Environment:
    """The Jinja2 environment every prompt is rendered in."""
    return _environment()


@cache
def schema_of(name: str) -> dict[str, Any]:
    """The JSON schema the backend must make call `name`'s answer fit."""
    return call_spec(name).answer.model_json_schema()


def coerce_context(name: str, context: BaseModel | Mapping[str, Any]) -> BaseModel:
    """`context` as call `name`'s context model (a dict or another model is validated)."""
    model = call_spec(name).context
    if isinstance(context, model):
        return context
    if isinstance(context, BaseModel):
        context = context.model_dump()
    return model.model_validate(context)


def render(name: str, context: BaseModel | Mapping[str, Any], *, source: str | None = None) -> str:
    """The prompt for call `name`, rendered from `context` (and `source`, if given)."""
    ctx = coerce_context(name, context)
    template = _compiled(template_source(name) if source is None else source)
    return template.render({field: getattr(ctx, field) for field in type(ctx).model_fields})


#: The calls that write lessons out (a reflection, a compression, a merge, a split): a real
#: model writes for longer than it judges, so they get `calls.write_s`.
WRITING = frozenset({"reflect", "compress", "merge", "split"})


class Judge:
    """Asks the semantic calls of one backend, through the cache, logging every judgement.

    `timeout_s` bounds each call, `write_s` each call that writes lessons (`WRITING`; by
    default `timeout_s`). A call that timed out or failed (`BackendTimeout`, `BackendFailed`:
    a busy model, a dropped connection) is asked again up to `retries` times, after
    `backoff_s`, doubled each time; one the backend cannot run at all is not."""

    def __init__(
        self,
        backend: Backend,
        *,
        cache_path: Path | None,
        events_path: Path | None,
        model_name: str = "",
        timeout_s: float = 20,
        write_s: float | None = None,
        retries: int = 0,
        backoff_s: float = 0.0,
        templates: Mapping[str, str] | None = None,
    ):
        self.backend = backend
        self.cache = JudgeCache(cache_path) if cache_path is not None else None
        self.events_path = events_path
        self.model_name = model_name or getattr(backend, "name", "")
        self.timeout_s = timeout_s
        self.write_s = write_s if write_s is not None else timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.templates = dict(templates or {})
        self.asked = 0  # judgements that reached the backend
        self.hits = 0  # judgements answered from the cache
        self._counting = threading.Lock()  # recall asks a level's chunks from threads

    def source(self, name: str) -> str:
        """The template text this judge renders call `name` from."""
        return self.templates.get(name) or template_source(name)

    def key(self, name: str, context: BaseModel | Mapping[str, Any]) -> str:
        """The cache key of asking call `name` about `context`."""
        ctx = coerce_context(name, context)
        return self._key(name, ctx, digest(self.source(name)))

    def _key(self, name: str, ctx: BaseModel, template_hash: str) -> str:
        schema_hash = digest(canonical(schema_of(name)))
        return cache_key(
            name, template_hash, self.model_name, schema_hash, ctx.model_dump(mode="json")
        )

    @overload
    def ask(self, call: Call[C, A], context: BaseModel | Mapping[str, Any]) -> A: ...

    @overload
    def ask(self, call: str, context: BaseModel | Mapping[str, Any]) -> BaseModel: ...

    def ask(self, call: Call[C, A] | str, context: BaseModel | Mapping[str, Any]) -> BaseModel:
        """Answer call `call` (a `Call`, or its name) about `context`: from the cache, else
        from the backend.

        Returns an instance of the call's answer model. Raises AnswerInvalid when the
        answer does not fit, and whatever the backend raises when it fails.
        """
        spec = call_spec(call) if isinstance(call, str) else call
        return self._ask(spec, context)

    def _ask(self, spec: Call[C, A], context: BaseModel | Mapping[str, Any]) -> A:
        name = spec.name
        ctx = coerce_context(name, context)
        source = self.source(name)
        template_hash = digest(source)
        key = self._key(name, ctx, template_hash)
        started = time.perf_counter()
        use_cache = spec.cache and self.cache is not None
        if use_cache:
            answer = self._cached(spec, ctx, key)
            if answer is not None:
                with self._counting:
                    self.hits += 1
                self._log(name, template_hash, started, cached=True)
                return answer
        prompt = render(name, ctx, source=source)
        with self._counting:
            self.asked += 1
        attempt = 0
        while True:
            try:
                reply = self.backend.complete(
                    name, prompt, schema_of(name), timeout_s=self.deadline(name)
                )
                answer = validate_answer(spec, ctx, reply)
            except (BackendTimeout, BackendFailed) as exc:
                again = attempt < self.retries
                self._log(name, template_hash, started, cached=False,
                          error=type(exc).__name__, retry=again)  # fmt: skip
                if not again:
                    raise
                time.sleep(self.backoff_s * 2**attempt)
                attempt, started = attempt + 1, time.perf_counter()
                continue
            except RoseError as exc:
                self._log(name, template_hash, started, cached=False, error=type(exc).__name__)
                raise
            if use_cache and self.cache is not None:
                self.cache.put(key, name, answer.model_dump(mode="json"))
            self._log(name, template_hash, started, cached=False, reply=reply)
            return answer

    def deadline(self, name: str) -> float:
        """Seconds call `name` may take."""
        return self.write_s if name in WRITING else self.timeout_s

    def prewarm(self, name: str, n: int = 1) -> int:
        """Let the backend get ready for `n` questions of call `name` still to come, where it
        can (the claude CLI starts its processes ahead: `ClaudeBackend.prewarm`); how many
        it started. Never raises: a backend that cannot simply answers later."""
        warm = getattr(self.backend, "prewarm", None)
        if warm is None or n <= 0:
            return 0
        try:
            return int(warm(schema_of(name), n))
        except RoseError:
            return 0

    @overload
    def cached(self, call: Call[C, A], context: BaseModel | Mapping[str, Any]) -> A | None: ...

    @overload
    def cached(self, call: str, context: BaseModel | Mapping[str, Any]) -> BaseModel | None: ...

    def cached(
        self, call: Call[C, A] | str, context: BaseModel | Mapping[str, Any]
    ) -> BaseModel | None:
        """The cached answer of call `call` (a `Call`, or its name) about `context`, or None:
        never asks the backend."""
        spec = call_spec(call) if isinstance(call, str) else call
        name = spec.name
        if not spec.cache or self.cache is None:
            return None
        ctx = coerce_context(name, context)
        return self._cached(spec, ctx, self._key(name, ctx, digest(self.source(name))))

    def _cached(self, spec: Call[C, A], ctx: BaseModel, key: str) -> A | None:
        data = self.cache.get(key) if self.cache is not None else None
        if data is None:
            return None
        try:
            answer = spec.answer.model_validate(data)
        except ValidationError:
            return None
        return answer if not unknown_ids(spec, ctx, answer) else None

    def _log(
        self,
        name: str,
        template_hash: str,
        started: float,
        *,
        cached: bool,
        reply: BackendAnswer | None = None,
        error: str = "",
        retry: bool = False,
    ) -> None:
        if self.events_path is None:
            return
        from rose.events import append_event  # the log redacts, so it imports redaction

        measured = time.perf_counter() - started
        data: dict[str, Any] = {
            "call": name,
            "template_hash": template_hash[:16],
            "cached": cached,
            "latency_ms": round(measured * 1000, 3),
            **usage_fields(reply.usage if reply is not None else None),
        }
        if error:
            data["error"] = error
        if retry:
            data["retry"] = True  # asked again: not (yet) a failed judgement
        append_event(self.events_path, "judge", data)


def usage_fields(usage: Usage | None) -> dict[str, Any]:
    """A judge event's usage: the backend's real figures, and any simulated ones kept apart.

    ``input_tokens``, ``output_tokens`` and ``cost_usd`` are what the backend reported (0
    when it reports nothing); ``backend_latency_ms`` is the backend's own wall time, beside
    the judge's measured ``latency_ms``. A simulated backend's invented figures go under
    ``simulated`` only, so a sum over the top-level fields never includes them.
    """
    if usage is None:
        return {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    out: dict[str, Any] = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": usage.cost_usd,
    }
    if usage.wall_s > 0:
        out["backend_latency_ms"] = round(usage.wall_s * 1000, 3)
    sim = usage.simulated
    if sim is not None:
        out["simulated"] = {
            "input_tokens": sim.input_tokens,
            "output_tokens": sim.output_tokens,
            "cost_usd": sim.cost_usd,
            "latency_ms": round(sim.wall_s * 1000, 3),
        }
    return out


def validate_answer(spec: Call[C, A], ctx: BaseModel, reply: BackendAnswer) -> A:
    """The backend's answer as the call's answer model, or AnswerInvalid."""
    try:
        answer = spec.answer.model_validate(reply.data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "answer"
        raise AnswerInvalid(spec.name, reply.raw, f"{where}: {first.get('msg', '')}") from None
    stray = unknown_ids(spec, ctx, answer)
    if stray:
        raise AnswerInvalid(
            spec.name, reply.raw, f"names ids that were not offered: {', '.join(stray)}"
        )
    return answer


def unknown_ids(spec: Call[BaseModel, BaseModel], ctx: BaseModel, answer: BaseModel) -> list[str]:
    """Ids in `answer` that the context never offered (an answer may not invent lessons)."""
    if spec.ids is None:
        return []
    offered_field, *answered_fields = spec.ids
    offered = {item.id for item in getattr(ctx, offered_field)}
    answered_ids: list[str] = []
    for answered_field in answered_fields:
        answered = getattr(answer, answered_field)
        if isinstance(answered, str):
            answered_ids += [answered] if answered else []
        else:
            answered_ids += [item.id for item in answered]
    return [i for i in dict.fromkeys(answered_ids) if i not in offered]


def for_store(
    store: Store,
    *,
    agent: str | None = None,
    backend: Backend | None = None,
    timeout_s: float | None = None,
) -> Judge:
    """A judge for `store`: its configured backend (or `agent`), its cache and its event log.

    Paced for background work by the store's `calls.*` settings; `timeout_s` given (the
    prompt's path) bounds every call by it instead, with no retry."""
    if backend is None:
        from rose.model.registry import make_backend

        backend = make_backend(agent or store.config.agent, model=store.config.model or None)
    pace = store.config.calls
    tight = timeout_s is not None
    return Judge(
        backend,
        cache_path=store.primary.judge_cache,
        events_path=store.primary.events,
        model_name=store.config.model or getattr(backend, "name", ""),
        timeout_s=timeout_s if timeout_s is not None else pace.judge_s,
        write_s=timeout_s if timeout_s is not None else pace.write_s,
        retries=0 if tight else pace.retries,
        backoff_s=pace.backoff_s,
    )
