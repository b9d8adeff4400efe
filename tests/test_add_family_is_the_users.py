"""A family the user gives is kept as given, whatever relation reconcile finds.

Locks in: `rose add ... --family deploy` was filed as `deploy-2` because reconcile judged
the lesson to be on another subject than the lesson already in `deploy` (orthogonal), and
a specialisation or contradiction moved it into its target's family. A family given by the
user is the user's word; only one a default or a model chose (the default `general`, or
`"family"` in `Node.provisional`: a reflection's, an agent's `--source reflector`) may be
renamed or moved.
"""

from __future__ import annotations

import pytest

from rose.judge import models as m
from rose.loop.reflection.consolidate import consolidate
from rose.loop.reflection.reflect import minted_nodes
from rose.store.facade import Store
from tests._reconcile import judge, lesson, reconciled, related

pytestmark = pytest.mark.graph

OTHER = "Deploys roll back with `make rollback`; the previous image stays tagged `prev`."


@pytest.fixture
def deploy(store: Store) -> Store:
    store.save(lesson("n_deploy001", "Deploy with `make ship` from main.", family="deploy"))
    return store


def _answer(relation: str, target: str = "", **extra: object) -> dict:
    return {**reconciled(relation, target, question="Which?"), **extra}


@pytest.mark.parametrize(
    "answer",
    [
        _answer("orthogonal"),
        _answer("refines", "n_deploy001", detail="Rollback.", other_subjects=["rollback"]),
        _answer("specialises", "n_deploy001"),
        _answer("contradicts", "n_deploy001"),
    ],
    ids=["orthogonal", "refinement-kept-apart", "specialises", "contradicts"],
)
def test_a_family_the_user_gave_is_kept_whatever_the_relation(deploy: Store, answer: dict):
    j, _b = judge(deploy, related=[related(matches=("n_deploy001",))], reconcile=[answer])
    new = Store.draft(OTHER, family="deploy")
    assert "family" not in new.provisional
    done = consolidate(deploy, j, new, source="user", scope="project")
    assert done.lesson is not None
    assert Store.open().get(done.lesson.id).family == "deploy"


def test_a_family_given_under_another_name_is_not_moved_to_the_targets(deploy: Store):
    answer = _answer("specialises", "n_deploy001")
    j, _b = judge(deploy, related=[related(matches=("n_deploy001",))], reconcile=[answer])
    done = consolidate(deploy, j, Store.draft(OTHER, family="Roll Back"), source="user",
                       scope="project")  # fmt: skip
    assert done.lesson is not None and Store.open().get(done.lesson.id).family == "roll-back"


def test_a_default_family_is_still_made_a_family_of_its_own(deploy: Store):
    answer = _answer("orthogonal", title="Deploy rollback")
    j, _b = judge(deploy, related=[related(matches=("n_deploy001",))], reconcile=[answer])
    done = consolidate(deploy, j, Store.draft(OTHER), source="user", scope="project")
    assert done.lesson is not None
    node = Store.open().get(done.lesson.id)
    assert (node.family, node.provisional) == ("deploy-rollback", [])


def test_a_family_a_reflection_chose_is_still_made_unique(deploy: Store):
    found = m.ReflectAnswer.model_validate(
        {
            "found": True,
            "reason": "it taught a rollback",
            "new_lessons": [
                {
                    "title": "Rollback",
                    "gist": "Roll back.",
                    "family": "deploy",
                    "body": OTHER,
                    "provenance": "repository",
                    "outside_instructions": False,
                }  # fmt: skip
            ],
        }
    )
    (minted,) = minted_nodes(found)
    assert minted.provisional == ["family"]
    j, _b = judge(deploy, related=[related(matches=("n_deploy001",))],
                  reconcile=[_answer("orthogonal")])  # fmt: skip
    done = consolidate(deploy, j, minted, source="reflector", scope="project")
    assert done.lesson is not None and Store.open().get(done.lesson.id).family == "deploy-2"
