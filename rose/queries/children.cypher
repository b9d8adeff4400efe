// The servable lessons one step below each of the given lessons (toward detail).
MATCH (p:Lesson)-[:DERIVED_FROM]->(c:Lesson)
WHERE p.id IN $ids AND c.status IN ['active', 'disputed']
RETURN p.id AS parent, c AS lesson, c.level AS level, c.id AS id
ORDER BY parent, level DESC, id;
