MATCH (b:Lesson)
UNWIND b.parent_ids AS k
WITH b, k WHERE $everything OR b.id IN $ids OR k IN $ids
MATCH (a:Lesson {id: k})
MERGE (a)-[:DERIVED_FROM]->(b);
