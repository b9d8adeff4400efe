// Whatever names these lessons in its own lists (or whose claims they hold): what must link
// to them again if they come back.
MATCH (t:Lesson) WHERE t.id IN $ids
MATCH (t)-[:DERIVED_FROM|DISPUTES]-(x:Lesson) RETURN DISTINCT x.id AS src, t.id AS dst
UNION MATCH (t:Lesson) WHERE t.id IN $ids
MATCH (c:Claim)-[:HELD_BY]->(t) RETURN DISTINCT c.owner AS src, t.id AS dst
UNION MATCH (t:Lesson) WHERE t.id IN $ids
MATCH (e:Episode)-[:SERVED|USED|EXPANDED|PATCH_RESCUED]->(t) RETURN DISTINCT e.id AS src, t.id AS dst
UNION MATCH (t:Lesson) WHERE t.id IN $ids
MATCH (e:Episode)-[:RESCUED]->(:Claim)<-[:DROPPED]-(t) RETURN DISTINCT e.id AS src, t.id AS dst;
