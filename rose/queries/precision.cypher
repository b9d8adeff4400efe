// Precision's counts: each lesson an episode served, by the prompt's recall mode and the
// lesson's scope, and how many of them it used (used and not served is not counted).
MATCH (e:Episode)-[:SERVED]->(l:Lesson)
OPTIONAL MATCH (e)-[u:USED]->(l)
RETURN e.recall AS recall, l.scope AS scope, count(*) AS served, count(u) AS used;
