// A lesson's body goes to its own table (see lessons_update).
UNWIND $rows AS r
CREATE (l:Lesson {id: r.id, scope: r.scope, family: r.family, title: r.title, gist: r.gist, provisional: r.provisional, level: r.level, status: r.status, origin: r.origin, conflict: r.conflict, tokens: r.tokens, gist_tokens: r.gist_tokens, derived_ids: r.derived_ids, parent_ids: r.parent_ids, covers: r.covers, dispute_ids: r.dispute_ids, preserve: r.preserve, load_bearing: r.load_bearing, patches: r.patches, patch_ids: r.patch_ids, patch_rescues: r.patch_rescues, attempts: r.attempts, successes: r.successes, failures: r.failures, expansions: r.expansions, rescues: r.rescues, last_used: r.last_used, created: r.created, updated: r.updated, path: r.path})
CREATE (:LessonText {id: r.id, body: r.body});
