"""The words the simulated world is written in. Plain data, no markers.

A topic is recognised in prose by its name as a whole word, so no other word here may be
a topic's name (`tests/test_sim_world.py` checks it): a principle that said "retry"
would make every lesson holding it look like a lesson about retries.
"""

from __future__ import annotations

TOPICS = (
    "retry", "cache", "deploy", "rollout", "database", "queue", "logging", "build",
    "search", "billing", "metrics", "email", "cdn", "flags", "storage", "scheduler",
    "gateway", "webhooks", "exports", "imports", "sessions", "uploads", "indexer",
    "notifier", "ledger", "sandbox", "pipeline", "migrations", "profiles", "reports",
    "payments", "invoices", "ratings", "banners", "geo", "thumbnails", "crawler", "chat",
    "audit", "quotas", "tenants", "backups", "notebooks", "alerts", "telemetry", "catalog",
    "pricing", "inventory", "checkout", "shipping",
)  # fmt: skip

GLOBAL_TOPICS = frozenset({"retry", "cache", "cdn", "storage", "email", "gateway", "logging"})

#: Subjects outside the world: no task ever needs them, and a line naming one is plainly
#: about something else (the filler of a large synthetic store, `benchmarks/_synth_world.py`).
OUTSIDE = (
    "kiosk", "printer", "payroll", "greenhouse", "turbine", "forklift", "pharmacy", "orchard",
    "elevator", "locker", "tram", "barcode", "parcel", "vending", "sprinkler", "furnace",
    "ticketing", "carpool", "dialysis", "telescope", "harvester", "drone", "aquarium",
    "boiler", "hangar", "kiln", "loom", "marina", "observatory", "quarry", "refinery",
    "sawmill", "silo", "stadium", "tannery", "vineyard", "warehouse", "yacht", "zoo",
    "bakery", "brewery", "cinema", "dairy", "ferry", "foundry", "garage", "hatchery",
)  # fmt: skip

THINGS = (
    ("port", "port"), ("timeout", "ms"), ("flag", "flag"), ("batch size", "int"),
    ("attempt limit", "int"), ("region", "region"), ("channel name", "name"),
    ("bucket", "name"), ("header", "header"), ("worker count", "int"),
    ("config file", "path"), ("environment variable", "env"),
)  # fmt: skip

WORDS = (
    "amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "iris",
    "juniper", "kestrel", "lumen", "maple", "nimbus", "onyx", "prism", "quartz", "raven",
    "sable", "tundra", "umber", "vesper", "willow", "yarrow", "zephyr",
)  # fmt: skip

REGIONS = ("eu-west-2", "us-east-1", "ap-south-1", "eu-central-1", "us-west-2", "sa-east-1")

ACTIONS = (
    "make the call idempotent before retrying it",
    "drain in-flight work before restarting a worker",
    "pin the schema version in every message",
    "write through the primary, never a replica",
    "check the health endpoint before switching traffic",
    "invalidate by prefix rather than by single key",
    "run the dry-run mode first and read its diff",
    "take the advisory lock before touching shared state",
    "batch writes and flush them at the end of the request",
    "log the correlation id on every line",
    "validate the payload signature before parsing it",
    "round amounts only at the final step",
)

TRAPS = (
    ("treat a 200 status as success", "parse the body and check its status field"),
    ("rely on the default ordering", "sort explicitly by creation time"),
    ("use local time", "store and compare everything in UTC"),
    ("trust the cached copy", "revalidate against the origin first"),
    ("resend on every error", "resend only on timeouts and 503s"),
    ("follow redirects", "treat a redirect as a failure"),
    ("reuse the connection pool across forks", "open a fresh pool in each process"),
    ("read the config once at import", "re-read the config on every reload signal"),
)

VERBS = (
    ("add", "added"), ("fix", "fixed"), ("tune", "tuned"), ("debug", "debugged"),
    ("extend", "extended"), ("harden", "hardened"), ("refactor", "refactored"),
)  # fmt: skip

OBJECTS = (
    "client", "worker", "handler", "job", "config", "endpoint", "test suite",
    "integration", "nightly run",
)  # fmt: skip

FILLER = (
    "This came up during a long debugging session.",
    "It took a while to work out what was going on.",
    "Several people have been caught by this before.",
    "The documentation is not clear on this point.",
    "Keep this in mind the next time the area is touched.",
    "It is easy to miss when reading the code quickly.",
    "Nothing in the error output points at it directly.",
    "We only noticed after comparing two runs side by side.",
)

#: How the agent says it did something out of habit, not because a lesson told it to.
HABIT = "as I always do"
