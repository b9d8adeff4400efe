MATCH (a:Lesson)-[r:DISPUTES]->(b:Lesson)
WHERE a.id IN $ids AND NOT list_contains(a.dispute_ids, b.id)
DELETE r;
