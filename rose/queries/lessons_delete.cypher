MATCH (l:Lesson) WHERE l.id IN $ids
OPTIONAL MATCH (l)-[:DROPPED]->(c:Claim)
DETACH DELETE c, l;
