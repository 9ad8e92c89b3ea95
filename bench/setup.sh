#!/usr/bin/env bash
# Install the benchmark's Python packages: psycopg (binary), matplotlib (and numpy),
# tpchgen-cli, and DuckDB when it installs (optional third column).
# Idempotent: quick when everything is present.  PYTHON picks the interpreter.
set -euo pipefail
py=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
need=()
$py -c 'import psycopg' 2>/dev/null || need+=("psycopg[binary]")
$py -c 'import matplotlib' 2>/dev/null || need+=(matplotlib)
$py -c 'import numpy' 2>/dev/null || need+=(numpy)      # comes with matplotlib; the clickbench generator uses it
command -v tpchgen-cli >/dev/null 2>&1 || need+=(tpchgen-cli)
if [ ${#need[@]} -gt 0 ]; then
	echo "bench: installing ${need[*]}"
	$py -m pip install -q "${need[@]}"
fi
command -v tpchgen-cli >/dev/null 2>&1 || { echo "bench: tpchgen-cli is not on PATH after installing it" >&2; exit 1; }
# DuckDB is optional: never fail for it
$py -c 'import duckdb' 2>/dev/null || $py -m pip install -q duckdb >/dev/null 2>&1 || true
echo "bench: python packages ready"
