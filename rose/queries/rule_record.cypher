// Each selection rule's record, from the episodes whose selection was given it: how many
// selections it took part in, how many lessons they served, and how many of those were used.
// (Counted per episode first: count(DISTINCT) beside count() of a relationship miscounts.)
MATCH (e:Episode)
UNWIND e.rule_ids AS rule
OPTIONAL MATCH (e)-[:SERVED]->(l:Lesson)
OPTIONAL MATCH (e)-[u:USED]->(l)
WITH rule, e, count(l) AS served, count(u) AS used
RETURN rule, count(e) AS selections, sum(served) AS served, sum(used) AS used;
