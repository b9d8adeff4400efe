// Every lesson's id, to shorten ids in the injected block and resolve prefixes.
MATCH (l:Lesson) RETURN l.id AS id ORDER BY id;
