"""The graph engine behind the store: schema, locked opens, named queries, sync from files."""
