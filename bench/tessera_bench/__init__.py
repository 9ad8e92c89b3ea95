"""tessera's benchmark suite: heap vs tessera (vs DuckDB) in one run."""
