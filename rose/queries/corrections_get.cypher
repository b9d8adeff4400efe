// Which episode each of these corrections names.
MATCH (c:Correction) WHERE c.id IN $ids
RETURN c.id AS id, c.episode AS episode;
