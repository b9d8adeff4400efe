// Claims dropped anywhere in a node's subtree, each with the lesson that still holds it.
MATCH (r:Lesson {id: $id})-[:DERIVED_FROM*0..30]->(d:Lesson)-[:DROPPED]->(c:Claim)
RETURN DISTINCT c.id AS id, c.claim AS claim, c.kind AS kind, c.holder AS holder, d.id AS dropped_by, d.level AS level
ORDER BY level DESC, id;
