// lessons_update for one row (`$rows` holds it), whose lesson and text are found by their key,
// `$id`: the batch form joins the rows with every lesson and every text.
UNWIND $rows AS r
MATCH (l:Lesson {id: $id})
SET l.scope = r.scope, l.family = r.family, l.title = r.title, l.gist = r.gist, l.provisional = r.provisional, l.level = r.level, l.status = r.status, l.origin = r.origin, l.conflict = r.conflict, l.tokens = r.tokens, l.gist_tokens = r.gist_tokens, l.derived_ids = r.derived_ids, l.parent_ids = r.parent_ids, l.dispute_ids = r.dispute_ids, l.preserve = r.preserve, l.patches = r.patches, l.patch_ids = r.patch_ids, l.created = r.created, l.updated = r.updated, l.path = r.path
WITH r
OPTIONAL MATCH (t:LessonText {id: $id})
DELETE t
WITH r
CREATE (:LessonText {id: $id, body: r.body});
