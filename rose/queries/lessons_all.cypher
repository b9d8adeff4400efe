MATCH (l:Lesson)
RETURN l.id AS id, l.scope AS scope, l.family AS family, l.title AS title, l.gist AS gist, l.provisional AS provisional, l.level AS level, l.status AS status, l.origin AS origin, l.provenance AS provenance, l.held AS held, l.accepted AS accepted, l.tokens AS tokens, l.successes AS successes, l.failures AS failures, l.updated AS updated, l.path AS path
ORDER BY family, level DESC, id;
