// files_put for one row (`$rows` holds it), merged by its key, `$path`.
UNWIND $rows AS r
MERGE (f:SourceFile {path: $path})
SET f.kind = r.kind, f.scope = r.scope, f.mtime_ns = r.mtime_ns, f.size = r.size, f.item = r.item, f.error = r.error;
