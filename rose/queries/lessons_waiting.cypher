// Lessons waiting for the user's review: held from recall (quarantined), or servable lessons
// whose content came from outside and that the user has not accepted yet.
MATCH (l:Lesson)
WHERE l.status = 'quarantined'
   OR (l.provenance = 'outside' AND NOT coalesce(l.accepted, false) AND l.status IN ['active', 'disputed'])
RETURN l.id AS id, l.scope AS scope, l.title AS title, l.status AS status, l.provenance AS provenance,
       l.held AS held, l.created AS created, l.path AS path
ORDER BY l.created, id;
