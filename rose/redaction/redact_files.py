"""Redaction of a whole file's text in a way that keeps the file's syntax (YAML, and a
Markdown file's front matter): what the atomic writer runs before a file reaches disk.
The patterns are `rose.redaction.redact`'s; this keeps the structure they are applied to."""

from __future__ import annotations

from rose.redaction.redact import redact, redact_obj


def redact_file(name: str, text: str) -> str:
    """`text` redacted for the file called `name`, in a way that keeps that file's syntax.

    YAML (`.yaml`, `.yml`, and a Markdown file's front matter) is redacted value by value:
    text-level redaction could turn a scalar into a flow list (`[REDACTED:...]`) or miss a
    secret the dumper folded onto the next line. Text that redaction leaves alone is
    returned as it was, byte for byte; text that does not parse is redacted as text.
    """
    if name.endswith((".yaml", ".yml")):
        return _redact_yaml(text, mapping=False) or ""
    if name.endswith(".md") and text.startswith("---\n"):
        return _redact_front_matter(text)
    return redact(text)


def _redact_front_matter(text: str) -> str:
    end = text.find("\n---\n", 3)
    if end < 0 and not text.endswith("\n---"):
        return redact(text)
    end = len(text) - 4 if end < 0 else end
    front = _redact_yaml(text[4 : end + 1], mapping=True)
    if front is None:
        return redact(text)
    fence = text[end + 1 : end + 5]  # the closing `---`, with its newline if it has one
    return f"---\n{front}{fence}{redact(text[end + 5 :])}"


def _redact_yaml(text: str, *, mapping: bool) -> str | None:
    """YAML text with every string redacted, keys too; None if `mapping` asks for a mapping
    and it is something else. Text that is not YAML at all is redacted as text."""
    import yaml  # only writes of YAML files pay for it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except Exception:  # noqa: BLE001 - anything unparseable is plain text to us
        return None if mapping else redact(text)
    if mapping and not isinstance(data, dict):
        return None
    clean = redact_obj(data)
    if clean == data and redact(text) == text:  # nothing to hide, comments included
        return text
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out: str = yaml.dump(clean, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100)
    return out
