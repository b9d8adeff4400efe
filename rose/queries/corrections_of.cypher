// The checks' corrections of these episodes' attribution, oldest first (the latest wins).
MATCH (c:Correction) WHERE c.episode IN $ids
RETURN c.id AS id, c.episode AS episode, c.lesson AS lesson, c.used AS used, c.time AS time
ORDER BY time, id;
