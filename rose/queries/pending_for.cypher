// What named these lessons or claims before they existed: to be linked now.
MATCH (p:Pending) WHERE p.dst IN $ids
RETURN DISTINCT p.src AS src;
