// Dropped claim p[2] of lesson p[1] rescued the episode's failure ("lesson|claim" entries).
MATCH (e:Episode)
UNWIND e.rescued AS x
WITH e, string_split(x, '|') AS p
WHERE $everything OR e.id IN $ids OR p[1] IN $ids
MATCH (c:Claim {id: p[2]})
MERGE (e)-[:RESCUED]->(c);
