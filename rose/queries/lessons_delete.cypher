MATCH (l:Lesson) WHERE l.id IN $ids
OPTIONAL MATCH (l)-[:DROPPED]->(c:Claim)
OPTIONAL MATCH (t:LessonText {id: l.id})
DETACH DELETE c, t, l;
