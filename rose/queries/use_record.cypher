// The episodes that used a lesson, newest first: their outcome and the rescues they name
// ("lesson|claim" entries), for the demotion rule's count of failures in a row. A session's
// units that share a time stamp (milliseconds) are in turn order, not in id order.
MATCH (e:Episode)-[:USED]->(:Lesson {id: $id})
RETURN e.id AS id, e.outcome AS outcome, e.time AS time, e.rescued AS rescued,
       e.patch_rescued AS patch_rescued
ORDER BY time DESC, e.turn DESC, id DESC;
