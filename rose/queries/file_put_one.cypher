// files_put for one file, merged by its key, `$path`, each column a parameter of its own (one
// row unwound from a list of structs costs the engine several times what plain parameters do).
MERGE (f:SourceFile {path: $path})
SET f.kind = $kind, f.scope = $scope, f.mtime_ns = $mtime_ns, f.size = $size, f.item = $item, f.error = $error;
