"""The secret formats redaction knows by their shape: a table, kept apart from how it is used.

Formats with a fixed prefix (`PROVIDERS`) are matched in one pass; formats that open with
a character class (`ANCHORED`) run only when their anchor text is present. Both read as
facts about each vendor's tokens, after the rule lists of the maintained secret scanners.
Standard library only: redaction is on the prompt hook's path.
"""

from __future__ import annotations

import re

# The end of a token: no letter or digit follows.
END = r"(?![A-Za-z0-9])"
# The start of a token that opens with a character class: no letter or digit before it, or
# a JSON escape (`\n`) in text that is cut short of the JSON string's end.
START = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))"

# Formats with a fixed prefix, after the rule lists of gitleaks, detect-secrets and
# trufflehog. Each pattern starts with a literal character and holds no top-level `|`.
PROVIDERS: dict[str, tuple[str, ...]] = {
    "anthropic-key": (r"sk-ant-[A-Za-z0-9_-]{20,}",),
    # Legacy keys open with 20+ alphanumerics, which spares slugs like `sk-learn-...`.
    "openai-key": (
        r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}",
        r"sk-[A-Za-z0-9]{20,}[A-Za-z0-9_-]*",
    ),
    "openrouter-key": (r"sk-or-v1-[A-Za-z0-9]{32,}",),
    "groq-key": (r"gsk_[A-Za-z0-9]{40,}",),
    "xai-key": (r"xai-[A-Za-z0-9]{60,}",),
    "perplexity-key": (r"pplx-[A-Za-z0-9]{40,}",),
    "replicate-token": (r"r8_[A-Za-z0-9]{30,}",),
    "langsmith-key": (r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",),
    "aws-key": (r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}" + END,),
    "aws-bedrock-key": (
        r"ABSK[A-Za-z0-9+/]{100,}={0,2}",
        # short-lived: a presigned URL in base64, after its head `bedrock.amazonaws.com`
        r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%]*",
    ),
    "github-token": (r"gh[pousr]_[A-Za-z0-9]{20,}", r"github_pat_[A-Za-z0-9_]{20,}"),
    "gitlab-token": (
        r"gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat|ffct)-[A-Za-z0-9_-]{20,}"
        r"(?:\.[A-Za-z0-9]{9})?",
        r"GR1348941[A-Za-z0-9_-]{20,}",
    ),
    "slack-token": (
        r"xox[abeoprs]-[A-Za-z0-9-]{8,}",
        r"xoxe\.xox[bp]-[A-Za-z0-9-]{10,}",
        r"xapp-[A-Za-z0-9-]{10,}",
    ),
    "slack-webhook": (r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}",),
    "discord-webhook": (
        r"discord(?:app)?\.com/api(?:/v[0-9]{1,2})?/webhooks/[0-9]{15,22}/[A-Za-z0-9_-]{30,}",
    ),
    "discord-token": tuple(
        c + r"[A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])"
        for c in "MNO"
    ),
    "teams-webhook": (r"webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{40,}",),
    "stripe-key": (
        *(p + r"k_(?:live|test|prod)_[A-Za-z0-9]{10,}" for p in "srp"),
        r"whsec_[A-Za-z0-9]{20,}",
    ),
    "square-token": (
        r"sq0atp-[A-Za-z0-9_-]{22,}",
        r"sq0csp-[A-Za-z0-9_-]{40,}",
        r"EAAA[A-Za-z0-9_+=-]{60,}",
    ),
    "google-key": (
        r"AIza[A-Za-z0-9_-]{30,}",
        r"ya29\.[A-Za-z0-9_-]{20,}",
        r"GOCSPX-[A-Za-z0-9_-]{24,}",
    ),
    "facebook-token": (r"EAA[MC][A-Za-z0-9]{100,}",),
    "twitter-token": (r"AA{21}[A-Za-z0-9%]{50,}",),
    "sendgrid-key": (r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}",),
    "sendinblue-key": (r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}",),
    "twilio-key": (r"SK[0-9a-fA-F]{32}" + END,),
    "digitalocean-token": (r"do[opr]_v1_[a-f0-9]{64}",),
    "npm-token": (r"npm_[A-Za-z0-9]{30,}",),
    "pypi-token": (
        r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
        r"pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9_-]{50,}",
    ),
    "rubygems-token": (r"rubygems_[a-f0-9]{48}",),
    "clojars-token": (r"CLOJARS_[A-Za-z0-9]{60}",),
    "docker-token": (r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}",),
    "hf-token": (r"hf_[A-Za-z0-9]{30,}", r"api_org_[A-Za-z0-9]{30,}"),
    "shopify-token": (r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + END,),
    "atlassian-token": (r"ATATT3[A-Za-z0-9_=-]{100,}",),
    "databricks-token": (r"dapi[a-f0-9]{32}(?:-[0-9])?" + END,),
    # A service token names its config: `dp.st.<config>.<token>`.
    "doppler-token": (r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,64}\.)?[A-Za-z0-9]{40,}",),
    "dynatrace-token": (r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}",),
    "grafana-token": (
        r"glc_[A-Za-z0-9+/]{32,}={0,3}",
        r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
        r"eyJrIjoi[A-Za-z0-9]{60,}={0,3}",
    ),
    "linear-key": (r"lin_api_[A-Za-z0-9]{40}",),
    "newrelic-key": (r"NR(?:AK|JS|II)-[A-Za-z0-9-]{19,}",),
    "notion-token": (r"ntn_[0-9]{11}[A-Za-z0-9]{35}", r"secret_[A-Za-z0-9]{43}" + END),
    "postman-key": (r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",),
    "pulumi-token": (r"pul-[a-f0-9]{40}",),
    "sentry-token": (r"sntrys_eyJ[A-Za-z0-9+/=_]{40,}", r"sntryu_[a-f0-9]{64}"),
    "supabase-token": (r"sbp_[a-f0-9]{40}",),
    "planetscale-token": (r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}",),
    "prefect-key": (r"pnu_[A-Za-z0-9]{36}",),
    "vault-token": (r"hv[sbr]\.[A-Za-z0-9_-]{24,}",),
    "heroku-key": (r"HRKU-AA[A-Za-z0-9_-]{58}",),
    "flyio-token": (r"fo1_[A-Za-z0-9_-]{43}", r"fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}"),
    "alibaba-key": (r"LTAI[A-Za-z0-9]{20}" + END,),
    "artifactory-key": (r"AKCp[A-Za-z0-9]{69}", r"cmVmdGtu[A-Za-z0-9]{56}"),
    "age-key": (r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",),
    "onepassword-key": (
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        r"ops_eyJ[A-Za-z0-9+/]{200,}={0,3}",
    ),
    "openshift-token": (r"sha256~[A-Za-z0-9_-]{43}",),
    "cloudflare-key": (r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}",),
    "mapbox-token": (r"sk\.eyJ[A-Za-z0-9_.-]{50,}",),
    "dropbox-token": (r"sl\.[A-Za-z0-9_=-]{130,}",),
    "easypost-key": (r"EZ[AT]K[A-Za-z0-9]{54}",),
    "shippo-token": (r"shippo_(?:live|test)_[a-fA-F0-9]{40}",),
    "duffel-token": (r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}",),
    "typeform-token": (r"tfp_[A-Za-z0-9_.=-]{59}",),
    "airtable-token": (r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",),
    "harness-key": tuple(
        p + r"at\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}" for p in "ps"
    ),
    "octopus-key": (r"API-[A-Z0-9]{26}" + END,),
    # An API key (`key-` and 32 of [0-9a-z], a digit among them) and the public validation key.
    "mailgun-key": (r"key-(?=[a-z]{0,31}[0-9])[a-z0-9]{32}" + END, r"pubkey-[a-f0-9]{32}" + END),
    "adobe-secret": (r"p8e-[A-Za-z0-9]{32}" + END,),
    "authress-key": tuple(
        p + r"_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}"
        r"\.[A-Za-z0-9+/_=-]{30,}"
        for p in ("sc", "ext", "scauth", "authress")
    ),
    "clickhouse-key": (r"4b1d(?=[a-z0-9]{0,37}[A-Z])[A-Za-z0-9]{38}" + END,),
    "flutterwave-key": (r"FLW(?:SECK|PUBK)(?:_TEST)?-[A-Za-z0-9]{12,}(?:-X)?",),
    "frameio-token": (r"fio-u-[A-Za-z0-9_=-]{64}",),
    "infracost-token": (r"ico-[A-Za-z0-9]{32}" + END,),
    "intra42-secret": (r"s-s4t2(?:ud|af)-[a-f0-9]{64}" + END,),
    "readme-key": (r"rdme_[a-z0-9]{70}" + END,),
    "scalingo-token": (r"tk-us-[A-Za-z0-9_-]{48}",),
    "settlemint-token": (r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}" + END,),
    "sourcegraph-token": (r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}" + END,),
    "jwt": (
        r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        # a whole JWT in base64: `eyJhbGciO` (`{"alg"`) or `eyJ0eXAiO` (`{"typ"`), encoded
        r"ZXlK(?:aGJHY2lP|MGVYQWlP)[A-Za-z0-9+/]{40,}={0,2}",
    ),
}

# Formats that open with a character class; each runs only when its anchor is present.
ANCHORED: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    # A bot id and its secret, also inside `api.telegram.org/bot<id>:<secret>/`.
    ("telegram-token", ":A", re.compile(r"(?:(?<=/bot)|(?<![A-Za-z0-9_:])|(?<=\\[nrt]))"
                                        r"[0-9]{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])")),
    ("mailchimp-key", "-us", re.compile(START + r"[0-9a-f]{32}-us[0-9]{1,2}" + END)),
    ("azure-client-secret", "Q~", re.compile(
        r"(?:(?<![A-Za-z0-9_~.])|(?<=\\[nrt]))[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"
    )),
    ("terraform-token", ".atlasv1.", re.compile(
        START + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}"
    )),
    # The key of a DSN, `https://<key>[:<secret>]@o<org>.ingest.sentry.io/<project>`; the
    # host is left, and any host with `sentry` in its name counts (self-hosted Sentry).
    ("sentry-dsn", "sentry", re.compile(
        r"(?<=://)[0-9a-fA-F]{32}(?::[0-9a-fA-F]{32})?"
        r"(?=@[A-Za-z0-9.-]*sentry[A-Za-z0-9.-]*(?::[0-9]{1,5})?/(?:[A-Za-z0-9_.-]+/)*[0-9]+"
        r"(?![A-Za-z0-9]))"
    )),
    # An app token: the app's id (15-16 digits), `|`, and its secret.
    ("facebook-token", "|", re.compile(
        START + r"[0-9]{15,16}\|[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])"
    )),
    ("maxmind-key", "_mmk", re.compile(START + r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + END)),
    ("gitlab-session", "_gitlab_session=", re.compile(r"(?<=_gitlab_session=)[0-9a-z]{32}" + END)),
)  # fmt: skip
