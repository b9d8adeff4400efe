// The claims one lesson drops, as lessons_shape gives them.
MATCH (l:Lesson {id: $id})-[:DROPPED]->(c:Claim)
RETURN c.id AS claim, c.pos AS pos, c.claim AS text, c.kind AS kind, c.holder AS holder, c.tokens AS tokens;
