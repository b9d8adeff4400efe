// A changed lesson file, updated in place: the edges other files give it stay where they are.
UNWIND $rows AS r
MATCH (l:Lesson {id: r.id})
SET l.scope = r.scope, l.family = r.family, l.title = r.title, l.gist = r.gist, l.provisional = r.provisional, l.body = r.body, l.level = r.level, l.status = r.status, l.origin = r.origin, l.conflict = r.conflict, l.tokens = r.tokens, l.gist_tokens = r.gist_tokens, l.derived_ids = r.derived_ids, l.parent_ids = r.parent_ids, l.dispute_ids = r.dispute_ids, l.preserve = r.preserve, l.patches = r.patches, l.patch_ids = r.patch_ids, l.created = r.created, l.updated = r.updated, l.path = r.path;
