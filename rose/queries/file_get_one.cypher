// files_get for one file, found by its key (the batch form scans every file's row).
MATCH (f:SourceFile {path: $path})
RETURN f.path AS path, f.kind AS kind, f.scope AS scope, f.mtime_ns AS mtime_ns, f.size AS size, f.item AS item, f.error AS error;
