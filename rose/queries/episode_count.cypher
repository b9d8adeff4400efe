MATCH (e:Episode)
RETURN count(e) AS n, count(CASE WHEN e.outcome = 'success' THEN 1 END) AS successes;
