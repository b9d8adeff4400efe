"""What only looks like a secret comes through redaction untouched, in text and in JSON.

Locks in: the secret table grew (Sentry DSNs, Mailgun, Doppler service tokens, base64 JWTs,
ClickHouse, Sourcegraph and more) and JSON strings holding an escape are now redacted as
the text they stand for; neither may cost a memory what it is made of. The set: git SHAs
(short and full), sha256/sha512 hex, md5, UUIDs, image and package digests, semver and
pseudo-versions, base64 blobs, long test and store ids, paths, URLs, each alone, in a
sentence, and on a line of its own in a JSON string (after `\\n`, `\\t`). 0 may change.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid

import pytest

from rose.redaction.redact import redact


def _h(name: str, seed: str) -> hashlib._Hash:
    return hashlib.new(name, seed.encode())


SEEDS = [f"lookalike-{i}" for i in range(12)]
SHA1 = [_h("sha1", s).hexdigest() for s in SEEDS]
SHA256 = [_h("sha256", s).hexdigest() for s in SEEDS]
UUIDS = [str(uuid.UUID(bytes=_h("md5", s).digest())) for s in SEEDS]

LOOKALIKES: list[str] = [
    *SHA1,
    *(h[:7] for h in SHA1),
    *(h[:12] for h in SHA1),
    *SHA256,
    *(_h("sha512", s).hexdigest() for s in SEEDS[:4]),
    *(_h("md5", s).hexdigest() for s in SEEDS[:4]),
    *UUIDS,
    *(u.upper() for u in UUIDS[:4]),
    *(u.replace("-", "") for u in UUIDS[:4]),
    # digests: images, package integrity, checksums
    *(f"sha256:{h}" for h in SHA256[:4]),
    *(f"ghcr.io/acme/api@sha256:{h}" for h in SHA256[4:6]),
    *(f"sha512-{base64.b64encode(_h('sha512', s).digest()).decode()}" for s in SEEDS[:4]),
    *(f"sha1-{base64.b64encode(_h('sha1', s).digest()).decode()}" for s in SEEDS[:2]),
    f"md5:{_h('md5', 'x').hexdigest()}",
    # versions
    "1.2.3",
    "v10.24.1",
    "0.11.3",
    "2.0.0-rc.1+build.20240512",
    "1.0.0-alpha.beta.11",
    f"v1.2.3-14-g{SHA1[0][:7]}",
    f"v0.0.0-20240512101112-{SHA1[1][:12]}",
    "3.11.7",
    "torch==2.3.1+cu121",
    # base64 blobs that are not credentials
    *(base64.b64encode(_h("sha256", s).digest()).decode() for s in SEEDS[:6]),
    *(base64.urlsafe_b64encode(_h("sha256", s).digest()).decode().rstrip("=") for s in SEEDS[:4]),
    base64.b64encode(b"The quick brown fox jumps over the lazy dog, twice over.").decode(),
    base64.b64encode(b'{"name":"rose","version":"0.4.1","private":true}').decode(),
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    # long test and store ids
    "tests/test_redact_formats.py::test_new_formats_are_redacted[aws-secret-beside-id-0]",
    "tests/test_recall.py::TestDescent::test_a_dropped_claim_is_restored_after_failure[kuzu]",
    "test_session_ids_map_one_to_one_with_80_character_ids_and_digests_of_the_rest",
    "n_7f2a91",
    f"ep_20240512T101112_{SHA1[2][:12]}",
    f"job_{UUIDS[0].replace('-', '')}",
    "claude-sonnet-4-20250514",
    "web-7f9c8d6b5-x2k4p",
    "arn:aws:iam::123456789012:role/service-role/lambda-exec-20240512",
    "projects/acme-prod-4821/locations/us-central1/keyRings/main/cryptoKeys/app",
    # paths and URLs
    "/home/ada/.cache/pip/wheels/7f/2a/91b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9/x.whl",
    "~/.rose/nodes/db-ports/n_7f2a91.md",
    f"/var/lib/docker/overlay2/{SHA256[0]}/diff/usr/lib",
    "C:\\Users\\ada\\AppData\\Local\\Temp\\pytest-of-ada\\pytest-177\\test_x0",
    "src/components/AuthTokenProvider/useRefreshTokenRotation.test.tsx",
    f"https://github.com/acme/api/commit/{SHA1[3]}",
    f"https://github.com/acme/api/blob/{SHA1[4]}/src/secret_formats.py#L12",
    "https://sentry.io/organizations/acme/issues/4505123456/?project=42",
    "https://docs.sentry.io/platforms/python/",
    "https://app.mailgun.com/app/sending/domains/mg.example.com",
    "https://docs.doppler.com/docs/service-tokens",
    "git@github.com:acme/api.git",
    "postgres://localhost:5432/app_test",
]


def _contexts(value: str) -> list[str]:
    return [
        value,
        f"see {value} for details",
        json.dumps({"prompt": f"look at this:\n{value}\tthen\n{value}"}, ensure_ascii=False),
        json.dumps({"out": [f"\x1b[32m{value}\x1b[0m", f"\\{value}"]}),
    ]


@pytest.mark.parametrize("value", LOOKALIKES)
def test_a_lookalike_is_never_redacted(value):
    for text in _contexts(value):
        assert redact(text) == text


def test_the_set_is_large_and_all_of_it_survives():
    changed = [v for v in LOOKALIKES if any(redact(t) != t for t in _contexts(v))]
    assert len(LOOKALIKES) >= 100
    assert changed == []
