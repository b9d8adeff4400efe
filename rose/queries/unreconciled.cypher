// Lessons stored while the judge was unavailable, still to be reconciled with what is known.
MATCH (l:Lesson) WHERE list_contains(l.provisional, 'reconcile')
RETURN l.id AS id, l.scope AS scope
ORDER BY l.created, id;
