// lessons_update for one lesson, found by its key, `$id`, with each column a parameter of its
// own (the batch form joins rows with every lesson; one row unwound from a list of structs
// costs the engine several times what plain parameters do).
MATCH (l:Lesson {id: $id})
SET l.scope = $scope, l.family = $family, l.title = $title, l.gist = $gist, l.provisional = $provisional, l.level = $level, l.status = $status, l.origin = $origin, l.provenance = $provenance, l.held = $held, l.accepted = $accepted, l.conflict = $conflict, l.tokens = $tokens, l.gist_tokens = $gist_tokens, l.derived_ids = $derived_ids, l.parent_ids = $parent_ids, l.dispute_ids = $dispute_ids, l.preserve = $preserve, l.patches = $patches, l.patch_ids = $patch_ids, l.created = $created, l.updated = $updated, l.path = $path
WITH l
OPTIONAL MATCH (t:LessonText {id: $id})
DELETE t
WITH 1 AS one
CREATE (:LessonText {id: $id, body: $body});
