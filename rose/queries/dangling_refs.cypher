// Lesson links that name a lesson the store does not have.
MATCH (a:Lesson)
UNWIND list_concat(a.derived_ids, a.parent_ids) AS k
OPTIONAL MATCH (b:Lesson {id: k})
WITH a, k, b WHERE b IS NULL
RETURN a.id AS id, a.path AS path, k AS missing
ORDER BY path, missing;
