// Every lesson's own link lists, as its file states them (for checking a write for cycles).
MATCH (l:Lesson)
RETURN l.id AS id, l.derived_ids AS derived, l.parent_ids AS parents;
