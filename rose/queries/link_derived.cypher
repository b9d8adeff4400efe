MATCH (a:Lesson) WHERE $everything OR a.id IN $ids
UNWIND a.derived_ids AS k
MATCH (b:Lesson {id: k})
MERGE (a)-[:DERIVED_FROM]->(b);
