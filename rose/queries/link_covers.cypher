MATCH (l:Lesson)
UNWIND l.covers AS k
WITH l, k WHERE $everything OR l.id IN $ids OR k IN $ids
MATCH (e:Episode {id: k})
MERGE (l)-[:COVERS]->(e);
