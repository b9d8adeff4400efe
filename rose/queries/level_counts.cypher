MATCH (l:Lesson)
RETURN l.level AS level, l.status AS status, count(*) AS n
ORDER BY level, status;
