// Each selection rule's record, from the episodes whose selection was given it: how many
// selections it took part in, how many lessons they served, how many of those were used,
// and how many lessons the work needed that it turned away (misses citing it).
// (Counted per episode first: count(DISTINCT) beside count() of a relationship miscounts.)
MATCH (e:Episode)
UNWIND e.rule_ids AS rule
OPTIONAL MATCH (e)-[:SERVED]->(l:Lesson)
OPTIONAL MATCH (e)-[u:USED]->(l)
WITH rule, e, count(l) AS served, count(u) AS used
RETURN rule, count(e) AS selections, sum(served) AS served, sum(used) AS used,
       sum(size(list_filter(coalesce(e.miss_rules, []), x -> x = rule))) AS misses;
