"""Secret redaction: everything ROSE writes to disk passes through here first.

A lesson mangled by an over-eager pattern is recoverable; a leaked key is not, so
the patterns lean towards redacting too much. The carve-outs are what an agent's
memory is full of: git SHAs, UUIDs, ordinary numbers, paths, prose about passwords.
Event lines are redacted as JSON text, so valid JSON in stays valid JSON out.
Standard library only, patterns compiled at import: this sits on a hook's hot path.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs milliseconds to import; the hook cannot spare them
    from typing import Any

__all__ = ["redact", "redact_obj"]

_MARK = "[REDACTED:"
_IS_MARK = re.compile(r"\[REDACTED:[a-z-]+\]")
# A token starts outside a word, or right after a JSON escape such as `\n`.
_START = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"


def _mark(kind: str) -> str:
    return f"{_MARK}{kind}]"


_PEM = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:(?:[^\"\\-]|-(?!----BEGIN )|\\.)*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    # no END (truncated output): take the base64 lines that follow
    r"|(?:(?:\s|\\[nrt])*[A-Za-z0-9+/=]{20,}(?:(?:\s|\\[nrt])+[A-Za-z0-9+/=]{20,})*)?)",
    re.DOTALL,
)

_PROVIDERS = {
    "anthropic-key": r"sk-ant-[A-Za-z0-9_-]{20,}",
    # Legacy keys open with 20+ alphanumerics, which spares slugs like `sk-learn-...`.
    "openai-key": r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"
    r"|[A-Za-z0-9]{20,}[A-Za-z0-9_-]*)",
    "aws-key": r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    "github-token": r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}",
    "gitlab-token": r"gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}",
    "slack-token": r"xox[abprs]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}",
    "slack-webhook": r"hooks\.slack\.com/services/[A-Za-z0-9_/-]{20,}",
    "stripe-key": r"[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,}",
    "google-key": r"AIza[A-Za-z0-9_-]{30,}|ya29\.[A-Za-z0-9_-]{20,}",
    "npm-token": r"npm_[A-Za-z0-9]{30,}",
    "hf-token": r"hf_[A-Za-z0-9]{30,}",
    "jwt": r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
}
# One pass for all of them; the kind is the name of the group that matched.
_TOKENS = re.compile(
    _START
    + "(?:"
    + "|".join(f"(?P<{kind.replace('-', '_')}>{pat})" for kind, pat in _PROVIDERS.items())
    + ")"
)

_BEARER = re.compile(
    _START + r"((?i:bearer)[ \t]+)(?!\[REDACTED:)(?=[A-Za-z0-9._~+/-]*[0-9])"
    r"[A-Za-z0-9._~+/-]{16,}=*"
)

_URL_PASSWORD = re.compile(
    r"(?:(?<![A-Za-z0-9+.-])|(?<=\\[nrt]))([A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@\[\]\"'\\]*:)"
    r"(?!\[REDACTED:)[^\s/?#\"'\\]+(?=@)"
)

# 13-19 digits, bare or in groups with one consistent separator; never inside a
# word, a UUID, a decimal or a `+` phone number.
_CARD = re.compile(
    r"(?:(?<![A-Za-z0-9_.+-])|(?<=\\[nrt]))"
    r"(?:[0-9]{13,19}|[0-9]{4,6}([ -])[0-9]{3,6}(?:\1[0-9]{3,6}){1,3})"
    r"(?![A-Za-z0-9_-]|\.[0-9])"
)

# `tokens` and `tokenizer` are counts and model names, not credentials.
_KEYWORD = (
    r"(?i:secret|token(?!s|iz)|passw(?:or)?d|pwd|api[_-]?key|access[_-]?key"
    r"|private[_-]?key|credential|authorization)"
)
_SCHEMES = r"(?i:bearer|basic|token|bot|digest)"
_SECRET_KEY = re.compile(_KEYWORD)
_WORKING_DIR = re.compile(r"[nrt]?(?:old)?pwd", re.IGNORECASE)  # $PWD is a path
# A value is quoted (string prefixes like f"" allowed) or bare; an auth scheme
# opening it (`Bearer xyz`) is kept. A bare value never starts with a scheme, so
# `Bearer [REDACTED:...]` cannot be matched again as the value `Bearer`.
_QUOTED = (
    r"[rRbBfFuU]{0,2}(?P<vq>\\?[\"'`])"
    r"(?:" + _SCHEMES + r"[ \t]+)?(?P<qval>(?:\\.|[^\\\n\"])*?)(?P=vq)"
)
_BARE = (
    r"(?:" + _SCHEMES + r"[ \t]+|(?!" + _SCHEMES + r"\b))"
    r"(?P<val>\$\{\{[^}\n\"\\]*\}\}|[^\s\"'`\\,;:=(){}\[\]][^\s\"'`\\,;)}\]]*)"
)
_ASSIGN = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z0-9_.-]{0,60}" + _KEYWORD + r"[A-Za-z0-9_.-]{0,60})"
    r"(?P<kq>\\?[\"'])?[ \t]*(?:[:=]=?|=>)[ \t]*(?:" + _QUOTED + "|" + _BARE + ")"
)
# Unquoted values that are code or placeholders, not secrets: types, literals,
# `$VAR`, `os.environ[...`, `getpass(...`.
_HARMLESS = re.compile(
    r"(?i:none|null|nil|true|false|undefined|&?str|bytes|int|bool|string|secretstr)"
    r"|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|[A-Za-z_][A-Za-z0-9_.]*[(\[].*"
)
# Template slots: {token}, ${VAR}, ${{ secrets.X }}.
_TEMPLATE = re.compile(r"\$?\{\{?\s*[A-Za-z_][A-Za-z0-9_.]*\s*\}\}?")
_QUOTE_OR_ESCAPE = re.compile(r'\\.|"')
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
# What lies between two JSON strings; seen when `"...password=", "next"` is
# mistaken for a quoted value.
_JSON_GAP = re.compile(r"(?:[\s,:\[\]{}0-9.eE+-]|true|false|null)*")


def redact(text: str) -> str:
    """Replace every secret in `text` with `[REDACTED:<kind>]`; idempotent, never raises."""
    if "-----BEGIN" in text:
        text = _PEM.sub(_mark("private-key"), text)
    text = _TOKENS.sub(_provider, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: m[1] + _mark("password"), text)
    text = _CARD.sub(_card, text)
    text = _ASSIGN.sub(_assignment, text)
    return _BEARER.sub(lambda m: m[1] + _mark("bearer-token"), text)


def redact_obj(obj: Any) -> Any:
    """A copy of a JSON-like `obj` with every string redacted (dict keys are kept).

    Non-empty strings under a secret-looking key are replaced whole, and an int
    that is a valid card number becomes a placeholder string.
    """
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {key: _redact_item(key, value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [redact_obj(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact_obj(v) for v in obj)
    if isinstance(obj, int) and not isinstance(obj, bool) and _is_card(str(obj)):
        return _mark("card")
    return obj


def _redact_item(key: Any, value: Any) -> Any:
    kind = _key_kind(key) if isinstance(key, str) else None
    if kind and isinstance(value, str) and value and not _IS_MARK.fullmatch(value):
        return _mark(kind)
    return redact_obj(value)


def _key_kind(key: str) -> str | None:
    """The placeholder kind for a value stored under `key`, or None if `key` is harmless."""
    if not _SECRET_KEY.search(key) or _WORKING_DIR.fullmatch(key):
        return None
    k = key.lower()
    if "passw" in k or "pwd" in k:
        return "password"
    if "secret" in k or "credential" in k:
        return "aws-secret" if "aws" in k else "secret"
    if "private" in k:
        return "private-key"
    if "token" in k:
        return "token"
    return "auth-token" if "authoriz" in k else "api-key"


def _provider(m: re.Match[str]) -> str:
    return _mark((m.lastgroup or "secret").replace("_", "-"))


def _card(m: re.Match[str]) -> str:
    if not _is_card(m[0].replace(" ", "").replace("-", "")):
        return m[0]
    quote = '"' if m[0].isdigit() and _bare_json_value(m.string, m.start(), m.end()) else ""
    return f"{quote}{_mark('card')}{quote}"


def _is_card(digits: str) -> bool:
    """Luhn-valid, 13-19 digits, and a major network's first digit (2-6).

    The first-digit rule spares millisecond and nanosecond timestamps (they start with 1).
    """
    if not 13 <= len(digits) <= 19 or digits[0] not in "23456":
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _bare_json_value(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] sits where a JSON number would (so the placeholder needs quotes)."""
    while start and text[start - 1] in " \t":
        start -= 1
    while end < len(text) and text[end] in " \t":
        end += 1
    if not (start and text[start - 1] in ":[," and (end == len(text) or text[end] in ",]}")):
        return False
    quotes = sum(1 for t in _QUOTE_OR_ESCAPE.findall(text, 0, start) if t == '"')
    return quotes % 2 == 0  # not inside a JSON string


def _assignment(m: re.Match[str]) -> str:
    kind = _key_kind(m["key"])
    quoted = m["vq"] is not None
    value = m["qval"] if quoted else m["val"]
    if kind is None or not value or value.startswith(_MARK) or _TEMPLATE.fullmatch(value):
        return m[0]
    if quoted and m["vq"] == '"' and _is_json_gap(value):
        return m[0]
    if not quoted and (
        _HARMLESS.fullmatch(value) or (kind in ("token", "api-key") and _NUMBER.fullmatch(value))
    ):
        return m[0]
    group = "qval" if quoted else "val"
    wrap = "" if quoted else (m["kq"] or "")  # `"pin": 1234` stays valid JSON
    start, end = m.span(group)
    text = m.string
    return f"{text[m.start() : start]}{wrap}{_mark(kind)}{wrap}{text[end : m.end()]}"


def _is_json_gap(value: str) -> bool:
    return bool(_JSON_GAP.fullmatch(value)) and any(c in value for c in ",:[]{}")
