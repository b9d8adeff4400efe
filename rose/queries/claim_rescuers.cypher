// The episodes whose failure these claims rescued.
MATCH (e:Episode)-[:RESCUED]->(c:Claim) WHERE c.id IN $ids
RETURN e.id AS src, c.id AS dst;
