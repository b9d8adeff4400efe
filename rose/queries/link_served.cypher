MATCH (e:Episode) WHERE $everything OR e.id IN $ids
UNWIND e.served_ids AS k
MATCH (l:Lesson {id: k})
MERGE (e)-[:SERVED]->(l);
