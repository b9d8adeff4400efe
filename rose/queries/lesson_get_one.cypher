// lesson_get for one lesson, found by its key; its text comes from lesson_text_one (the batch
// form joins every lesson with every text: ~15 ms at 10,000 lessons; an OPTIONAL MATCH of the
// text here costs ~20 ms on a fresh connection, the two keyed statements ~3 ms).
MATCH (l:Lesson {id: $id})
RETURN {id: l.id, scope: l.scope, family: l.family, title: l.title, gist: l.gist, provisional: l.provisional, level: l.level, status: l.status, origin: l.origin, conflict: l.conflict, tokens: l.tokens, gist_tokens: l.gist_tokens, derived_ids: l.derived_ids, parent_ids: l.parent_ids, covers: l.covers, dispute_ids: l.dispute_ids, preserve: l.preserve, load_bearing: l.load_bearing, patches: l.patches, patch_ids: l.patch_ids, patch_rescues: l.patch_rescues, attempts: l.attempts, successes: l.successes, failures: l.failures, expansions: l.expansions, rescues: l.rescues, last_used: l.last_used, created: l.created, updated: l.updated, path: l.path} AS lesson;
