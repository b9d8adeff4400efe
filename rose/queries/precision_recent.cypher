// Precision's counts over the $limit most recent episodes that served a lesson (newest by time,
// then turn within a session, then id, as use_record orders them): how many episodes that
// is, the lessons they served and how many of those they used (used and not served is not
// counted). No episode served anything: one row of zeros.
MATCH (e:Episode)-[:SERVED]->(:Lesson)
WITH DISTINCT e
ORDER BY e.time DESC, e.turn DESC, e.id DESC
LIMIT $limit
MATCH (e)-[:SERVED]->(l:Lesson)
OPTIONAL MATCH (e)-[u:USED]->(l)
RETURN count(DISTINCT e.id) AS episodes, count(l) AS served, count(u) AS used;
