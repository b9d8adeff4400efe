// What counterfactual attribution samples from: each lesson an attributed episode (one with
// a prompt that some source spoke for) served, whether it was attributed used there (as
// corrected), whether a check has corrected it there already, and the lesson's text.
MATCH (e:Episode)-[:SERVED]->(l:Lesson)
WHERE e.prompt <> '' AND size(e.attributed_by) > 0
OPTIONAL MATCH (t:LessonText {id: l.id})
OPTIONAL MATCH (e)-[u:USED]->(l)
WITH e, l, t, count(u) AS used
OPTIONAL MATCH (c:Correction) WHERE c.episode = e.id AND c.lesson = l.id
RETURN e.id AS episode, e.prompt AS prompt, l.id AS lesson, l.title AS title, l.gist AS gist,
       coalesce(t.body, '') AS body, used, count(c) AS corrected
ORDER BY episode, lesson;
