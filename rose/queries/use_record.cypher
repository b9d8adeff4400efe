// The episodes that used a lesson, newest first: their outcome and the rescues they name
// ("lesson|claim" entries), for the demotion rule's count of failures in a row.
MATCH (e:Episode)-[:USED]->(:Lesson {id: $id})
RETURN e.id AS id, e.outcome AS outcome, e.time AS time, e.rescued AS rescued,
       e.patch_rescued AS patch_rescued
ORDER BY time DESC, id DESC;
