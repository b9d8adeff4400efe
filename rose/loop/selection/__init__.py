"""Recall-time selection: the relevance walk over the DAG, families, routing rules and the
misses that teach them, pull, and packing the injected block."""
