MATCH (c:Correction) WHERE c.id IN $ids DELETE c;
