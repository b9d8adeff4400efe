// Which of these lessons exist.
MATCH (l:Lesson) WHERE l.id IN $ids RETURN l.id AS id;
