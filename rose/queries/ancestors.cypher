// Every lesson above a node, up to and including each apex it reaches (for refinement).
MATCH (a:Lesson)-[:DERIVED_FROM*1..30]->(n:Lesson {id: $id})
WITH DISTINCT a
RETURN a.id AS id, a.level AS level, a.title AS title, a.status AS status,
       NOT EXISTS { MATCH (p:Lesson)-[:DERIVED_FROM]->(a) } AS is_apex
ORDER BY level, id;
