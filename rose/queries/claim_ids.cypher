// Which of these dropped claims exist.
MATCH (c:Claim) WHERE c.id IN $ids RETURN c.id AS id;
