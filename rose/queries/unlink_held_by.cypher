// A kept claim whose holder changed: its old HELD_BY edge goes.
MATCH (c:Claim)-[r:HELD_BY]->(h:Lesson)
WHERE c.id IN $ids AND h.id <> c.holder
DELETE r;
