MATCH (c:Claim) WHERE c.id IN $ids DETACH DELETE c;
