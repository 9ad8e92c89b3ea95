#!/usr/bin/env bash
# Install the benchmark's Python packages (idempotent, quick when present).
set -euo pipefail
py=${PYTHON:-python3}
need=()
$py -c 'import psycopg' 2>/dev/null || need+=("psycopg[binary]")
$py -c 'import matplotlib' 2>/dev/null || need+=(matplotlib)
command -v tpchgen-cli >/dev/null 2>&1 || need+=(tpchgen-cli)
if [ ${#need[@]} -gt 0 ]; then
	$py -m pip install -q --disable-pip-version-check "${need[@]}"
fi
# DuckDB is an optional third column; never fail for it
$py -c 'import duckdb' 2>/dev/null || $py -m pip install -q --disable-pip-version-check duckdb >/dev/null 2>&1 || true
echo "bench: python packages ready"
