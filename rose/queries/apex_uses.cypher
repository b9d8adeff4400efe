// Merge evidence: each successful episode with the active apexes whose subtree holds a lesson
// it used. A use of a lesson since compressed or merged counts for the apex serving it now.
MATCH (a:Lesson)-[:DERIVED_FROM*0..30]->(x:Lesson)<-[:USED]-(e:Episode)
WHERE e.outcome = 'success' AND a.status = 'active'
  AND NOT EXISTS { MATCH (p:Lesson)-[:DERIVED_FROM]->(a) WHERE p.status IN ['active', 'disputed'] }
RETURN DISTINCT e.id AS episode, a.id AS apex, a.scope AS scope, x.id AS used
ORDER BY episode, apex, used;
