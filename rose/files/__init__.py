"""The files a store is made of: where each lives (`layout`), what changed since the last
look (`scan`), and reading and writing lesson and episode files (`nodefile`). Beneath both
the store and the graph, which sync from these."""
