"""Secret redaction: everything ROSE writes to disk passes through here first.

A lesson mangled by an over-eager pattern is recoverable; a leaked key is not, so
the patterns lean towards redacting too much. The carve-outs are what an agent's
memory is full of: git SHAs, UUIDs, ids, ordinary numbers, paths, prose about passwords.

Redaction never changes a file's syntax. Event lines are redacted as JSON text and stay
valid JSON (a placeholder holds no quote or backslash, and no pattern replaces one); a JSON
string holding an escape is also redacted decoded and encoded again, since a token right
after `\\n` follows a letter there.
YAML is redacted value by value (`rose.redaction.redact_files`): parsed, every string redacted,
dumped, so `model: sk-...` becomes `model: '[REDACTED:openai-key]'`, still a string.

Standard library only at import, each pattern compiled once, on its first use: this sits
on a hook's hot path. Most patterns open with a literal character (the start-of-word
check comes after it) so `re` jumps straight to candidates; the rarer ones run only when
their anchor text is present, and the provider table only in runs a cheap hint of its
formats' heads finds a place in.
"""

from __future__ import annotations

import re

from rose.redaction.secret_formats import ANCHORED as _ANCHORED
from rose.redaction.secret_formats import PROVIDERS as _PROVIDERS

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs milliseconds to import; the hook cannot spare them
    from collections.abc import Callable
    from typing import Any

__all__ = ["redact", "redact_obj"]


class _Lazy:
    """A pattern compiled on its first use. Compiling all of them costs ~12 ms, the largest
    part of a prompt hook's own work, and most run only when their anchor text is present."""

    __slots__ = ("_args", "_pattern")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._args = (source, flags)
        self._pattern: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        pattern = self._pattern
        if pattern is None:
            pattern = self._pattern = re.compile(*self._args)
        return getattr(pattern, name)


if TYPE_CHECKING:

    def _lazy(source: str, flags: int = 0) -> re.Pattern[str]: ...

else:
    _lazy = _Lazy

_MARK = "[REDACTED:"
_IS_MARK = _lazy(r"\[REDACTED:[a-z-]+\]")
# A token starts outside a word, or right after a JSON escape such as `\n`.
_START = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"
# The same check made after the token's first character, which `re` can then scan for.
_AFTER_FIRST = r"(?:(?<![A-Za-z0-9_].)|(?<=\\[nrt].))"


def _mark(kind: str) -> str:
    return f"{_MARK}{kind}]"


_PEM = _lazy(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:(?:[^\"\\-]|-(?!----BEGIN )|\\.)*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    # no END (truncated output): take the base64 lines that follow
    r"|(?:(?:\s|\\[nrt])*[A-Za-z0-9+/=]{20,}(?:(?:\s|\\[nrt])+[A-Za-z0-9+/=]{20,})*)?)",
    re.DOTALL,
)


def _alternatives(table: dict[str, tuple[str, ...]]) -> str:
    """One alternation per first character, with the boundary check behind that character
    and a group per pattern; `re` skips an alternation whose first character differs."""
    by_first: dict[str, list[str]] = {}
    for kind, patterns in table.items():
        for i, pat in enumerate(patterns):
            assert pat[0].isalnum(), pat  # a literal first character, or `re` cannot skip ahead
            # ...and the rest of the word, so nothing glued on is left to match next time
            group = f"(?P<{kind.replace('-', '_')}__{i}>{pat[1:]}[A-Za-z0-9]*)"
            by_first.setdefault(pat[0], []).append(group)
    return "|".join(f"{c}{_AFTER_FIRST}(?:{'|'.join(gs)})" for c, gs in by_first.items())


# One pass for all of them; the kind is the name of the group that matched. It runs only
# over runs of token characters long enough to hold one (the shortest is 15).
_TOKENS = _lazy(_alternatives(_PROVIDERS))


def _literal_head(pattern: str) -> str:
    """The literal text every match of `pattern` opens with: its characters up to the first
    that is not a letter, digit, `_` or `-` (outside a class, each stands for itself) or
    that a quantifier follows (`ab?` promises only `a`)."""
    n = 0
    while n < len(pattern) and (pattern[n].isalnum() or pattern[n] in "_-"):
        if pattern[n + 1 : n + 2] in ("?", "*", "+", "{"):
            break
        n += 1
    return pattern[:n]


def _hints(table: dict[str, tuple[str, ...]]) -> str:
    """What `_alternatives(table)` needs where it matches: a pattern's first character, the
    same boundary check, then the rest of its literal head. Cheap to compile (~1 ms of the
    ~6 ms the whole table takes) and a superset: text it finds nothing in holds no token."""
    by_first: dict[str, set[str]] = {}
    for patterns in table.values():
        for pat in patterns:
            head = _literal_head(pat)
            by_first.setdefault(pat[0], set()).add(re.escape(head[1:]))
    return "|".join(
        f"{c}{_AFTER_FIRST}(?:{'|'.join(sorted(rests, key=len, reverse=True))})"
        for c, rests in by_first.items()
    )


_TOKEN_HINT = re.compile(_hints(_PROVIDERS))
_RUN = re.compile(r"[A-Za-z0-9_.+/=%~@:-]{15,}")


_BEARER = _lazy(
    _START + r"((?i:bearer)[ \t]+)(?!\[REDACTED:)(?=[A-Za-z0-9._~+/-]*[0-9])"
    r"[A-Za-z0-9._~+/-]{16,}=*"
)

_URL_PASSWORD = _lazy(
    r"(?:(?<![A-Za-z0-9+.-])|(?<=\\[nrt]))([A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@\[\]\"'\\]*:)"
    r"(?!\[REDACTED:)[^\s/?#\"'\\]+(?=@)"
)
# The signature that makes a signed URL a credential: Azure SAS `sig=`, S3 and GCS presigns.
_URL_SIGNATURE = _lazy(
    r"([?&;](?i:sig|signature|x-amz-signature|x-goog-signature)=)[A-Za-z0-9%+/=_.~-]{16,}"
)

# Passwords handed to a command on its command line. The command and the flag must
# agree: `-p` is mysql's password but docker run's port, `-u` curl's user:password but
# docker's uid:gid. mysql's `-p` takes only an attached value (`-p db` prompts).
_CMD_MID = r"[^\n|;&]{0,200}?[ \t]"  # within one command: up to a newline, `|`, `;` or `&`
_CMD_VALUE = r"(?!\[REDACTED:)(?:'(?P<sq>[^'\"\n\\]*)'|(?P<bare>[^\s'\"`\\;|&)]+))"


def _command(
    name: str, rest: str, suffix: str = "", value: str = _CMD_VALUE
) -> tuple[str, re.Pattern[str]]:
    """The command `name` (+ `suffix`) as a word, also right after a JSON `\n`, then `rest`,
    then the value. Literal-first, so `re` finds the name as fast as `str.find`."""
    w = re.escape(name)
    head = rf"{w}(?:(?<![A-Za-z0-9_.-]{w})|(?<=\\[nrt]{w})){suffix}(?![A-Za-z0-9_-])"
    return name, _lazy(head + rest + value)


_CURL_USER = r"(?:-u[ \t]*|--user(?:[ \t]+|=))"
_CMD_QUOTED = r"(?!\[REDACTED:)(?P<sq>[^'\"\n\\]*[ \t][^'\"\n\\]*)(?P=q)"
_CMD_PASSWORDS = (
    _command("mysql", _CMD_MID + "-p", suffix="[a-z]*"),  # mysqldump, mysqladmin too
    _command("mariadb", _CMD_MID + "-p", suffix="(?:-[a-z]+)?"),
    _command("sshpass", _CMD_MID + r"-p[ \t]*"),
    _command("redis-cli", _CMD_MID + r"-a[ \t]*"),
    _command("docker login", _CMD_MID + r"-p[ \t]*"),
    _command("podman login", _CMD_MID + r"-p[ \t]*"),
    # a quoted user:password may hold blanks (before the bare form takes its first word)
    _command("curl", _CMD_MID + _CURL_USER + r"(?P<q>[\"'])[^\s'\"`:\\]*:", value=_CMD_QUOTED),
    _command("curl", _CMD_MID + _CURL_USER + r"(?:\\?[\"'])?[^\s'\"`:\\]*:"),
    _command("machine", r"[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+"),  # .netrc
)

# 13-19 digits, bare or in groups with one consistent separator; never inside a
# word, a UUID, a decimal or a `+` phone number.
_CARD = re.compile(
    r"[0-9](?:(?<![A-Za-z0-9_.+-].)|(?<=\\[nrt].))"
    r"(?:[0-9]{12,18}|[0-9]{3,5}([ -])[0-9]{3,6}(?:\1[0-9]{3,6}){1,3})"
    r"(?![A-Za-z0-9_-]|\.[0-9])"
)

# `tokens` and `tokenizer` are counts and model names, not credentials; `pass` counts
# only as a part of a name (`DB_PASS`), never inside a word (`bypass`, `passed`).
_KEYWORD = (
    r"(?i:secret|token(?!s|iz)|passw(?:or)?d|passphrase|(?<=[_.-])pass(?![A-Za-z])|pwd"
    r"|api[_-]?key|access[_-]?key|account[_-]?key|private[_-]?key|credential|creds(?![A-Za-z])"
    r"|authorization)"
)
# Where a keyword may start, in lower-cased text: a superset of _KEYWORD, scanned fast. It
# passes over `tokens` and `tokeniz...` as _KEYWORD does, so a record's token count (every
# hook's event has one) costs no compile of the assignment patterns.
_KEYWORD_HINT = re.compile(
    r"secret|token(?!s|iz)|pass|pwd|api|access|account|private|cred|authoriz"
)
# The name characters just before a hint, read backwards over the reversed text.
_NAME_BEHIND = re.compile(r"[A-Za-z0-9_.-]{0,61}")
_SCHEMES = r"(?i:bearer|basic|token|bot|digest)"
_SECRET_KEY = _lazy(_KEYWORD)
_WORKING_DIR = _lazy(r"[nrt]?(?:old)?pwd", re.IGNORECASE)  # $PWD is a path
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
_KEY = r"(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z0-9_.-]{0,60}" + _KEYWORD + r"[A-Za-z0-9_.-]{0,60})"
_ASSIGN = _lazy(
    _KEY + r"(?P<kq>\\?[\"'])?[ \t]*(?:=>|[:=]=?)[ \t]*(?:" + _QUOTED + "|" + _BARE + ")"
)
# A key and its value with only blanks between: `aws_secret_access_key wJalr...`,
# `--token abc1`. Single quotes only: a `"` might be where a JSON string ends.
_SPACED = _lazy(
    _KEY + r"(?:[ \t]|\\t)+(?:'(?P<qval>[^'\"\n\\]+)'"
    r"|(?P<val>[^\s\"'`\\,;:=(){}\[\]<>|&-][^\s\"'`\\,;)}\]<>|&]*))"
)
_FLAG_KEY = _lazy(r"--?[A-Za-z0-9_.-]*" + _KEYWORD)  # the keyword ends the flag
_PROSE_WORD = _lazy(r"[A-Z]?[a-z]+")  # `Password`, `secret`: a word, not a name
_STRONG = _lazy(r"(?=[^0-9]*[0-9])(?=[^A-Za-z]*[A-Za-z])[A-Za-z0-9+_-][A-Za-z0-9+/=_-]{15,}")
_NOT_ALL_LETTERS = _lazy(r".*[^A-Za-z]")
# Unquoted values that are code or placeholders, not secrets: types, literals, keywords,
# `$VAR`, `os.environ[...`, `getpass(...`, and a next key (`class Token: size: int`).
_HARMLESS = _lazy(
    r"(?i:none|null|nil|true|false|undefined|&?str|bytes|int|bool|string|secretstr)"
    r"|raise|return|await|yield|assert|lambda|not|and|or|is|in|if|else|then|pass|continue"
    r"|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|[A-Za-z_][A-Za-z0-9_.]*(?:[(\[].*|:)"
)
# Template slots: {token}, ${VAR}, ${{ secrets.X }}.
_TEMPLATE = _lazy(r"\$?\{\{?\s*[A-Za-z_][A-Za-z0-9_.]*\s*\}\}?")
_QUOTE_OR_ESCAPE = _lazy(r'\\.|"')
# A JSON string: no raw newline (JSON has none in a string, and prose pairs quotes badly).
_ANSI = _lazy(r"(\x1b\[[0-9;?]*[A-Za-z])")  # a terminal control sequence (colour, cursor)
_JSON_STRING = _lazy(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_NUMBER = _lazy(r"[0-9]+(?:\.[0-9]+)?")
# What lies between two JSON strings; seen when `"...password=", "next"` is
# mistaken for a quoted value.
_JSON_GAP = _lazy(r"(?:[\s,:\[\]{}0-9.eE+-]|true|false|null)*")

# An AWS secret access key is 40 base64 characters; unlabelled, it is recognised by the
# key id beside it (already a placeholder here) or by the words "secret access key".
# Lowercase hex of that length is a git SHA, not a secret. It starts after a JSON escape
# (`\n`), never on the escape's letter, which would leave a lone backslash behind.
_AWS_SECRET_VALUE = (
    r"(?:(?<![A-Za-z0-9+/=\\])|(?<=\\[nrt]))"
    r"(?![0-9a-f]{40}(?![A-Za-z0-9+/]))[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])"
)
_AWS_NEAR_ID = _lazy(
    r"(\[REDACTED:aws-key\][^\n]{1,40}?)" + _AWS_SECRET_VALUE
    + r"|" + _AWS_SECRET_VALUE + r"(?=[^\n]{1,40}?\[REDACTED:aws-key\])"
)  # fmt: skip
_AWS_PHRASE = _lazy(r"((?i:secret[ _-]?access[ _-]?key)[^\n]{0,24}?)" + _AWS_SECRET_VALUE)


def redact(text: str) -> str:
    """Replace every secret in `text` with `[REDACTED:<kind>]`; idempotent, never raises.

    A pass that redacted something runs again: a placeholder can bring a second secret
    into a pattern's reach (the key id or the command a match consumed, a name that now
    starts after the placeholder), and writing the same text twice must give one result.
    Text with nothing to hide costs one pass; a short name costs none (every pattern needs a
    separator, a 15-character run, or 13 digits after a non-word character).
    """
    if len(text) < 15 and text.isidentifier():
        return text
    for _ in range(8):  # each round only turns text into placeholders; two are the most seen
        text, before = _redact_once(text), text
        if text == before:
            break
    return text


def _redact_once(text: str) -> str:
    text = _redact_encoded(text)
    if "-----BEGIN" in text:
        text = _PEM.sub(_mark("private-key"), text)
    text = _sub_in_runs(text)
    for kind, anchor, pattern in _ANCHORED:
        if anchor in text:
            text = pattern.sub(_mark(kind), text)
    if "[REDACTED:aws-key]" in text:
        text = _AWS_NEAR_ID.sub(_aws_secret, text)
    low = text.lower()
    if "secret" in low and "access" in low:
        text = _AWS_PHRASE.sub(_aws_secret, text)
    if "://" in text and "@" in text:
        text = _URL_PASSWORD.sub(lambda m: m[1] + _mark("password"), text)
    if "=" in text:
        text = _URL_SIGNATURE.sub(lambda m: m[1] + _mark("url-signature"), text)
    for name, pattern in _CMD_PASSWORDS:
        if name in text:
            text = pattern.sub(_command_password, text)
    text = _CARD.sub(_card, text)
    text = _by_keyword(_ASSIGN, _assignment, text, keep_rejected=True)
    text = _by_keyword(_SPACED, _spaced, text, keep_rejected=False)
    if "bearer" in text.lower():
        text = _BEARER.sub(lambda m: m[1] + _mark("bearer-token"), text)
    return text


def _redact_encoded(text: str) -> str:
    """Secrets that an encoding hides from a start-of-word check: in JSON strings, and
    between terminal colour codes."""
    if "\\" in text and '"' in text:
        text = _redact_json_strings(text)
    if "\x1b[" in text:
        text = _redact_between_ansi(text)
    return text


def _redact_json_strings(text: str) -> str:
    """Each JSON string in `text` that holds an escape, redacted as the text it stands for.

    A token right after `\\n`, `\\t` or `\\u001b` follows a letter or a digit in the encoded
    text, where a pattern's start-of-word check fails; decoded, it starts a line. A string
    that changes is encoded again (ASCII-only if it was), so the text stays valid JSON; a
    quoted run that is not a JSON string (`"C:\\Users"`) is left to the passes that follow.
    """
    import json  # on the hook's path only when there is an escaped string to look at

    out: list[str] = []
    done = 0
    for m in _JSON_STRING.finditer(text):
        literal = m[0]
        if "\\" not in literal:
            continue  # its text is what the other passes see already
        try:
            value = json.loads(literal)
        except ValueError:
            continue
        clean = redact(value)
        if clean != value:
            out += (text[done : m.start()], json.dumps(clean, ensure_ascii=_ascii(literal, clean)))
            done = m.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _redact_between_ansi(text: str) -> str:
    """Each run between terminal colour codes redacted on its own: in `\x1b[32m<token>` the
    token follows the code's letter `m`, where a start-of-word check fails."""
    parts = _ANSI.split(text)
    if len(parts) < 3:
        return text
    parts[::2] = [redact(p) for p in parts[::2]]
    return "".join(parts)


def _ascii(literal: str, value: str) -> bool:
    """Whether to encode `value` again with ASCII escapes only: if its string was, or if it
    holds a lone surrogate (`\\ud800` decodes to one, and UTF-8 has no bytes for it)."""
    if literal.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _sub_in_runs(text: str) -> str:
    """`_TOKENS.sub(_provider, text)`, searching only the runs that could hold a token."""
    out: list[str] = []
    done = 0
    for run in _RUN.finditer(text):
        if not _TOKEN_HINT.search(text, run.start(), run.end()):
            continue  # and the full table is never compiled for it
        for m in _TOKENS.finditer(text, run.start(), run.end()):
            out += (text[done : m.start()], _provider(m))
            done = m.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def redact_obj(obj: Any) -> Any:
    """A copy of a JSON-like `obj` with every string redacted, dict keys included.

    Non-empty strings under a secret-looking key are replaced whole, and an int
    that is a valid card number becomes a placeholder string.
    """
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {
            (redact(key) if isinstance(key, str) else key): _redact_item(key, value)
            for key, value in obj.items()
        }
    if isinstance(obj, list):
        return [redact_obj(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact_obj(v) for v in obj)
    if isinstance(obj, int) and not isinstance(obj, bool) and _is_card(str(obj)):
        return _mark("card")
    return obj


def _by_keyword(
    pattern: re.Pattern[str],
    repl: Callable[[re.Match[str]], str],
    text: str,
    *,
    keep_rejected: bool,
) -> str:
    """`pattern.sub(repl, text)` for a pattern that starts with a `_KEY`, tried only at the
    names holding a keyword hint. `keep_rejected` consumes a match `repl` leaves as it was,
    like `sub`; otherwise the scan goes on inside it."""
    low = text.lower()
    if len(low) != len(text):  # a few characters change length when lower-cased
        return pattern.sub(repl, text)
    out: list[str] = []
    done, tried, rev = 0, -1, ""
    for hit in _KEYWORD_HINT.finditer(low):
        h = hit.start()
        if h < done:
            continue
        rev = rev or text[::-1]
        behind = len(text) - h  # where text[h - 1] sits in the reversed text
        name = _NAME_BEHIND.match(rev, behind)  # always matches: `{0,61}`
        start = max(done, h - (name.end() - behind if name else 0))
        if start == tried:
            continue
        tried = start
        m = pattern.match(text, start)
        if m is None:
            continue
        new = repl(m)
        if new == m[0] and not keep_rejected:
            continue
        out.append(text[done : m.start()])
        out.append(new)
        done = m.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _key_kind(key: str) -> str | None:
    """The placeholder kind for a value stored under `key`, or None if `key` is harmless."""
    if not _SECRET_KEY.search(key) or _WORKING_DIR.fullmatch(key):
        return None
    k = key.lower()
    if "pass" in k or "pwd" in k:
        return "password"
    if "secret" in k or "credential" in k or "creds" in k:
        return "aws-secret" if "aws" in k else "secret"
    if "private" in k:
        return "private-key"
    if "token" in k:
        return "token"
    if "account" in k.replace("_", "").replace("-", "") or "sharedaccess" in k:
        return "azure-key"
    return "auth-token" if "authoriz" in k else "api-key"


def _redact_item(key: Any, value: Any) -> Any:
    kind = _key_kind(key) if isinstance(key, str) else None
    if kind and isinstance(value, str) and value and not _IS_MARK.fullmatch(value):
        return _mark(kind)
    return redact_obj(value)


def _provider(m: re.Match[str]) -> str:
    return _mark((m.lastgroup or "secret").split("__")[0].replace("_", "-"))


def _command_password(m: re.Match[str]) -> str:
    group = "sq" if m["sq"] is not None else "bare"
    value = m[group]
    if not value or value.startswith("$") or _TEMPLATE.fullmatch(value):
        return m[0]
    start, end = m.span(group)
    return f"{m.string[m.start() : start]}{_mark('password')}{m.string[end : m.end()]}"


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
    if not start and end == len(text):  # the whole text is the number: a JSON line of one value
        return True
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
    if not quoted and _MARK in value:  # `a=x&sig=[REDACTED:...]`: a bare value ends there
        value = value[: value.index(_MARK)]
    if quoted and m["vq"] == '"' and _is_json_gap(value):
        return m[0]
    if not quoted and (
        _HARMLESS.fullmatch(value) or (kind in ("token", "api-key") and _NUMBER.fullmatch(value))
    ):
        return m[0]
    group = "qval" if quoted else "val"
    wrap = "" if quoted else (m["kq"] or "")  # `"pin": 1234` stays valid JSON
    start = m.start(group)
    end = start + len(value)
    text = m.string
    return f"{text[m.start() : start]}{wrap}{_mark(kind)}{wrap}{text[end : m.end()]}"


def _spaced(m: re.Match[str]) -> str:
    """A value after a key and blanks: a flag's value if it is not a plain word, else only a
    long letters-and-digits string after a name-like key (`AWS_SECRET_ACCESS_KEY`)."""
    key = m["key"]
    kind = _key_kind(key)
    quoted = m["qval"] is not None
    value = m["qval"] if quoted else m["val"].rstrip(".")
    if kind is None or not value or _TEMPLATE.fullmatch(value) or _HARMLESS.fullmatch(value):
        return m[0]
    if _FLAG_KEY.fullmatch(key):
        if not quoted and not _NOT_ALL_LETTERS.match(value):
            return m[0]
    elif _PROSE_WORD.fullmatch(key) or not _STRONG.fullmatch(value):
        return m[0]
    start = m.start("qval" if quoted else "val")
    text = m.string
    return f"{text[m.start() : start]}{_mark(kind)}{text[start + len(value) : m.end()]}"


def _aws_secret(m: re.Match[str]) -> str:
    if m[1] is None:
        return _mark("aws-secret")
    return m[1] + _mark("aws-secret")


def _is_json_gap(value: str) -> bool:
    return bool(_JSON_GAP.fullmatch(value)) and any(c in value for c in ",:[]{}")
