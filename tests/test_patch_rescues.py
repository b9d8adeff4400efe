"""A refinement's patch counts as a rescue only when an episode shows it served on work that
then succeeded.

Locks in: refinement registered a patch on every ancestor and recall re-attached it, but
nothing recorded that a patch was served, so no patch was ever credited. Now the prompt
hook logs the patches each lesson's full block carried (`patched`; a one-line refresher
carries none), absorption credits them on a successful unit that used the lesson
(`Episode.patch_rescues`), and the graph folds them into the lesson's `rescues` and the
patch's own count, the same after a reindex. Failed or unknown work, a lesson not used, a
refresher, or a patch the lesson no longer carries count nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose import config
from rose.files import sessions
from rose.judge.models import ReconcileAnswer
from rose.loop.reflection._relations import apply
from rose.models import Node, claim_id
from rose.store.facade import Store
from tests._hookrun import payload, run_hook

pytestmark = pytest.mark.graph

LEAF, APEX = "n_leaf0001", "n_apex0001"
DETAIL = "Parked jobs are retried by the nightly sweep, not by the worker."


@pytest.fixture
def refined(store: Store) -> Store:
    """An apex over a leaf; a refinement of the leaf leaves a patch on the apex."""
    store.write(
        [
            Node(id=LEAF, title="Retry jobs", body="Retry with backoff.", family="jobs"),
            Node(
                id=APEX, title="Jobs recover", body="Jobs recover.", family="jobs", level=1,
                derived_from=[LEAF],
            ),
        ]
    )  # fmt: skip
    new = Node(title="Parked jobs", body=DETAIL, family="jobs")
    answer = ReconcileAnswer(
        relation="refines", target=LEAF, question="", detail=DETAIL,
        title="Parked jobs", gist="The sweep retries parked jobs.", reason="adds detail",
    )  # fmt: skip
    assert apply(store, new, answer, stored=False, scope="project").patched == [APEX]
    return store


def _patch() -> str:
    return claim_id(APEX, DETAIL)


def _counts(store: Store) -> tuple[int, dict[str, int]]:
    stats = store.get(APEX).stats
    return stats.rescues, stats.patch_rescues


def _unit(root, turn: int, *, outcome: str, used: bool = True, full: bool = True) -> None:
    patched = {APEX: [_patch()]} if full else {}
    sessions.append(root, "s1", "prompt", turn=turn, prompt=f"p{turn}", served=[APEX],
                    patched=patched)  # fmt: skip
    verdict = {"used": [APEX], "unused": []} if used else {"used": [], "unused": [APEX]}
    sessions.append(root, "s1", "used", turn=turn, **verdict)
    sessions.append(root, "s1", "outcome", turn=turn, outcome=outcome)


def test_the_view_names_each_lessons_patches(refined: Store):
    (item,) = refined.view()["lessons"]
    assert (item["id"], item["patch_ids"]) == (APEX, [_patch()])
    assert DETAIL in item["full"] and DETAIL not in item["refresher"]


@pytest.mark.parametrize(
    ("unit", "counted"),
    [
        ({"outcome": "success"}, 1),
        ({"outcome": "failure"}, 0),
        ({"outcome": "unknown"}, 0),
        ({"outcome": "success", "used": False}, 0),
        ({"outcome": "success", "full": False}, 0),  # refreshed only: no patch shown
    ],
    ids=["success-used", "failure", "unknown", "not-used", "refreshed-only"],
)
def test_a_patch_is_credited_only_on_success_with_its_lesson_used(
    refined: Store, unit: dict, counted: int
):
    _unit(refined.primary.root, 1, **unit)
    (ep,) = refined.absorb("s1", final=True)
    assert [(r.lesson, r.claim) for r in ep.patch_rescues] == [(APEX, _patch())] * counted
    assert ep.rescues == []  # a patch is not a dropped claim
    want = (counted, {_patch(): counted} if counted else {})
    assert _counts(refined) == want
    refined.reindex()
    assert _counts(refined) == want


def test_each_success_counts_once_and_a_patch_has_no_claim_row(refined: Store):
    root = refined.primary.root
    _unit(root, 1, outcome="success")
    _unit(root, 2, outcome="failure")
    _unit(root, 3, outcome="success")
    assert len(refined.absorb("s1", final=True)) == 3
    assert refined.absorb("s1", final=True) == []  # absorbed again: nothing counted twice
    assert _counts(refined) == (2, {_patch(): 2})
    assert refined.read("claims_of", ids=[APEX]) == []
    assert refined.get(LEAF).stats.rescues == 0  # the detail's other home is not credited
    refined.reindex()
    assert _counts(refined) == (2, {_patch(): 2})


def test_a_patch_the_lesson_no_longer_carries_counts_nothing(refined: Store):
    _unit(refined.primary.root, 1, outcome="success")
    refined.absorb("s1", final=True)
    assert _counts(refined) == (1, {_patch(): 1})
    apex = refined.get(APEX)
    apex.body, apex.patches = f"Jobs recover. {DETAIL}", []  # repair folded it into the body
    refined.save(apex)
    assert _counts(refined) == (0, {})
    refined.reindex()
    assert _counts(refined) == (0, {})


def _prompt(project: Path, prompt: str) -> dict | None:
    data = payload("user-prompt-submit", project, session_id="s1", prompt=prompt)
    code, out, _, err = run_hook("user-prompt-submit", data)
    assert code == 0, err
    return out


def test_the_prompt_hook_records_patches_served_in_full_only(refined: Store, project: Path):
    root = refined.primary.root
    # The next prompt refreshes what was served; the view is rebuilt, so both take the fast path.
    config.set_override(refined.primary.config, "recall.stays_fresh_turns", "1")
    assert Store.open().view()["fresh_turns"] == 1
    first = _prompt(project, "fix the job retries")
    assert first is not None and DETAIL in first["hookSpecificOutput"]["additionalContext"]
    second = _prompt(project, "and the parked ones")
    assert second is not None and DETAIL not in second["hookSpecificOutput"]["additionalContext"]
    prompts = [e for e in sessions.read(root, "s1") if e["t"] == "prompt"]
    assert [e.get("patched") for e in prompts] == [{APEX: [_patch()]}, None]
    assert [e["served"] for e in prompts] == [[APEX], [APEX]]
    for turn in (1, 2):  # both succeed with the apex used: only the full block's patch counts
        sessions.append(root, "s1", "used", turn=turn, used=[APEX], unused=[])
        sessions.append(root, "s1", "outcome", turn=turn, outcome="success")
    eps = refined.absorb("s1", final=True)
    assert [len(e.patch_rescues) for e in eps] == [1, 0]
    assert _counts(refined) == (1, {_patch(): 1})
    assert refined.get(APEX).stats.successes == 2
    refined.reindex()
    assert _counts(refined) == (1, {_patch(): 1})
