// How many successful uses each patch a lesson carries was served on ("patch|n" entries).
MATCH (l:Lesson) WHERE $everything OR l.id IN $ids
OPTIONAL MATCH (:Episode)-[p:PATCH_RESCUED]->(l) WHERE p.patch IN l.patch_ids
WITH l, p.patch AS patch, count(p) AS n
WITH l, collect(CASE WHEN patch IS NOT NULL THEN patch + '|' + CAST(n AS STRING) END) AS counts
SET l.patch_rescues = counts;
