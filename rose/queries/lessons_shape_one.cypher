// lessons_shape for one lesson, found by its key (the batch form scans every lesson), with
// every column an update writes, so that an update writes only what moved (lesson_rebody_one);
// its dropped claims come from claims_dropped_one.
MATCH (l:Lesson {id: $id})
RETURN l.id AS id, l.status AS status, l.tokens AS lesson_tokens, l.derived_ids AS derived_ids, l.parent_ids AS parent_ids,
       l.dispute_ids AS dispute_ids, l.patch_ids AS patch_ids, l.scope AS scope, l.family AS family, l.title AS title,
       l.gist AS gist, l.provisional AS provisional, l.level AS level, l.origin AS origin, l.provenance AS provenance,
       l.held AS held, l.accepted AS accepted, l.conflict AS conflict,
       l.gist_tokens AS gist_tokens, l.preserve AS preserve, l.patches AS patches, l.created AS created, l.path AS path;
