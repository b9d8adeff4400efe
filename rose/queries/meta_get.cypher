MATCH (m:Meta) RETURN m.key AS key, m.value AS value;
