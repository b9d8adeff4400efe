"""Text shortened for a person ends at a word with an ellipsis: the status line showed
"Run make lint before pu…", an add's reason "choose another backend wit...", both cut
mid-word, one with three dots and one with an ellipsis."""

from __future__ import annotations

from rose.loop.selection.pack import Pack
from rose.text import shorten

TITLE = "Run make lint before pushing: CI rejects unformatted code"


def test_a_cut_ends_after_a_whole_word():
    out = shorten(TITLE, 25)
    assert out == "Run make lint before…"
    assert shorten(TITLE, 200) == TITLE
    assert shorten("a  b\n c", 10) == "a b c"  # one line


def test_a_cut_at_a_word_end_keeps_the_word_and_drops_trailing_punctuation():
    text = "Run make lint before pushing: CI rejects"
    assert shorten(text, 30) == "Run make lint before pushing…"


def test_one_long_word_is_cut_where_it_must_be():
    assert shorten("a" * 40, 10) == "a" * 9 + "…"


def test_the_status_line_titles_end_at_a_word():
    p = Pack()
    p.full = [{"id": "n_00000001", "title": TITLE}]
    p.tokens = 93
    titles = p.status.split(" — ", 1)[1]
    assert titles.endswith("…") and TITLE.startswith(titles[:-1])
    assert TITLE[len(titles) - 1] == " "
