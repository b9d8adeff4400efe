// Patch p[2] of lesson p[1] was served on the episode's successful use of it ("lesson|patch").
MATCH (e:Episode) WHERE $everything OR e.id IN $ids
UNWIND e.patch_rescued AS x
WITH e, string_split(x, '|') AS p
MATCH (l:Lesson {id: p[1]})
MERGE (e)-[:PATCH_RESCUED {patch: p[2]}]->(l);
