// Lineage edges of changed lessons that neither end's lists name any more.
MATCH (a:Lesson)-[r:DERIVED_FROM]->(b:Lesson)
WHERE (a.id IN $ids OR b.id IN $ids)
  AND NOT list_contains(a.derived_ids, b.id) AND NOT list_contains(b.parent_ids, a.id)
DELETE r;
