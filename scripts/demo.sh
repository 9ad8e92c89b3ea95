#!/usr/bin/env bash
# The README's main command: install what is missing, build and install
# tessera, start a throwaway cluster inside the repository (.pgdata/, port
# 5477, localhost and a socket in .pgdata only), load the seed workload (a
# counter, a constant, a modulus) and the realistic one (random values, md5
# text, COPY from CSV) into heap and tessera tables, run their queries and
# point lookups and print them side by side.
#
# Usage: scripts/demo.sh [--pg 15|17|18] [--rows N] [any other bench.py run flag]
#        scripts/demo.sh [--pg N] stop        stop the cluster
#   --pg 17/18 run it in a Debian root with that version (scripts/pg-root.sh),
#   on port 5517/5518, the cluster in that root's copy of the checkout.
# The cluster keeps running afterwards:  psql -h "$PWD/.pgdata" -p 5477 -U postgres
source "$(dirname "$0")/common.sh"

if [ "${1:-}" = "--pg" ]; then
	[ -n "${2:-}" ] || { echo "usage: scripts/demo.sh [--pg VERSION] ..." >&2; exit 2; }
	ver=$2
	shift 2
	run_in_pg_root "$ver" demo.sh "$@"
fi

DIR="$REPO/.pgdata"
PORT=5477
[ "$PGVER" = 15 ] || PORT=$((5500 + PGVER))

if [ "${1:-}" = stop ]; then
	stop_cluster "$DIR"
	exit 0
fi

install_deps
build_and_install

if [ ! -f "$DIR/data/PG_VERSION" ]; then
	log "creating a cluster in $DIR"
	init_cluster "$DIR" "$PORT"
	# room for fair loads: both sides get the same settings
	cat >>"$DIR/data/postgresql.conf" <<CONF
shared_buffers = 2GB
work_mem = 64MB
maintenance_work_mem = 1GB
max_wal_size = 20GB
checkpoint_timeout = 30min
max_parallel_workers_per_gather = 2
CONF
fi
# (re)start, so that the server runs the tessera library just installed
if as_postgres "$PGBIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
	log "restarting the cluster on port $PORT"
	stop_cluster "$DIR"
else
	log "starting the cluster on port $PORT"
fi
reserve_huge_pages "$DIR/data"
start_cluster "$DIR"

log "installing the benchmark's Python packages"
"$REPO/bench/setup.sh"

log "running the seed and realistic workloads (heap vs tessera)"
export TESSERA_BENCH_DSN="host=$DIR port=$PORT dbname=postgres user=postgres"
exec python3 "$REPO/bench/bench.py" run --workload seed,realistic "$@"
