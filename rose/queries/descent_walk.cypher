// A node and everything below it with the links descent walks: each lesson's level and children.
MATCH (r:Lesson {id: $id})-[:DERIVED_FROM*0..30]->(d:Lesson)
RETURN DISTINCT d.id AS id, d.level AS level, d.derived_ids AS derived, d.patches AS patches,
       d.patch_rescues AS patch_rescues
ORDER BY id;
