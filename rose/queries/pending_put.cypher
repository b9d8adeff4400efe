// A lesson or episode names something (a lesson, a claim) the graph does not hold yet.
UNWIND $rows AS r
MERGE (p:Pending {id: r.src + '>' + r.dst})
SET p.src = r.src, p.dst = r.dst;
