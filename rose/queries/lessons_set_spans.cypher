UNWIND $rows AS r
MATCH (l:Lesson {id: r.id})
SET l.load_bearing = r.spans;
