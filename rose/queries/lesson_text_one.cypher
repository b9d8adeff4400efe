// The body of one lesson, found by its key (lesson_get_one gives the rest of it).
MATCH (t:LessonText {id: $id})
RETURN t.body AS body;
