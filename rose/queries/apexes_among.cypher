// Which of these lessons are apexes (servable, with no servable parent): see apexes.
UNWIND $ids AS i
MATCH (l:Lesson {id: i})
WHERE l.status IN ['active', 'disputed']
  AND NOT EXISTS { MATCH (p:Lesson)-[:DERIVED_FROM]->(l) WHERE p.status IN ['active', 'disputed'] }
RETURN l.id AS id;
