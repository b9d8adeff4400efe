// Dropped claim p[2] of lesson p[1] rescued the episode's failure ("lesson|claim" entries).
MATCH (e:Episode) WHERE $everything OR e.id IN $ids
UNWIND e.rescued AS x
WITH e, string_split(x, '|') AS p
MATCH (c:Claim {id: p[2]})
MERGE (e)-[:RESCUED]->(c);
