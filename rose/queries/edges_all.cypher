MATCH (a:Lesson)-[:DERIVED_FROM]->(b:Lesson)
RETURN a.id AS parent, b.id AS child;
