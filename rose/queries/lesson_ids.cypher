// Which of these lessons exist. Looked up by key: under kuzu 0.11.3 a scan filtered with
// `l.id IN $ids` can read a long id back garbled after updates in the same open.
UNWIND $ids AS i
MATCH (l:Lesson {id: i})
RETURN DISTINCT l.id AS id;
