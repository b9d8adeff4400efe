// A lesson whose body (and so its token counts) and `updated` stamp are all that changed: only
// those are written. The other columns stay untouched, so the next checkpoint has fewer
// columns to rewrite; the body's row is replaced, as in lessons_update.
MATCH (l:Lesson {id: $id})
SET l.tokens = $tokens, l.gist_tokens = $gist_tokens, l.updated = $updated
WITH l
OPTIONAL MATCH (t:LessonText {id: $id})
DELETE t
WITH 1 AS one
CREATE (:LessonText {id: $id, body: $body});
