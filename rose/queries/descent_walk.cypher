// A node and everything below it with the links descent walks: each lesson's level and
// children, and what it carries (body, patches) so descent never offers what it holds.
MATCH (r:Lesson {id: $id})-[:DERIVED_FROM*0..30]->(d:Lesson)
WITH DISTINCT d
OPTIONAL MATCH (t:LessonText {id: d.id})
RETURN d.id AS id, d.level AS level, d.derived_ids AS derived, coalesce(t.body, '') AS body,
       d.patches AS patches, d.patch_rescues AS patch_rescues
ORDER BY id;
