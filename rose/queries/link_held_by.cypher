MATCH (c:Claim) WHERE $everything OR c.owner IN $ids
MATCH (h:Lesson {id: c.holder})
MERGE (c)-[:HELD_BY]->(h);
