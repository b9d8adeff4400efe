// Which files hold these ids: a changed file claiming an id another file holds is a duplicate.
MATCH (f:SourceFile) WHERE f.item IN $ids
RETURN f.item AS item, f.path AS path;
