// A changed lesson file, updated in place: the edges other files give it stay where they are.
// Its body is a row of its own, replaced (deleted and created) rather than updated: the
// engine rewrites a whole string column at the next checkpoint when one of its values is
// updated in place, which for the bodies is megabytes; a replaced row costs what it holds.
UNWIND $rows AS r
MATCH (l:Lesson {id: r.id})
SET l.scope = r.scope, l.family = r.family, l.title = r.title, l.gist = r.gist, l.provisional = r.provisional, l.level = r.level, l.status = r.status, l.origin = r.origin, l.provenance = r.provenance, l.held = r.held, l.accepted = r.accepted, l.conflict = r.conflict, l.tokens = r.tokens, l.gist_tokens = r.gist_tokens, l.derived_ids = r.derived_ids, l.parent_ids = r.parent_ids, l.dispute_ids = r.dispute_ids, l.preserve = r.preserve, l.patches = r.patches, l.patch_ids = r.patch_ids, l.created = r.created, l.updated = r.updated, l.path = r.path
WITH r
OPTIONAL MATCH (t:LessonText {id: r.id})
DELETE t
WITH r
CREATE (:LessonText {id: r.id, body: r.body});
