// Merge evidence when groups are counted by serving (`merge.together: served`): each
// successful episode with the active apexes whose subtree holds a lesson it was served, and
// each apex's family. A lesson since compressed or merged counts for the apex serving it now.
MATCH (a:Lesson)-[:DERIVED_FROM*0..30]->(x:Lesson)<-[:SERVED]-(e:Episode)
WHERE e.outcome = 'success' AND a.status = 'active'
  AND NOT EXISTS { MATCH (p:Lesson)-[:DERIVED_FROM]->(a) WHERE p.status IN ['active', 'disputed'] }
RETURN DISTINCT e.id AS episode, a.id AS apex, a.scope AS scope, a.family AS family
ORDER BY episode, apex;
