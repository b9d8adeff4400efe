// Every lesson's words with its place and status, for plain word search (`rose search`).
MATCH (l:Lesson)
OPTIONAL MATCH (t:LessonText {id: l.id})
RETURN l.id AS id, l.scope AS scope, l.family AS family, l.title AS title, l.gist AS gist, l.level AS level, l.status AS status, l.held AS held, coalesce(t.body, '') AS body
ORDER BY family, level DESC, id;
