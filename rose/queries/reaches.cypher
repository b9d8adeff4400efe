// Does any of these lessons reach any of those going down (toward detail)? A new edge from
// a parent to a child closes a cycle exactly when the child already reaches the parent.
MATCH (c:Lesson)-[:DERIVED_FROM*1..30]->(x:Lesson)
WHERE c.id IN $from AND x.id IN $to
RETURN c.id AS start, x.id AS reached
LIMIT 1;
