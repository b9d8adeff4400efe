UNWIND $rows AS r
MERGE (m:Meta {key: r.key}) SET m.value = r.value;
