MATCH (c:Claim) WHERE $everything OR c.owner IN $ids
MATCH (l:Lesson {id: c.owner})
MERGE (l)-[:DROPPED]->(c);
