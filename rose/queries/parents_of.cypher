// The lessons one step above a lesson (toward abstraction), whichever side names the link.
MATCH (p:Lesson)-[:DERIVED_FROM]->(c:Lesson {id: $id})
RETURN p.id AS id
ORDER BY id;
