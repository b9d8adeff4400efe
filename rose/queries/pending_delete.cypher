MATCH (p:Pending) WHERE p.src IN $ids OR p.dst IN $ids DELETE p;
