// How many failures the detail this lesson holds has rescued, plus the successful uses its
// patches were served on (only the patches it still carries): descent's prior.
MATCH (l:Lesson) WHERE $everything OR l.id IN $ids
OPTIONAL MATCH (:Episode)-[r:RESCUED]->(:Claim)-[:HELD_BY]->(l)
WITH l, count(r) AS claims
OPTIONAL MATCH (:Episode)-[p:PATCH_RESCUED]->(l) WHERE p.patch IN l.patch_ids
WITH l, claims, count(p) AS patches
SET l.rescues = claims + patches;
