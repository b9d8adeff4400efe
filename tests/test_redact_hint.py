"""The provider table is compiled only for text that could hold one of its tokens.

`rose.redaction.redact` looks for provider tokens (the ~6 ms table of fixed-prefix formats) only in
runs where a cheap hint pattern (each format's first character, its boundary check and
the rest of its literal head) finds a place one could start. Locks in that the hint is a
superset of the table: for a sample of every format, made from the format's own pattern,
the hint finds each place the table matches; that redaction with the hint gives what the
whole table everywhere gives, on generated text; and that text with long runs but no hint
(paths, ids) is redacted without compiling the table at all.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from rose.redaction import redact as R
from rose.redaction.secret_formats import PROVIDERS

try:  # Python 3.11+
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P  # type: ignore[attr-defined]
except ImportError:  # 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]


def _samples(pattern: str, variants: int = 6) -> list[str]:
    """Strings built from `pattern`'s parse tree, each taking a different branch and
    character choice (assertions ignored: the caller keeps the ones the pattern matches)."""

    def build(items, v: int) -> str:
        out = []
        for op, av in items:
            if op is C.LITERAL:
                out.append(chr(av))
            elif op is C.IN:
                choices = []
                for iop, iav in av:
                    if iop is C.LITERAL:
                        choices.append(chr(iav))
                    elif iop is C.RANGE:
                        lo, hi = iav
                        choices += [chr(lo + (v * 7 + k) % (hi - lo + 1)) for k in range(3)]
                    elif iop is C.CATEGORY:
                        choices.append("7")
                out.append(choices[v % len(choices)] if choices else "x")
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
                lo, hi, sub = av
                times = lo if v % 2 or hi == C.MAXREPEAT else min(hi, lo + 3)
                out += [build(sub, v + k) for k in range(max(times, 0))]
            elif op is C.SUBPATTERN:
                out.append(build(av[-1], v))
            elif op is C.BRANCH:
                options = av[1]
                out.append(build(options[v % len(options)], v))
            # AT, ASSERT, ASSERT_NOT and the like add no characters
        return "".join(out)

    tree = P.parse(pattern)
    return list(dict.fromkeys(build(tree, v) for v in range(variants)))


def _sample_table() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for kind, patterns in PROVIDERS.items():
        for i, pat in enumerate(patterns):
            full = re.compile(pat)
            found[f"{kind}#{i}"] = [s for s in _samples(pat) if full.fullmatch(s)]
    return found


SAMPLES = _sample_table()


def test_every_format_has_samples_its_own_pattern_matches():
    empty = [name for name, got in SAMPLES.items() if not got]
    assert not empty, empty


def test_the_hint_finds_every_place_the_table_matches():
    checked = 0
    for name, samples in SAMPLES.items():
        for sample, (before, after) in itertools.product(
            samples, [("", ""), ("see ", " here"), ("x=", ","), ("\\n", "\\n"), ("/", "/")]
        ):
            text = before + sample + after
            for m in R._TOKENS.finditer(text):
                checked += 1
                assert R._TOKEN_HINT.match(text, m.start()), (name, text, m.start())
    assert checked >= len(SAMPLES)  # the table found the samples: the check ran


def _with_whole_table(text: str) -> str:
    """`redact`, with the table tried in every run."""
    hint = R._TOKEN_HINT
    R._TOKEN_HINT = re.compile("")
    try:
        return R.redact(text)
    finally:
        R._TOKEN_HINT = hint


ALL_SAMPLES = sorted({s for got in SAMPLES.values() for s in got})
NOISE = ["/tmp/project/.rose/", "a1b2c3d4-e5f6-4789-abcd-ef0123456789", " ", "\\n", "=", ":"]
NOISE += ["_", "-", ".", "Mike", "sk", "ghp", "xox", "AKIA", "eyJ"]
PIECES = st.one_of(
    st.sampled_from(ALL_SAMPLES),
    st.sampled_from(NOISE),
    st.text(alphabet="ABCMNOaeksxp0189_-./=:", min_size=1, max_size=30),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=8))
def test_redaction_with_the_hint_is_redaction_with_the_whole_table(pieces):
    text = "".join(pieces)
    assert R.redact(text) == _with_whole_table(text)


PROBE = """
import sys
from rose.redaction import redact as R
out = R.redact(sys.argv[1])
print(out)
print(getattr(R, sys.argv[2])._pattern is not None)
"""


def _fresh(text: str, table: str = "_TOKENS") -> tuple[str, bool]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, text, table], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    out, compiled = proc.stdout.rsplit("\n", 2)[:2]
    return out, compiled == "True"


def test_paths_and_ids_are_redacted_without_compiling_the_table():
    text = '{"transcript_path": "/home/dev/project/transcripts/6f1c2a9e-0b7d-4c3e.jsonl"}'
    assert _fresh(text) == (text, False)


def test_a_token_compiles_the_table_and_is_redacted():
    token = "gh" + "p_" + "a1B2c3D4e5" * 4
    out, compiled = _fresh(f"/home/dev/{token}/x")
    assert compiled and out == "/home/dev/[REDACTED:github-token]/x"


def test_a_token_count_is_written_without_compiling_the_assignment_patterns():
    text = '{"size": 9773, "tokens": 2444, "tokenizer": "cl100k", "too_big": []}'
    assert _fresh(text, "_ASSIGN") == (text, False)


def test_a_token_assigned_still_compiles_them_and_is_redacted():
    out, compiled = _fresh('{"api_token": "Zx81Qw2Er3Ty4Ui5Op6"}', "_ASSIGN")
    assert compiled and out == '{"api_token": "[REDACTED:token]"}'


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="tokenizsTOKENSaApPiwd_-.=: ", max_size=40))
def test_the_keyword_hint_fires_wherever_a_keyword_starts(text: str):
    low = text.lower()
    keyword = re.compile(R._KEYWORD)
    starts = [i for i in range(len(low)) if keyword.match(low, i)]
    assert all(R._KEYWORD_HINT.match(low, i) for i in starts)


def test_a_literal_head_stops_before_what_a_quantifier_makes_optional():
    assert R._literal_head("ab?c") == "a"
    assert R._literal_head("abc*d") == "ab"
    assert R._literal_head("ab{0,2}c") == "a"
    assert R._literal_head("sk-(?:proj|admin)-x") == "sk-"
    assert R._literal_head(r"xoxe\.xox") == "xoxe"
    assert R._literal_head("gh[pousr]_") == "gh"
    # a format whose second character may be missing is still hinted where it starts
    hint = re.compile(R._hints({"made-up": ("ab?c[0-9]{4}",)}))
    assert hint.match("ac1234") and hint.match("abc1234")
