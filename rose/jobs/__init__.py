"""Detached work: the job queue, its ledger and runner, and what runs there (the stages
after a session, capturing a lesson, import)."""
