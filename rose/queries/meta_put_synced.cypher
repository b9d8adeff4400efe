// What a sync records for the next one, in one statement with plain parameters (meta_put
// unwinds a list of structs, several times the cost): the files' fingerprint, the broken
// files, and the derived work still to do.
MERGE (a:Meta {key: 'files'}) SET a.value = $files
MERGE (b:Meta {key: 'file_errors'}) SET b.value = $file_errors
MERGE (d:Meta {key: 'derive'}) SET d.value = $derive;
