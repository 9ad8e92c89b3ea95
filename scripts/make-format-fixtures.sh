#!/usr/bin/env bash
# scripts/make-format-fixtures.sh: (re)create the stored fixtures of older
# on-disk formats under test/fixtures/formats/, read by
# test/t/014_old_formats.pl.
#
# For each older format, the last commit that wrote it is built and
# installed into the host's PostgreSQL 15, a throwaway cluster gets tables
# written by it, and what a table is on disk is kept: its main fork (the
# metapage, stripe pages, row state pages), its rows of
# tessera_internal.stripe and tessera_internal.delta, its definition, and
# digests of its rows as that build returned them.  Afterwards the current
# checkout is built and installed again.
#
# Run as root on the host (PostgreSQL 15), from a checkout; only needed when
# a new format version makes another one "older".  With names (dir-v4 ...)
# only those fixtures are made; the others stay as they are.  The fixtures are data,
# not code: the test must keep reading them unchanged.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
PGBIN=/usr/lib/postgresql/15/bin
OUTBASE="$REPO/test/fixtures/formats"
WORK=${TMPDIR:-/tmp}/tessera-fixtures
PORT=5611
log() { printf '==> %s\n' "$*" >&2; }
as_postgres() { runuser -u postgres -- "$@"; }

# name  commit  what it writes
FORMATS=(
	"dir-v1-v2 c7d1e2d directory versions 1 (plain) and 2 (folded dead rows), CRC-32C chunk checksums"
	"dir-v3 dd6de8f directory version 3, XXH3 chunk checksums, unframed chunks"
	"dir-v4 c82407e directory version 4, framed chunks, one directory checksum, chunks row group by row group"
)

# The tables: every kind of column the encodings treat differently, small
# stripes and row groups so that a few thousand rows make several of each,
# every codec.  Values are computed from the row number, never random().
TABLE_DEFS=(
	"fx_zstd tessera_compression = 'zstd'"
	"fx_lz4 tessera_compression = 'lz4'"
	"fx_none tessera_compression = 'none'"
)

# what a table is: rows as text, in order (TimeZone UTC)
digest_sql() {
	local t=$1
	cat <<SQL
SELECT count(*) AS rows, coalesce(sum(id), 0) AS ids,
	md5(string_agg(x::text, E'\n' ORDER BY id)) AS digest FROM $t x;
SQL
}

gen_sql() {
	local t=$1 opts=$2
	cat <<SQL
CREATE TABLE $t (
	id int, big bigint, amount numeric(12,2), wide numeric, note text, cat text,
	ts timestamptz, d date, flag bool, f8 float8, maybe int, raw bytea
) USING tessera WITH ($opts, tessera_stripe_row_limit = 4000,
	tessera_row_group_row_limit = 1000, tessera_delta_row_limit = 100);
-- stripes: 1..12000 in three, 12001..15000 in one
INSERT INTO $t SELECT i, hashint4(i)::bigint * 1000003, (hashint4(i + 7) % 100000) / 100.0,
	CASE WHEN i % 17 = 0 THEN NULL ELSE (i::numeric ^ 3) / 7 END,
	CASE WHEN i % 10 = 0 THEN md5(i::text) ELSE 'n' || (i % 100) END,
	(ARRAY['alpha','beta','gamma','delta'])[1 + i % 4],
	timestamptz '2024-01-01 00:00:00+00' + i * interval '37 seconds',
	date '2020-01-01' + i % 1000, i % 3 = 0, i / 7.0,
	CASE WHEN i % 5 = 0 THEN NULL ELSE i % 11 END,
	CASE WHEN i % 50 = 0 THEN decode(md5(i::text), 'hex') END
FROM generate_series(1, 12000) i;
INSERT INTO $t SELECT i, -i, i / 4.0, i, 'second ' || i, 'omega', NULL, NULL, NULL, NULL, i, NULL
FROM generate_series(12001, 15000) i;
-- scattered deletes (row states), most of the second stripe (a fold)
DELETE FROM $t WHERE id % 13 = 0;
DELETE FROM $t WHERE id BETWEEN 4001 AND 7900;
-- updates: new versions in a stripe of their own
UPDATE $t SET note = 'updated ' || id, amount = amount + 1 WHERE id % 101 = 1 AND id > 100;
SQL
}

# after VACUUM: small writes into the delta (their own stripes in the catalog)
delta_sql() {
	local t=$1
	for i in 1 2 3 4 5; do
		echo "INSERT INTO $t VALUES ($((20000 + i)), $i, $i.5, NULL, 'delta $i', 'zeta', '2025-06-0$i 12:00+00', '2025-06-0$i', true, $i.25, NULL, '\\x0$i');"
	done
}

make_one() {
	local name=$1 rev=$2
	local src="$WORK/src-$name" data="$WORK/data-$name" out="$OUTBASE/$name"
	log "$name: building $rev"
	rm -rf "$src"
	git -C "$REPO" worktree remove --force "$src" 2>/dev/null || true
	git -C "$REPO" worktree add --detach "$src" "$rev" >/dev/null
	make -C "$src" -s -j"$(nproc)" PG_CONFIG=$PGBIN/pg_config >/dev/null
	make -C "$src" -s install PG_CONFIG=$PGBIN/pg_config >/dev/null

	log "$name: writing tables"
	rm -rf "$data"
	mkdir -p "$data"
	chown postgres "$data"
	as_postgres $PGBIN/initdb -D "$data/pg" -A trust -U postgres --no-sync >/dev/null
	cat >>"$data/pg/postgresql.conf" <<CONF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$data'
shared_preload_libraries = 'tessera'
tessera.autocompact_stripes = 0
autovacuum = off
TimeZone = 'UTC'
CONF
	as_postgres $PGBIN/pg_ctl -D "$data/pg" -l "$data/log" start -w >/dev/null
	local psql=(as_postgres $PGBIN/psql -X -q -v ON_ERROR_STOP=1 -h "$data" -p $PORT -U postgres -d postgres)
	"${psql[@]}" -c "CREATE EXTENSION tessera"
	rm -rf "$out"
	mkdir -p "$out"
	{
		echo "# written by commit $rev ($(git -C "$REPO" log -1 --format=%s "$rev" | cut -c1-72))"
		echo "# $(printf '%s\n' "${FORMATS[@]}" | awk -v n="$name" '$1 == n { $1 = ""; $2 = ""; sub(/^ +/, ""); print }')"
		echo "# extension version: $("${psql[@]}" -At -c "SELECT extversion FROM pg_extension WHERE extname = 'tessera'")"
	} >"$out/README"
	local def t opts
	for def in "${TABLE_DEFS[@]}"; do
		t=${def%% *}
		opts=${def#* }
		gen_sql "$t" "$opts" | "${psql[@]}"
	done
	"${psql[@]}" -c "VACUUM" -c "VACUUM FREEZE"
	for def in "${TABLE_DEFS[@]}"; do
		t=${def%% *}
		delta_sql "$t" | "${psql[@]}"
		# the definition as the test replays it
		gen_sql "$t" "${def#* }" | sed -n '/^CREATE TABLE/,/;$/p' >"$out/$t.sql"
		"${psql[@]}" -At -F ' ' -c "$(digest_sql "$t")" >"$out/$t.digest"
		"${psql[@]}" -c "CHECKPOINT"
		# the storage id, from the metapage (TesseraMetaPageData after the
		# page header: magic, format_version, storage_id)
		local sid
		sid=$(od -An -t u8 -j 32 -N 8 "$data/pg/$("${psql[@]}" -At -c "SELECT pg_relation_filepath('$t')")" | tr -d ' ')
		"${psql[@]}" -c "COPY (SELECT * FROM tessera_internal.stripe WHERE storage_id = $sid ORDER BY first_row) TO STDOUT" >"$out/$t.stripe"
		"${psql[@]}" -c "COPY (SELECT * FROM tessera_internal.delta WHERE storage_id = $sid ORDER BY stripe_id) TO STDOUT" >"$out/$t.delta"
		"${psql[@]}" -At -c "SELECT pg_relation_filepath('$t')" >"$data/$t.path"
		"${psql[@]}" -At -c "SELECT count(*) FILTER (WHERE in_delta), count(*) FROM tessera.stripe_info('$t')" >"$data/$t.stripes"
		log "$name: $t storage $sid, delta/all stripes $(cat "$data/$t.stripes"), $(cat "$out/$t.digest")"
	done
	"${psql[@]}" -c "CHECKPOINT"
	as_postgres $PGBIN/pg_ctl -D "$data/pg" stop -w >/dev/null
	for def in "${TABLE_DEFS[@]}"; do
		t=${def%% *}
		# the main fork only: tessera writes no other fork for a logged table
		gzip -9 -n -c "$data/pg/$(cat "$data/$t.path")" >"$out/$t.main.gz"
	done
	git -C "$REPO" worktree remove --force "$src"
}

mkdir -p "$WORK"
WANT=("$@")
for f in "${FORMATS[@]}"; do
	set -- $f
	if [ ${#WANT[@]} -eq 0 ] || printf '%s\n' "${WANT[@]}" | grep -qx "$1"; then
		make_one "$1" "$2"
	fi
done
log "installing the current checkout again"
make -C "$REPO" -s -j"$(nproc)" PG_CONFIG=$PGBIN/pg_config >/dev/null
make -C "$REPO" -s install PG_CONFIG=$PGBIN/pg_config >/dev/null
du -sh "$OUTBASE"/*
