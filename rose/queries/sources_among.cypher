// The level-0 lessons below each of $ids (toward detail), for the lessons compressed or
// merged from others: what `sources_of` reads one lesson at a time, in one statement.
MATCH (r:Lesson)-[:DERIVED_FROM*1..30]->(d:Lesson)
WHERE r.id IN $ids AND d.level = 0
RETURN r.id AS id, collect(DISTINCT d.id) AS sources;
