// The lessons still holding these dropped claims.
MATCH (c:Claim)-[:HELD_BY]->(h:Lesson) WHERE c.id IN $ids
RETURN DISTINCT h.id AS id;
