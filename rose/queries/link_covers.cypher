// The regression set: a lesson covers every successful episode that used it.
MATCH (e:Episode) WHERE ($everything OR e.id IN $ids) AND e.outcome = 'success'
MATCH (e)-[:USED]->(l:Lesson)
MERGE (l)-[:COVERS]->(e);
