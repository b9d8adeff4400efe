MATCH (c:Claim) WHERE $everything OR c.owner IN $ids OR c.holder IN $ids
MATCH (h:Lesson {id: c.holder})
MERGE (c)-[:HELD_BY]->(h);
