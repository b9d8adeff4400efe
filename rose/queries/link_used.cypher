MATCH (e:Episode) WHERE $everything OR e.id IN $ids
UNWIND e.used_ids AS k
MATCH (l:Lesson {id: k})
MERGE (e)-[:USED]->(l);
