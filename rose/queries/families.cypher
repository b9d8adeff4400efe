MATCH (l:Lesson)
RETURN l.family AS family, count(*) AS lessons, max(l.level) AS max_level, min(l.created) AS first,
       count(CASE WHEN l.status IN ['active', 'disputed'] THEN 1 END) AS servable
ORDER BY family;
