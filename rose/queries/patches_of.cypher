// The patches these lessons carry, with the successful uses each was served on ("patch|n").
MATCH (l:Lesson) WHERE l.id IN $ids
RETURN l.id AS id, l.patches AS patches, l.patch_rescues AS patch_rescues
ORDER BY id;
