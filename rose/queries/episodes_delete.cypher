MATCH (e:Episode) WHERE e.id IN $ids DETACH DELETE e;
