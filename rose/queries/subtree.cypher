// A node and everything below it (toward detail), each once even through diamonds.
MATCH (r:Lesson {id: $id})-[:DERIVED_FROM*0..30]->(d:Lesson)
RETURN DISTINCT d.id AS id, d.level AS level, d.title AS title, d.status AS status, d.tokens AS tokens
ORDER BY level DESC, id;
