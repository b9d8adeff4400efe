// The status of each lesson derived from this one: it is an apex when it is servable and none
// of these is (see apexes_among, the batch form).
MATCH (p:Lesson)-[:DERIVED_FROM]->(l:Lesson {id: $id})
RETURN p.status AS status;
