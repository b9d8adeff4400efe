MATCH (e:Episode)
UNWIND e.used_ids AS k
WITH e, k WHERE $everything OR e.id IN $ids OR k IN $ids
MATCH (l:Lesson {id: k})
MERGE (e)-[:USED]->(l);
