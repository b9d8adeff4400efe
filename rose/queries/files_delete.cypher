MATCH (f:SourceFile) WHERE f.path IN $paths DELETE f;
