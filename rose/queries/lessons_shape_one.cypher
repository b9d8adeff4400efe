// lessons_shape for one lesson, found by its key (the batch form scans every lesson); its
// dropped claims come from claims_dropped_one.
MATCH (l:Lesson {id: $id})
RETURN l.id AS id, l.status AS status, l.tokens AS lesson_tokens, l.derived_ids AS derived_ids, l.parent_ids AS parent_ids,
       l.dispute_ids AS dispute_ids, l.patch_ids AS patch_ids;
