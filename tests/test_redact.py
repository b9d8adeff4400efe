"""Secrets never reach disk, and redaction never eats what a memory is made of.

Locks in: every secret category is replaced by `[REDACTED:<kind>]` with the
surrounding text (key names, users, hosts) intact; SHAs, UUIDs, ordinary numbers,
paths and prose about passwords survive untouched; redaction is idempotent, never
raises, and keeps a JSON line valid JSON (events.jsonl is redacted as text).
Test secrets are assembled at runtime so no secret-looking literal sits in this file.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from rose.redaction.redact import redact, redact_obj
from tests._scaling import LINEAR_BOUND, growth

OPENAI = "sk-" + "A1b2C3d4" * 6
OPENAI_PROJ = "sk-" + "proj-" + "Ab1_Cd2-" * 8
ANTHROPIC = "sk-" + "ant-api03-" + "Xy9_Zw8-" * 10
AWS_ID = "AKIA" + "IOSFODNN7" + "EXAMPLE"
AWS_STS = "ASIA" + "Q3EGTRUE" + "5XWLYBCH"
AWS_SECRET = "wJalrXUtnFEMI" + "/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
GITHUB = {p: p + "_" + "a1B2c3D4e5" * 4 for p in ("ghp", "gho", "ghu", "ghs", "ghr")}
GITHUB_PAT = "github_pat_" + "11ABCDEFG0" * 3 + "_" + "xYz9" * 10
GITLAB = "glpat-" + "xY9_zW8-" * 3
SLACK = {c: "xox" + c + "-" + "1234567890-" + "aBcDeFgHiJkL" for c in "abprs"}
STRIPE = {
    p: p + "_" + mode + "_" + "4eC39HqLyjWDarjtT1zdp7dc"
    for p in ("sk", "rk", "pk")
    for mode in ("live", "test")
}
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
NPM = "npm_" + "a1B2c3D4e5F6" * 3
HF = "hf_" + "aBcDeFgHiJ" * 3 + "kL"
JWT = (
    "eyJ"
    + "hbGciOiJIUzI1NiJ9"
    + ".eyJ"
    + "zdWIiOiIxMjM0NTY3ODkwIn0"
    + "."
    + "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
)
BEARER = "Zm9vYmFy" + "YmF6cXV4" + "MTIzNDU2"
PEM_BODY = "MIIEpAIBAAKCAQEA" + "q1w2e3r4t5y6u7i8" * 4
CARDS = {
    "visa": "4111" + "1111" * 3,
    "mastercard": "5555" + "5555" + "5555" + "4444",
    "amex": "3782" + "822463" + "10005",
    "discover": "6011" + "1111" * 2 + "1117",
}

PROVIDERS = [
    ("openai-key", OPENAI),
    ("openai-key", OPENAI_PROJ),
    ("anthropic-key", ANTHROPIC),
    ("aws-key", AWS_ID),
    ("aws-key", AWS_STS),
    *(("github-token", tok) for tok in GITHUB.values()),
    ("github-token", GITHUB_PAT),
    ("gitlab-token", GITLAB),
    *(("slack-token", tok) for tok in SLACK.values()),
    *(("stripe-key", tok) for tok in STRIPE.values()),
    ("google-key", GOOGLE),
    ("npm-token", NPM),
    ("hf-token", HF),
    ("jwt", JWT),
]


@pytest.mark.parametrize(("kind", "secret"), PROVIDERS)
@pytest.mark.parametrize(
    "template", ["key {} here", "{}", "OPENAI={}", "[{}]", "line one\n{}\nline two"]
)
def test_provider_tokens_are_redacted(kind, secret, template):
    assert redact(template.format(secret)) == template.format(f"[REDACTED:{kind}]")


def test_a_token_after_a_json_escaped_newline_is_still_found():
    line = json.dumps({"out": "token follows:\n" + GITHUB["ghp"]})
    assert json.loads(redact(line)) == {"out": "token follows:\n[REDACTED:github-token]"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer " + BEARER, "Authorization: Bearer [REDACTED:auth-token]"),
        (
            "curl -H 'authorization: token " + BEARER + "' x",
            "curl -H 'authorization: token [REDACTED:auth-token]' x",
        ),
        (
            '{"Authorization": "Basic ' + BEARER + '"}',
            '{"Authorization": "Basic [REDACTED:auth-token]"}',
        ),
        ("sent Bearer " + BEARER + " upstream", "sent Bearer [REDACTED:bearer-token] upstream"),
        ('-H "Authorization: Bearer $API_TOKEN"', '-H "Authorization: Bearer $API_TOKEN"'),
    ],
)
def test_bearer_and_authorization_headers_are_redacted(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize(
    "label",
    [
        "RSA PRIVATE KEY",
        "PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "EC PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ],
)
def test_pem_private_key_blocks_are_redacted(label):
    block = f"-----BEGIN {label}-----\n{PEM_BODY}\n{PEM_BODY[:40]}\n-----END {label}-----"
    text = f"wrote id_rsa:\n{block}\nthen ran chmod 600"
    assert redact(text) == "wrote id_rsa:\n[REDACTED:private-key]\nthen ran chmod 600"
    assert json.loads(redact(json.dumps({"f": block}))) == {"f": "[REDACTED:private-key]"}


def test_a_truncated_pem_block_is_redacted_up_to_the_prose():
    text = "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY + "\n(output truncated)"
    assert redact(text) == "[REDACTED:private-key]\n(output truncated)"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "postgres://admin:" + "s3cr3t" + "@db.example.com:5432/app",
            "postgres://admin:[REDACTED:password]@db.example.com:5432/app",
        ),
        ("redis://:" + "hunter2" + "@cache:6379/0", "redis://:[REDACTED:password]@cache:6379/0"),
        (
            "git clone https://bob:" + "p%40ss:w0rd" + "@git.example.org/r.git",
            "git clone https://bob:[REDACTED:password]@git.example.org/r.git",
        ),
        ("see http://localhost:8080/path?q=1", "see http://localhost:8080/path?q=1"),
    ],
)
def test_url_passwords_are_redacted_keeping_user_and_host(url, expected):
    assert redact(url) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=" + "hunter2", "password=[REDACTED:password]"),
        ("PASSWD: " + "hunter2", "PASSWD: [REDACTED:password]"),
        ("export API_TOKEN=" + "abc123def", "export API_TOKEN=[REDACTED:token]"),
        ('client_secret = "' + "abc def" + '"', 'client_secret = "[REDACTED:secret]"'),
        ("apikey='" + "k3y" + "'", "apikey='[REDACTED:api-key]'"),
        ("ACCESS_KEY=" + "xyz789", "ACCESS_KEY=[REDACTED:api-key]"),
        ("aws_secret_access_key = " + AWS_SECRET, "aws_secret_access_key = [REDACTED:aws-secret]"),
        (
            '{"password": "' + "hunter2" + '", "user": "bob"}',
            '{"password": "[REDACTED:password]", "user": "bob"}',
        ),
        ('{"db_password": ' + "1234" + "}", '{"db_password": "[REDACTED:password]"}'),
        ("mysql --password=" + "pw1 -u root", "mysql --password=[REDACTED:password] -u root"),
        ("X-Api-Key: " + "abc123", "X-Api-Key: [REDACTED:api-key]"),
        ("GET /v1?api_key=" + "abc123&page=2", "GET /v1?api_key=[REDACTED:api-key]"),
    ],
)
def test_assigned_secrets_are_redacted_keeping_the_key_name(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("card", CARDS.values())
@pytest.mark.parametrize("sep", ["", " ", "-"])
def test_luhn_valid_card_numbers_are_redacted(card, sep):
    groups = [card[i : i + 4] for i in range(0, len(card), 4)]
    assert redact(f"paid with {sep.join(groups)} today") == "paid with [REDACTED:card] today"


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f2a9c1d0b7e4f2a9c1d0b7e4f2a9c1d0b7e4f2a",
        "fixed in 3f2a9c1 and 3f2a9c1d0b7e",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "id 12345678-1234-1234-1234-123456789012",
        "listening on port 8080, 42 files, 3 retries",
        "ts 1700000000 and 1700000000123 and 1700000000123456789",
        "upgraded from 1.2.3 to 10.20.30",
        "call 555-123-4567 or +1 555 123 4567 or +441234567890123",
        "order " + "4111" + "1111" * 2 + "1112",  # 16 digits, fails Luhn
        "open /home/u/.ssh/id_rsa.pub and src/rose/token_budget.py",
        "the password field is required",
        "rotate the token before merging; tokens are counted per request",
        "max_tokens=4096, token_count: 12, tokenizer='cl100k'",
        "PWD=/home/u/project OLDPWD=/tmp",
        'token=os.environ["GITHUB_TOKEN"]',
        'client = OpenAI(api_key=os.getenv("OPENAI_API_KEY"))',
        'headers = {"Authorization": f"Bearer {token}"}',
        "password: ${{ secrets.DB_PASSWORD }}\nAPI_TOKEN=$API_TOKEN",
        "def login(password: str | None = None) -> None:",
        "v2.0.0-rc.1 sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ],
)
def test_ordinary_text_survives_untouched(text):
    assert redact(text) == text


def test_redact_obj_redacts_nested_strings_and_secret_keys():
    obj = {
        "user": "bob",
        "password": "hunter2",
        "empty_token": "",
        "max_tokens": 4096,
        "nested": [{"api_key": "abc"}, ("log " + OPENAI, 3, None, True, 1.5)],
        "card": int(CARDS["visa"]),
        "cfg": {"url": "https://bob:" + "pw" + "@host/x", "PWD": "/home/bob"},
    }
    assert redact_obj(obj) == {
        "user": "bob",
        "password": "[REDACTED:password]",
        "empty_token": "",
        "max_tokens": 4096,
        "nested": [
            {"api_key": "[REDACTED:api-key]"},
            ("log [REDACTED:openai-key]", 3, None, True, 1.5),
        ],
        "card": "[REDACTED:card]",
        "cfg": {"url": "https://bob:[REDACTED:password]@host/x", "PWD": "/home/bob"},
    }
    assert obj["password"] == "hunter2"  # a copy, not in place
    assert redact_obj(redact_obj(obj)) == redact_obj(obj)


# Secrets, keywords and the punctuation around them, for the property tests to shuffle.
FRAGMENTS = [
    OPENAI, ANTHROPIC, AWS_ID, GITHUB["ghp"], JWT, GOOGLE, CARDS["visa"], "4111 1111", "6011-",
    "password", "token", "api_key", "PWD", "secret", "max_tokens", "Bearer ", "Authorization: ",
    "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", PEM_BODY, "https://",
    "u", ":", "@", "=", ": ", ":=", "==", '"', "'", "`", "\\", "\\n", '\\"', "\n", "\t", " ",
    "-", ",", "[", "]", "{", "}", "(", "$", "${{", "f", "null", "[REDACTED:x]", "1234", "3f2a9c1d",
    "a", "é",
]  # fmt: skip
texts = st.one_of(st.text(), st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join))


@given(texts)
def test_redaction_is_idempotent(text):
    once = redact(text)
    assert redact(once) == once


@given(st.text())
def test_redaction_never_raises(text):
    assert isinstance(redact(text), str)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
@example(3_109_600_472_498)  # a card number as the whole line (found by this test)
def test_a_json_line_stays_valid_json(value):
    json.loads(redact(json.dumps(value, ensure_ascii=False)))


@pytest.mark.parametrize("unit", ["a", "token", "4", "-----BEGIN PRIVATE KEY-----"])
def test_long_inputs_take_linear_time(unit: str):
    """Ten times the input costs about ten times the CPU time, not a hundred (backtracking)."""
    assert growth(redact, unit, 2_000 // len(unit)) < LINEAR_BOUND
