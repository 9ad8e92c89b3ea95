#!/bin/bash
# citus-check.sh: tessera tables as Citus shards, moved online.
#
# Needs Citus (13.x) built and installed for the PostgreSQL in $PGBIN (not
# part of the README's commands: Citus is not packaged for Debian; build it
# from its source with ./configure --without-libcurl && make && make
# install).  Starts a coordinator and two workers (ports 9701-9703, in a
# temporary directory), distributes a tessera table and its heap twin, and
# while two pgbench clients write to both in the same transactions:
# citus_move_shard_placement in its default mode and with force_logical
# (logical replication of tessera shards), then create_distributed_table_
# concurrently of a tessera table and citus_drain_node.  Fails unless the
# twins hold the same rows and every count is what was written.
set -euo pipefail
source "$(dirname "$0")/common.sh"
[ -f "$("$PGBIN/pg_config" --pkglibdir)/citus.so" ] || { echo "citus is not installed for $PGBIN" >&2; exit 2; }
D=$(mktemp -d /tmp/tessera-citus.XXXXXX)
chown postgres "$D"
nodes=(9701 9702 9703)
cleanup() {
	for p in "${nodes[@]}"; do stop_cluster "$D/$p"; done
	rm -rf "$D"
}
trap cleanup EXIT
for p in "${nodes[@]}"; do
	# a throwaway cluster as the tests make them, with Citus loaded first
	init_cluster "$D/$p" "$p"
	cat >>"$D/$p/data/postgresql.conf" <<CONF
shared_preload_libraries = 'citus,tessera'
wal_level = logical
max_replication_slots = 20
max_wal_senders = 20
max_worker_processes = 32
citus.node_conninfo = 'sslmode=disable'
CONF
	# (a setting some PostgreSQL builds have: which output plugins may be used)
	# (not piped into grep -q: with pipefail, postgres's SIGPIPE would fail the test)
	if grep -q '^output_plugin_libraries' <<<"$("$PGBIN/postgres" --describe-config 2>/dev/null)"; then
		echo "output_plugin_libraries = 'pgoutput, test_decoding, citus'" >>"$D/$p/data/postgresql.conf"
	fi
	start_cluster "$D/$p"
	psql -h "$D/$p" -p "$p" -U postgres -Xq -c "CREATE EXTENSION citus" -c "CREATE EXTENSION tessera"
done
q() { psql -h "$D/9701" -p 9701 -U postgres -XAtq -v ON_ERROR_STOP=1 "$@"; }
q <<'SQL'
SELECT citus_set_coordinator_host('localhost', 9701);
SELECT citus_add_node('localhost', 9702);
SELECT citus_add_node('localhost', 9703);
SET citus.shard_count = 4;
CREATE TABLE t (id bigint PRIMARY KEY, v text, n numeric) USING tessera;
CREATE TABLE h (id bigint PRIMARY KEY, v text, n numeric);
SELECT create_distributed_table('t', 'id');
SELECT create_distributed_table('h', 'id');
INSERT INTO t SELECT i, md5(i::text), i / 7.0 FROM generate_series(1, 200000) i;
INSERT INTO h SELECT i, md5(i::text), i / 7.0 FROM generate_series(1, 200000) i;
SQL
cat >"$D/writers.sql" <<'SQL'
\set id random(1000001, 1100000)
\set u random(1, 200000)
BEGIN;
INSERT INTO t VALUES (:id, 'w', 1) ON CONFLICT (id) DO UPDATE SET n = t.n + 1;
INSERT INTO h VALUES (:id, 'w', 1) ON CONFLICT (id) DO UPDATE SET n = h.n + 1;
UPDATE t SET n = n + 1 WHERE id = :u;
UPDATE h SET n = n + 1 WHERE id = :u;
DELETE FROM t WHERE id = :u + 1 AND n > 100000;
DELETE FROM h WHERE id = :u + 1 AND n > 100000;
COMMIT;
SQL
chmod 644 "$D/writers.sql"
"$PGBIN/pgbench" -n -c 2 -T 15 -f "$D/writers.sql" -h "$D/9701" -p 9701 -U postgres postgres >"$D/writers.log" 2>&1 &
writers=$!
sleep 1
moving="SELECT shardid FROM pg_dist_shard_placement WHERE nodeport = 9702 AND shardid IN
	(SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 't'::regclass) ORDER BY 1 LIMIT 1"
echo "moving shard $(q -c "$moving") of t: default mode"
q -c "SELECT citus_move_shard_placement(($moving), 'localhost', 9702, 'localhost', 9703)" >/dev/null
echo "moving shard $(q -c "$moving") of t: force_logical"
q -c "SELECT citus_move_shard_placement(($moving), 'localhost', 9702, 'localhost', 9703, shard_transfer_mode := 'force_logical')" >/dev/null
wait $writers
grep -E "^number of failed|^tps" "$D/writers.log"
diff=$(q -c "SELECT count(*) FROM (SELECT * FROM t EXCEPT ALL SELECT * FROM h UNION ALL SELECT * FROM h EXCEPT ALL SELECT * FROM t) d")
written=$(q -c "SELECT count(*) FROM t WHERE id > 1000000")
echo "rows written during the moves: $written; rows that differ between t (tessera) and h (heap): $diff"
q <<'SQL'
CREATE TABLE c (id bigint PRIMARY KEY, v text) USING tessera;
INSERT INTO c SELECT i, 'c' || i FROM generate_series(1, 50000) i;
SELECT create_distributed_table_concurrently('c', 'id');
SELECT citus_drain_node('localhost', 9702);
SQL
c=$(q -c "SELECT count(*) || ' ' || sum(id) FROM c")
shards=$(q -c "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'c'::regclass")
diff2=$(q -c "SELECT count(*) FROM (SELECT * FROM t EXCEPT ALL SELECT * FROM h UNION ALL SELECT * FROM h EXCEPT ALL SELECT * FROM t) d")
am=$(q -c "SELECT result FROM run_command_on_workers(\$\$SELECT string_agg(DISTINCT a.amname, ',') FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname ~ '^(t|c)_[0-9]+\$'\$\$) WHERE nodeport = 9703")
echo "c after create_distributed_table_concurrently: $c in $shards shards; after draining 9702: t vs h differ in $diff2 rows; shards of t and c on 9703: $am"
[ "$diff" = 0 ] && [ "$diff2" = 0 ] && [ "$written" -gt 0 ] && [ "$c" = "50000 1250025000" ] &&
	[ "$shards" -gt 1 ] && [ "$am" = tessera ] || { echo "citus check FAILED"; exit 1; }
echo "citus check passed"
