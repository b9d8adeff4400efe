// Descent restored claim p[2] of lesson p[1] during the episode ("lesson|claim" entries).
MATCH (e:Episode) WHERE $everything OR e.id IN $ids
UNWIND e.expanded AS x
WITH e, string_split(x, '|') AS p
MATCH (l:Lesson {id: p[1]})
MERGE (e)-[:EXPANDED {claim: p[2]}]->(l);
