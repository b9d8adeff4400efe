UNWIND $rows AS r
CREATE (c:Claim {id: r.id, owner: r.owner, pos: r.pos, claim: r.claim, kind: r.kind, holder: r.holder, tokens: r.tokens, rescues: 0});
