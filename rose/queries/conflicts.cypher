// Lessons holding an unresolved contradiction, with the lessons they dispute.
MATCH (l:Lesson) WHERE l.conflict <> '' OR l.status = 'disputed'
OPTIONAL MATCH (l)-[:DISPUTES]-(o:Lesson)
RETURN l.id AS id, l.title AS title, l.conflict AS question, l.scope AS scope, collect(DISTINCT o.id) AS against
ORDER BY id;
