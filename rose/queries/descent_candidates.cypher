// Dropped claims below a node with what descent ranks them by: the holder's rescue record and cost.
MATCH (r:Lesson {id: $id})-[:DERIVED_FROM*0..30]->(d:Lesson)-[:DROPPED]->(c:Claim)
WITH DISTINCT c
OPTIONAL MATCH (c)-[:HELD_BY]->(h:Lesson)
RETURN c.id AS id, c.claim AS claim, c.kind AS kind, c.holder AS holder, c.tokens AS tokens,
       h.id IS NOT NULL AS holder_exists, coalesce(h.rescues, 0) AS rescues, coalesce(h.expansions, 0) AS expansions,
       coalesce(h.tokens, 0) AS holder_tokens, coalesce(h.title, '') AS holder_title
ORDER BY id;
