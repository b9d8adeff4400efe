// The regression set: a lesson covers every successful episode that used it.
MATCH (e:Episode)-[:USED]->(l:Lesson)
WHERE e.outcome = 'success' AND ($everything OR e.id IN $ids OR l.id IN $ids)
MERGE (l)-[:COVERS]->(e);
