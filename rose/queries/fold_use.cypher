// A lesson's record of use, folded from the episodes that used it (served alone scores nothing).
MATCH (l:Lesson) WHERE $everything OR l.id IN $ids
OPTIONAL MATCH (e:Episode)-[:USED]->(l)
WITH l, count(e) AS n,
     count(CASE WHEN e.outcome = 'success' THEN 1 END) AS s,
     count(CASE WHEN e.outcome = 'failure' THEN 1 END) AS f,
     max(e.time) AS last,
     collect(CASE WHEN e.outcome = 'success' THEN e.id END) AS covered
SET l.attempts = n, l.successes = s, l.failures = f, l.last_used = coalesce(last, ''), l.covers = covered;
