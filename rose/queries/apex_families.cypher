// Each active apex's scope and family (merge groups kept within one family: `merge.within`).
MATCH (a:Lesson)
WHERE a.status = 'active'
  AND NOT EXISTS { MATCH (p:Lesson)-[:DERIVED_FROM]->(a) WHERE p.status IN ['active', 'disputed'] }
RETURN a.id AS apex, a.scope AS scope, a.family AS family
ORDER BY apex;
