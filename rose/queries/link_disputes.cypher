MATCH (a:Lesson) WHERE $everything OR a.id IN $ids
UNWIND a.dispute_ids AS k
MATCH (b:Lesson {id: k})
MERGE (a)-[:DISPUTES]->(b);
