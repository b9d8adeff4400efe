// How often two lessons were used together on work that succeeded (merge evidence).
MATCH (a:Lesson)<-[:USED]-(e:Episode)-[:USED]->(b:Lesson)
WHERE e.outcome = 'success' AND a.id < b.id
RETURN a.id AS a, b.id AS b, count(DISTINCT e) AS together
ORDER BY together DESC, a, b
LIMIT $limit;
