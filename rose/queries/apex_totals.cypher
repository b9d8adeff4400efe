// How many apexes there are and what serving them all would cost, without fetching them.
MATCH (l:Lesson)
WHERE l.status IN ['active', 'disputed']
  AND NOT EXISTS { MATCH (p:Lesson)-[:DERIVED_FROM]->(l) WHERE p.status IN ['active', 'disputed'] }
RETURN count(l) AS apexes, coalesce(sum(l.tokens), 0) AS tokens;
