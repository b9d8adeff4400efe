// Where one lesson lives, found by its key: what a write needs of a lesson it rewrites (the
// engine reads each column a statement returns: two, not lesson_get_one's thirty).
MATCH (l:Lesson {id: $id})
RETURN l.scope AS scope, l.path AS path;
