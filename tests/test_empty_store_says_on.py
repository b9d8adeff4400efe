"""An empty store's first prompt of a session says ROSE is on and has nothing yet: a
newcomer who installed it saw nothing at all and could not tell a working hook from a
broken one. Later prompts of the session stay quiet, and a store with lessons says what
it served instead."""

from __future__ import annotations

from rose.hooks.main import EMPTY_NOTE
from rose.store.facade import Store
from tests._hookrun import payload, run_hook


def test_first_prompt_of_an_empty_store_says_on(store: Store, project):
    store.view()
    code, out, _, _ = run_hook("user-prompt-submit", payload("user-prompt-submit", project))
    assert code == 0 and out == {"systemMessage": f"ROSE · {EMPTY_NOTE}"}
    code, out, _, _ = run_hook("user-prompt-submit", payload("user-prompt-submit", project))
    assert code == 0 and out is None  # once a session


def test_a_new_session_says_it_again(store: Store, project):
    store.view()
    run_hook("user-prompt-submit", payload("user-prompt-submit", project, session_id="s-one"))
    _, out, _, _ = run_hook(
        "user-prompt-submit", payload("user-prompt-submit", project, session_id="s-two")
    )
    assert out == {"systemMessage": f"ROSE · {EMPTY_NOTE}"}


def test_a_store_with_lessons_says_what_it_served(store: Store, project):
    store.add("Run the linter before committing.")
    _, out, _, _ = run_hook("user-prompt-submit", payload("user-prompt-submit", project))
    assert out["systemMessage"].startswith("ROSE · 1 lesson")
    assert EMPTY_NOTE not in out["systemMessage"]
