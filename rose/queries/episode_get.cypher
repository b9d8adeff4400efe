MATCH (e:Episode) WHERE e.id IN $ids
RETURN e AS episode;
