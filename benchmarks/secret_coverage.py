"""How much of a maintained public ruleset the secret table redacts.

The ruleset is gitleaks' default config at a named release (`RULESET`); `data/<ruleset>.jsonl`
holds one line per rule id: a sample the rule flags (written for this benchmark from the
rule's documented shape, with random characters) and the secret inside it. Three figures:

- `shape`: the secret alone in a sentence is redacted (the table knows it by its shape);
- `context`: the secret is gone from the sample as the rule would flag it (a vendor's name
  and `=` beside it count here: the keyword rules catch some of these);
- `json`: the same, with the sample on a line of its own in a JSON string (after a `\\n`
  escape), as the session log writes a prompt;
- `named`: the secret assigned to a variable named after the rule (`ADAFRUIT_API_KEY=...`),
  as code and shell sessions hold them.

Rules are `shape` (a vendor prefix or structure), `keyword` (any 16-64 characters found only
by a vendor's name beside them) or `path` (a file name, not text: never coverable here).

    python benchmarks/secret_coverage.py [--json] [--missed]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rose.redaction.redact import redact  # noqa: E402

RULESET = "gitleaks-v8.30.1"
DATA = Path(__file__).with_name("data") / f"{RULESET}.jsonl"
MEASURES = ("shape", "context", "json", "named")


def rows() -> list[dict[str, str]]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]


def measure(row: dict[str, str]) -> dict[str, bool]:
    """Which measures redact this rule's secret (a path rule has no text to redact)."""
    secret, sample = row["secret"], row["sample"]
    if not secret:
        return dict.fromkeys(MEASURES, False)
    line = redact(json.dumps({"prompt": "please look:\n" + sample}, ensure_ascii=False))
    return {
        "shape": secret not in redact(f"the value is {secret} here"),
        "context": secret not in redact(sample),
        "json": secret not in line and secret not in json.loads(line)["prompt"],
        "named": secret not in redact(f"{row['id'].upper().replace('-', '_')}={secret}"),
    }


def report() -> dict[str, object]:
    results = [(row, measure(row)) for row in rows()]
    classes = sorted({row["class"] for row, _ in results})
    out: dict[str, object] = {"ruleset": RULESET, "rules": len(results)}
    for m in MEASURES:
        out[m] = sum(r[m] for _, r in results)
    out["by_class"] = {
        c: {
            "rules": sum(row["class"] == c for row, _ in results),
            **{m: sum(r[m] for row, r in results if row["class"] == c) for m in MEASURES},
        }
        for c in classes
    }
    out["missed"] = [row["id"] for row, r in results if not r["context"]]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--missed", action="store_true", help="list the rule ids not covered")
    args = parser.parse_args()
    out = report()
    if args.json:
        print(json.dumps(out, indent=2))
        return
    n = out["rules"]
    print(f"{RULESET}: {n} rule ids")
    for m in MEASURES:
        print(f"  {m:8} {out[m]:>4} / {n}")
    for c, figs in out["by_class"].items():  # type: ignore[union-attr]
        cells = "  ".join(f"{m} {figs[m]}" for m in MEASURES)
        print(f"  {c:8} {figs['rules']:>4} rules: {cells}")
    if args.missed:
        print("missed (context):", " ".join(out["missed"]))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
