"""More kinds of secret stay off disk, and what a memory is made of still survives.

Locks in (issue "Never broken, never leaking", item 4): an AWS secret key beside its key
id with no label, `aws_secret_access_key VALUE` with a blank, Azure `AccountKey=` and SAS
`sig=`, SendGrid, Discord webhooks and bot tokens, Telegram bot tokens, Twilio `SK...`,
DigitalOcean `dop_v1_...`, `mysql -pPASSWORD`, `curl -u user:pass`, and the fixed-prefix
formats that maintained scanners (gitleaks, detect-secrets, trufflehog) know, each with
its exact redacted output; git SHAs, UUIDs, ids like `n_7f2a91`, numbers, paths, prose
and ordinary commands (`docker run -p 8080:80`, `mysql -u root -p`) come out untouched;
the new patterns stay idempotent, JSON-safe and linear-time.
Test secrets are assembled at runtime so no secret-looking literal sits in this file.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rose.redaction.redact import redact
from tests._scaling import LINEAR_BOUND, growth

AWS_ID = "AKIA" + "IOSFODNN7" + "EXAMPLE"
AWS_SECRET = "Zx3bJalrXUtnFEMI" + "/K7MDENG/bPxRfiCY" + "EXAMPLE"  # 40 characters
HEX32 = "0123456789abcdef" * 2
HEX64 = HEX32 * 2
B64 = "Ab1+Cd2/" * 11  # 88 characters with the "==" added below
TELEGRAM = "123456789:" + "AA" + "Hk1Lm2Nn3Oo4Pp5Qq6Rr7Ss8Tt9Uu0Vv1"
DISCORD_HOOK = "discord.com/api/webhooks/123456789012345678/" + "aB1_cD2-" * 8 + "eF3gH4"
DISCORD_BOT = "MTIzNDU2Nzg5MDEyMzQ1Njc4" + "." + "GaBcDe" + "." + "aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0"
SENDGRID = "SG." + "aB1cD2eF3gH4iJ5kL6mN7o" + "." + "pQ8rS9tU0vW1xY2zA3bC4dE5fG6hI7jK8lM9nO0pQ1r"
SAS_SIG = "Ab1%2BCd2%2F" * 4 + "%3D"

# (text, expected): one row per new category, and the variants that reached disk.
NEW_FORMATS = [
    # AWS secret access key with no label, beside its key id, either side
    (f"{AWS_ID} / {AWS_SECRET}", "[REDACTED:aws-key] / [REDACTED:aws-secret]"),
    (f"bob,,{AWS_ID},{AWS_SECRET}", "bob,,[REDACTED:aws-key],[REDACTED:aws-secret]"),
    (f"{AWS_SECRET}  {AWS_ID}", "[REDACTED:aws-secret]  [REDACTED:aws-key]"),
    (
        f"id {AWS_ID} and secret {AWS_SECRET}",
        "id [REDACTED:aws-key] and secret [REDACTED:aws-secret]",
    ),
    # ... with a blank instead of `=`, or after the words
    (f"aws_secret_access_key {AWS_SECRET}", "aws_secret_access_key [REDACTED:aws-secret]"),
    (f"AWS_SECRET_ACCESS_KEY\t{AWS_SECRET}", "AWS_SECRET_ACCESS_KEY\t[REDACTED:aws-secret]"),
    (
        f"AWS Secret Access Key [None]: {AWS_SECRET}",
        "AWS Secret Access Key [None]: [REDACTED:aws-secret]",
    ),
    # Azure storage connection string, service bus key, SAS signature
    (
        f"DefaultEndpointsProtocol=https;AccountName=acct1;AccountKey={B64}==;"
        "EndpointSuffix=core.windows.net",
        "DefaultEndpointsProtocol=https;AccountName=acct1;AccountKey=[REDACTED:azure-key];"
        "EndpointSuffix=core.windows.net",
    ),
    (
        f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKey={B64[:43]}=",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKey=[REDACTED:azure-key]",
    ),
    (
        f"https://a.blob.core.windows.net/c/f?sv=2021-08-06&sp=r&se=2026-01-01&sig={SAS_SIG}",
        "https://a.blob.core.windows.net/c/f?sv=2021-08-06&sp=r&se=2026-01-01"
        "&sig=[REDACTED:url-signature]",
    ),
    (
        f"s3.amazonaws.com/b/k?X-Amz-Date=20260101T000000Z&X-Amz-Signature={HEX64}",
        "s3.amazonaws.com/b/k?X-Amz-Date=20260101T000000Z&X-Amz-Signature=[REDACTED:url-signature]",
    ),
    (
        f"?X-Amz-Credential=bob&X-Amz-Signature={HEX64}",
        "?X-Amz-Credential=[REDACTED:secret][REDACTED:url-signature]",
    ),
    (
        "secret " + "abc1" + "Q~" + "aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1w",
        "secret [REDACTED:azure-client-secret]",
    ),
    # SendGrid, Discord, Telegram, Twilio, DigitalOcean
    (f"SENDGRID={SENDGRID}", "SENDGRID=[REDACTED:sendgrid-key]"),
    (f"post to https://{DISCORD_HOOK} now", "post to https://[REDACTED:discord-webhook] now"),
    (f"https://canary.{DISCORD_HOOK}", "https://canary.[REDACTED:discord-webhook]"),
    (f"bot {DISCORD_BOT}", "bot [REDACTED:discord-token]"),
    (f"TELEGRAM={TELEGRAM}", "TELEGRAM=[REDACTED:telegram-token]"),
    (
        f"curl https://api.telegram.org/bot{TELEGRAM}/getMe",
        "curl https://api.telegram.org/bot[REDACTED:telegram-token]/getMe",
    ),
    ("twilio SK" + HEX32, "twilio [REDACTED:twilio-key]"),
    ("dop_v1_" + HEX64, "[REDACTED:digitalocean-token]"),
    (
        f"doo_v1_{HEX64} dor_v1_{HEX64}",
        "[REDACTED:digitalocean-token] [REDACTED:digitalocean-token]",
    ),
    # passwords on a command line
    ("mysql -u root -pS3cret! mydb", "mysql -u root -p[REDACTED:password] mydb"),
    ("mysqldump -proot prod > d.sql", "mysqldump -p[REDACTED:password] prod > d.sql"),
    ("mariadb -h db -p'p w' app", "mariadb -h db -p'[REDACTED:password]' app"),
    ("curl -u admin:hunter2 https://x.io", "curl -u admin:[REDACTED:password] https://x.io"),
    ("curl -s --user 'admin:hunter 2' x", "curl -s --user 'admin:[REDACTED:password]' x"),
    ("curl -uadmin:pw1 x", "curl -uadmin:[REDACTED:password] x"),
    ("sshpass -p pw1 ssh host", "sshpass -p [REDACTED:password] ssh host"),
    ("redis-cli -h cache -a pw1 ping", "redis-cli -h cache -a [REDACTED:password] ping"),
    ("docker login -u bob -p pw1 reg.io", "docker login -u bob -p [REDACTED:password] reg.io"),
    (
        "machine api.x.io login bob password hunter2",
        "machine api.x.io login bob password [REDACTED:password]",
    ),
    ("run with --token abc123 now", "run with --token [REDACTED:token] now"),
    ("gh --api-key 'k3y v' x", "gh --api-key '[REDACTED:api-key]' x"),
    ("DB_PASS=hunter2", "DB_PASS=[REDACTED:password]"),
    ("creds: hunter2", "creds: [REDACTED:secret]"),
]
# Fixed-prefix formats after the rule lists of maintained scanners: (kind, secret).
PREFIXED = [
    ("openrouter-key", "sk-" + "or-v1-" + HEX64),
    ("groq-key", "gsk_" + "aB1cD2eF3g" * 5 + "hI"),
    ("xai-key", "xai-" + "aB1cD2eF3g" * 8),
    ("perplexity-key", "pplx-" + "aB1cD2eF3g" * 4 + "hI4jK5lM"),
    ("replicate-token", "r8_" + "aB1cD2eF3g" * 3 + "hI4jK5l"),
    ("langsmith-key", "lsv2_" + "pt_" + HEX32 + "_" + HEX32[:10]),
    ("aws-key", "A3T" + "A" + "IOSFODNN7" + "EXAMPLE"),
    ("gitlab-token", "glcbt-" + "64_" + "aB1cD2eF3gH4iJ5kL6mN"),
    ("gitlab-token", "GR1348941" + "aB1cD2eF3gH4iJ5kL6mN"),
    ("slack-token", "xoxe-" + "1-" + "aB1cD2eF3gH4iJ5kL6mN"),
    ("slack-webhook", "hooks.slack.com/" + "workflows/" + "T01ABC/A02DEF/3456/" + "aB1cD2eF3g" * 2),
    ("teams-webhook", "webhook.office.com/" + "webhookb2/" + "aB1cD2eF3g" * 5),
    ("stripe-key", "sk_" + "prod_" + "aB1cD2eF3gH4"),
    ("square-token", "sq0" + "atp-" + "aB1cD2eF3gH4iJ5kL6mN7o"),
    ("google-key", "GOCSPX-" + "aB1cD2eF3gH4iJ5kL6mN7oP8"),
    ("facebook-token", "EAAC" + "aB1cD2eF3g" * 10),
    ("twitter-token", "A" * 22 + "aB1cD2eF3g%3D" * 5),
    ("sendinblue-key", "xkeysib-" + HEX64 + "-" + "aB1cD2eF3gH4iJ5k"),
    ("pypi-token", "pypi-" + "AgEIcHlwaS5vcmc" + "aB1cD2eF3g" * 6),
    ("rubygems-token", "rubygems_" + HEX32 + HEX32[:16]),
    ("clojars-token", "CLOJARS_" + "ab1cd2ef3g" * 6),
    ("docker-token", "dckr_" + "pat_" + "aB1cD2eF3gH4iJ5kL6mN7oP8qR9"),
    ("hf-token", "api_" + "org_" + "aBcDeFgHiJ" * 3 + "kL"),
    ("shopify-token", "shp" + "at_" + HEX32),
    ("atlassian-token", "ATATT3" + "xFfGF0" + "aB1cD2eF3g" * 18),
    ("databricks-token", "dapi" + HEX32),
    ("doppler-token", "dp." + "pt." + "aB1cD2eF3g" * 4 + "hI4"),
    ("dynatrace-token", "dt0c01." + "AB1CD2EF3GH4IJ5KL6MN7OP8" + "." + "AB1CD2EF3G" * 6 + "H4IJ"),
    ("grafana-token", "glc_" + "aB1cD2eF3g" * 4),
    ("grafana-token", "glsa_" + "aB1cD2eF3g" * 3 + "hI" + "_" + "0a1b2c3d"),
    ("linear-key", "lin_" + "api_" + "aB1cD2eF3g" * 4),
    ("newrelic-key", "NRAK-" + "AB1CD2EF3GH4IJ5KL6MN7OP8QR9"),
    ("notion-token", "ntn_" + "12345678901" + "aB1cD2eF3g" * 3 + "hI4jK"),
    ("postman-key", "PMAK-" + HEX32[:24] + "-" + HEX32 + "ab"),
    ("pulumi-token", "pul-" + HEX32 + HEX32[:8]),
    ("sentry-token", "sntryu_" + HEX64),
    ("supabase-token", "sbp_" + HEX32 + HEX32[:8]),
    ("planetscale-token", "pscale_" + "tkn_" + "aB1cD2eF3g" * 4),
    ("prefect-key", "pnu_" + "aB1cD2eF3g" * 3 + "hI4jK5"),
    ("vault-token", "hvs." + "aB1cD2eF3g" * 3),
    ("heroku-key", "HRKU-" + "AA" + "aB1cD2eF3g" * 5 + "hI4jK5lM"),
    ("flyio-token", "fo1_" + "aB1cD2eF3g" * 4 + "hI4"),
    ("alibaba-key", "LTAI" + "aB1cD2eF3gH4iJ5kL6mN"),
    ("artifactory-key", "AKCp" + "aB1cD2eF3g" * 6 + "hI4jK5lM6"),
    ("age-key", "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" + "QPZRY9X8GF2TVDW0S"
     + "3JN54KHCE"),
    ("onepassword-key", "A3-" + "ABC123-" + "DEF456GHI78-" + "JKL90-" + "MNO12-" + "PQR34"),
    ("openshift-token", "sha256~" + "aB1cD2eF3g" * 4 + "hI4"),
    ("cloudflare-key", "v1.0-" + HEX32[:24] + "-" + HEX64 * 2 + HEX32[:18]),
    ("mapbox-token", "sk." + "eyJ" + "1IjoiYm9iIiwiYSI6ImNrMTIzNDU2Nzg5MDEy"
     + "MzQ1Njc4OTAifQ.aB1cD2eF3g"),
    ("easypost-key", "EZAK" + "ab1cd2ef3g" * 5 + "hi4j"),
    ("shippo-token", "shippo_" + "live_" + HEX32 + HEX32[:8]),
    ("duffel-token", "duffel_" + "test_" + "aB1cD2eF3g" * 4 + "hI4"),
    ("typeform-token", "tfp_" + "aB1cD2eF3g" * 5 + "hI4jK5lM6"),
    ("airtable-token", "pat" + "aB1cD2eF3gH4iJ" + "." + HEX64),
    ("harness-key", "pat." + "aB1cD2eF3gH4iJ5kL6mN7o" + "." + "aB1cD2eF3gH4iJ5kL6mN7oP8"
     + "." + "aB1cD2eF3gH4iJ5kL6mN"),
    ("octopus-key", "API-" + "AB1CD2EF3GH4IJ5KL6MN7OP8QR"),
    ("mailchimp-key", HEX32 + "-us12"),
    ("terraform-token", "a3f9c1d2e4b5a6" + ".atlasv1." + "aB1cD2eF3g" * 6 + "xy"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), NEW_FORMATS)
def test_new_formats_are_redacted_exactly(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize(("kind", "secret"), PREFIXED)
@pytest.mark.parametrize("template", ["key {} here", "{}", "X_TOKEN={}", "[{}]", "a\n{}\nb"])
def test_prefixed_formats_are_redacted_exactly(kind, secret, template):
    assert redact(template.format(secret)) == template.format(f"[REDACTED:{kind}]")


@pytest.mark.parametrize(("text", "expected"), NEW_FORMATS)
def test_new_formats_are_redacted_inside_json_lines(text, expected):
    line = json.dumps({"out": "before\n" + text})
    assert json.loads(redact(line)) == {"out": "before\n" + expected}


# What an agent's memory is full of; none of it is a secret.
SURVIVES = [
    "commit 3f2a9c1d0b7e4f2a9c1d0b7e4f2a9c1d0b7e4f2a",
    "Merge 9fceb02d0ae598e95dc970b74767f19372d61af8 into 1a410efbd13591db07496601ebc7a059dd55cfe9",
    "git diff a1b2c3d..e4f5a6b -- rose/redaction/redact.py",
    "git rebase -i HEAD~3 && git push --force-with-lease origin fix/token-budget",
    "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904 parent d670460b4b4aece5915caf5c68d12f560a9fe3e4",
    "request-id: 9b2f5c1e-6d3a-4f8b-a0c7-2e1d9f8b7a6c (trace 5f1e2d3c4b5a69788796a5b4c3d2e1f0)",
    "ULID 01ARZ3NDEKTSV4RRFFQ69G5FAV and ksuid 0ujtsYcgvSTl8PAuAdqWYSMnLOv",
    "lessons n_7f2a91, n_0c3d22 and e_4f1a cover the neighbouring failures",
    "episode ep_20260502_101112_a9f3 served lesson n_7f2a91 at level 2",
    "memory at 0x7ffee4b3c8a0, pid 48211, exit code 137, uid 1000, gid 1000",
    "10.0.0.12:5432 and 192.168.1.20 and [::1]:8080 and 2001:db8::ff00:42:8329",
    "sizes 4096 16384 65536 1048576 and ratio 16:9 at 12:30:45 on 2026-05-02T10:11:12Z",
    "the run took 42.7 s over 1,204 tests; 1,204 passed in 38.1 s",
    r"C:\Users\bob\AppData\Local\rose\cache and ~/.aws/credentials and ~/.config/gh/hosts.yml",
    ".env.example, secrets.example.yaml, tests/fixtures/passwords.txt, docs/api-keys.md",
    "/var/lib/rose/graph.kz.lock was held; removed /tmp/pytest-of-u/pytest-12/test_token_refresh0",
    "node_modules/.pnpm/@types+node@20.11.30/node_modules/@types/node/index.d.ts",
    "s3://my-bucket/reports/2026/05/02/run-3f2a9c1.json",
    "https://example.com/search?page=2&sort=desc&q=token+budget&sig=short",
    "md5 d41d8cd98f00b204e9800998ecf8427e, sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709",
    '"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUd'
    'BeoGlODJ6+SfaPg=="',
    "image ghcr.io/org/app@sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    "Store the API key in the vault and never log the secret.",
    "The secret access key must be rotated every 90 days.",
    "AWS access keys live in ~/.aws/credentials; the secret is never printed.",
    "The AKIA prefix marks long-term AWS key ids; ASIA marks temporary ones.",
    "We pass the token through an env var, not on the command line.",
    "Use --token to authenticate and --password-stdin for docker.",
    "The tests passed: 12 pass, 3 fail, and bypass mode was off; compass: north.",
    "Passwords must be at least 12 characters; password reset links expire in 24 hours.",
    "The login form, the machine learning model and the machine login flow are unrelated.",
    "def get_token(self) -> str: return self._token",
    'token = request.headers.get("X-Token")',
    'if not api_key: raise ValueError("api_key is required")',
    "password: str = Field(..., min_length=12)",
    "for secret in vault.list_secrets(): print(secret.name)",
    "docker run -p 8080:80 -u 1000:1000 nginx",
    "mysql -h db.internal -P 3306 -u app -p appdb",
    "mysql -u root -p",
    "mysqldump --single-transaction -u backup -p prod > dump.sql",
    'curl -u "$API_USER:$API_PASS" https://api.example.com/v1/items',
    "curl -sSL https://example.com/install.sh | sh && docker run -u 1000:1000 app",
    "ssh -p 2222 deploy@host and scp -P 2222 file deploy@host:/srv",
    "pip install -r requirements.txt && pytest -k test_password_reset -x",
    "kubectl get secret db-creds -o yaml && kubectl describe secret db-creds",
    "gh auth login --with-token < token.txt",
    'echo "$PW" | docker login --password-stdin -u bob registry.example.com',
    "redis-cli -h cache -p 6379 ping",
    "GITHUB_TOKEN 3f2a9c1",
    "ratio 1:1, 3:2 and 16:10; sig figs and signal handling; design sign-off",
    "press Q~ to quit; locale en-us, en-gb; SKU 12345; API-v2 docs; sk-learn and scikit-learn",
]


@pytest.mark.parametrize("text", SURVIVES)
def test_ordinary_text_survives_the_new_patterns(text):
    assert redact(text) == text


FRAGMENTS = [
    AWS_ID, AWS_SECRET, "[REDACTED:aws-key]", TELEGRAM, DISCORD_HOOK, SENDGRID, "sig=", SAS_SIG,
    "AccountKey=", "mysql", " -p", "curl", " -u ", "--user ", "bob:", "sshpass", "--token ",
    "aws_secret_access_key", " ", "\t", "'", '"', "\\", "\\n", "\n", ":", "=", "&", "?", "/",
    "secret access key ", "SK" + HEX32, "dop_v1_" + HEX64, HEX32 + "-us1", "x", "1",
]  # fmt: skip
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=20).map("".join)


@given(texts)
def test_the_new_patterns_are_idempotent(text):
    once = redact(text)
    assert redact(once) == once


@given(st.lists(texts, max_size=5))
def test_the_new_patterns_keep_a_json_line_valid(values):
    json.loads(redact(json.dumps(values, ensure_ascii=False)))


@pytest.mark.parametrize(
    "unit",
    ["curl -u ", "mysql ", "[REDACTED:aws-key] ", ":A", "secret access key ", "--token ",
     "x_token abc "],
)  # fmt: skip
def test_the_new_patterns_take_linear_time(unit: str):
    """Ten times the input costs about ten times the CPU time, not a hundred (backtracking)."""
    assert growth(redact, unit, 2_000 // len(unit)) < LINEAR_BOUND


def test_a_secret_after_an_escaped_newline_keeps_the_json_line_valid():
    """Found by hypothesis: the secret matched from the `n` of an escaped newline, leaving a
    lone backslash, so the redacted JSON line no longer parsed."""
    values = ["AKIAIOSFODNN7EXAMPLE\nSK0123456789abcdef0123456789abcdefmysql"]
    line = redact(json.dumps(values, ensure_ascii=False))
    # 39 characters after the newline: no secret, once the escape's letter is not counted
    assert json.loads(line) == ["[REDACTED:aws-key]\nSK0123456789abcdef0123456789abcdefmysql"]
