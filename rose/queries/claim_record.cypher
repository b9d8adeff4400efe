// Descent's record of these claims on this lesson: how often descent restored each into it,
// and how many of those failures it rescued (an episode names the lesson with the claim).
UNWIND $ids AS cid
OPTIONAL MATCH (e:Episode)-[x:EXPANDED]->(:Lesson {id: $id}) WHERE x.claim = cid
WITH cid, count(DISTINCT e) AS tried
OPTIONAL MATCH (r:Episode)-[:RESCUED]->(:Claim {id: cid}) WHERE list_contains(r.rescued, $id + '|' + cid)
RETURN cid AS id, tried, count(DISTINCT r) AS rescued
ORDER BY id;
