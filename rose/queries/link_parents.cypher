MATCH (b:Lesson) WHERE $everything OR b.id IN $ids
UNWIND b.parent_ids AS k
MATCH (a:Lesson {id: k})
MERGE (a)-[:DERIVED_FROM]->(b);
