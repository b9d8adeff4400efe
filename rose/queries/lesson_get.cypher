MATCH (l:Lesson) WHERE l.id IN $ids
RETURN l AS lesson;
