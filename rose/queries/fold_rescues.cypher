// How many failures the detail this lesson holds has rescued: descent's prior.
MATCH (l:Lesson) WHERE $everything OR l.id IN $ids
OPTIONAL MATCH (:Episode)-[r:RESCUED]->(:Claim)-[:HELD_BY]->(l)
WITH l, count(r) AS n
SET l.rescues = n;
