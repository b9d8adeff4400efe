// The rows of these files (a sync reads only the files that changed).
MATCH (f:SourceFile) WHERE f.path IN $paths
RETURN f.path AS path, f.kind AS kind, f.scope AS scope, f.mtime_ns AS mtime_ns, f.size AS size, f.item AS item, f.error AS error;
