MATCH (a:Lesson)
UNWIND a.dispute_ids AS k
WITH a, k WHERE $everything OR a.id IN $ids OR k IN $ids
MATCH (b:Lesson {id: k})
MERGE (a)-[:DISPUTES]->(b);
