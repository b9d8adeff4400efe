UNWIND $rows AS r
MATCH (c:Claim {id: r.id})
SET c.pos = r.pos, c.claim = r.claim, c.kind = r.kind, c.holder = r.holder, c.tokens = r.tokens;
