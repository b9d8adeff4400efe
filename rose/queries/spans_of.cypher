// Load-bearing spans reported by the episodes that used each lesson ("lesson|span" entries).
MATCH (e:Episode)-[:USED]->(l:Lesson) WHERE $everything OR l.id IN $ids
RETURN l.id AS id, e.load_bearing AS spans, e.time AS time
ORDER BY id, time, e.id;
