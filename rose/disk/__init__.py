"""Writing files safely: atomic replaces, JSON lines and TOML."""
