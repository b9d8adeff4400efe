// How many failures each dropped claim rescued.
MATCH (c:Claim) WHERE $everything OR c.owner IN $ids OR c.holder IN $ids
OPTIONAL MATCH (e:Episode)-[:RESCUED]->(c)
WITH c, count(e) AS n
SET c.rescues = n;
