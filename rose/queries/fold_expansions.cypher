// How many times descent restored detail this lesson had dropped.
MATCH (l:Lesson) WHERE $everything OR l.id IN $ids
OPTIONAL MATCH (:Episode)-[x:EXPANDED]->(l)
WITH l, count(x) AS n
SET l.expansions = n;
