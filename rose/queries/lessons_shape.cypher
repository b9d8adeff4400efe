// What an update of these lessons compares against: their lists and their dropped claims as
// the graph holds them (one row per claim; a lesson without claims gives one row, claim null).
MATCH (l:Lesson) WHERE l.id IN $ids
OPTIONAL MATCH (l)-[:DROPPED]->(c:Claim)
RETURN l.id AS id, l.status AS status, l.tokens AS lesson_tokens, l.derived_ids AS derived_ids, l.parent_ids AS parent_ids,
       l.dispute_ids AS dispute_ids, l.patch_ids AS patch_ids, c.id AS claim, c.pos AS pos,
       c.claim AS text, c.kind AS kind, c.holder AS holder, c.tokens AS tokens;
