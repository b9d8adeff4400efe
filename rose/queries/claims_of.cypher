MATCH (l:Lesson)-[:DROPPED]->(c:Claim) WHERE l.id IN $ids
RETURN c.id AS id, c.owner AS owner, c.pos AS pos, c.claim AS claim, c.kind AS kind, c.holder AS holder, c.rescues AS rescues
ORDER BY owner, pos;
