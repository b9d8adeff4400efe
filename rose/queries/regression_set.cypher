// Episodes covered anywhere in a node's subtree: what a compression must still pass.
MATCH (r:Lesson {id: $id})-[:DERIVED_FROM*0..30]->(d:Lesson)-[:COVERS]->(e:Episode)
RETURN DISTINCT e.id AS id, e.prompt AS prompt, e.outcome AS outcome, e.accepted_summary AS accepted_summary
ORDER BY id;
