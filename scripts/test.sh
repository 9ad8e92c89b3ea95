#!/usr/bin/env bash
# The README's test command: install what is missing, build and install
# tessera, then run every suite against temporary clusters:
#   pg_regress (test/sql, test/expected, test/schedule)
#   isolation specs (test/isolation), each run on a tessera and a heap table
#     with the same expected output
#   TAP tests (test/t/*.pl): crash recovery, standby, WAL consistency,
#     corruption, dump/restore
#   the benchmark suite's own tests (bench/test_bench.py)
#   Parquet files written and read by pyarrow and DuckDB
#     (test/files/parquet_interop.py)
#   random workloads run on heap and tessera side by side
#     (test/random/heap_vs_tessera.py, fixed seeds)
#   PostgreSQL's own regression and isolation suites with tessera as the
#     default access method, compared with a heap run (scripts/pg-suites.sh)
#   the source tree's layering rules (scripts/check-layout.py)
# and print one line "N passed, N failed".  Exit status 1 if anything failed.
# (make installcheck runs the first three suites against a running server.)
#
# Usage: scripts/test.sh [--pg 15|17|18] [layout|regress|isolation|tap|bench|files|random|pg ...]
#   (default: all; --pg 17/18 run in a Debian root with that version, set up
#   once by scripts/pg-root.sh; "pg" runs that version's own suites)
source "$(dirname "$0")/common.sh"

if [ "${1:-}" = "--pg" ]; then
	[ -n "${2:-}" ] || { echo "usage: scripts/test.sh [--pg VERSION] [suite ...]" >&2; exit 2; }
	ver=$2
	shift 2
	run_in_pg_root "$ver" test.sh "$@"
fi

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
	suites=(layout regress isolation tap bench files random pg)
fi
want() { local s; for s in "${suites[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

install_deps
build_and_install

WORK=$(mktemp -d /tmp/tessera-test.XXXXXX)
chmod 755 "$WORK"
chown postgres "$WORK"
PORT=${TESSERA_TEST_PORT:-54391}
CLUSTER="$WORK/cluster"
PGXS_DIR=$(dirname "$("$PGBIN/pg_config" --pgxs)")/..
PASSED=0
FAILED=0
FAILURES=()

pass() { PASSED=$((PASSED + 1)); printf '  ok      %s\n' "$1"; }
fail() { FAILED=$((FAILED + 1)); FAILURES+=("$1"); printf '  FAILED  %s\n' "$1"; }

# count_results SUITE LOG: one pass/fail per test of a pg_regress run, in
# 15's format ("test name ... ok") or 16's TAP format ("ok 3 - name").
count_results() {
	local suite=$1 log=$2 line name n=0
	while read -r line; do
		case "$line" in
			"test "*)
				name=$(sed -E 's/^test ([^ ]+) +\.\.\. .*/\1/' <<<"$line")
				case "$line" in
					*"... ok"*) pass "$suite/$name" ;;
					*) fail "$suite/$name" ;;
				esac ;;
			"ok "* | "not ok "*)
				name=$(sed -E 's/^(not )?ok +[0-9]+ +[-+] +([^ ]+).*/\2/' <<<"$line")
				case "$line" in
					"ok "*) pass "$suite/$name" ;;
					*) fail "$suite/$name" ;;
				esac ;;
			*) continue ;;
		esac
		n=$((n + 1))
	done < <(grep -E '^(test |(not )?ok +[0-9]+ )' "$log")
	[ "$n" -gt 0 ] || { cat "$log"; fail "$suite (did not run)"; }
}

cleanup() {
	stop_cluster "$CLUSTER"
	if [ "$FAILED" -eq 0 ] && [ -z "${TESSERA_KEEP_TEST_DIR:-}" ]; then
		rm -rf "$WORK"
	else
		echo "test output kept in $WORK" >&2
	fi
}
trap cleanup EXIT

if want layout; then
	log "source layout"
	if (cd "$REPO" && python3 scripts/check-layout.py >"$WORK/layout.log" 2>&1); then
		pass "layout/check-layout"
	else
		fail "layout/check-layout"
		sed 's/^/      /' "$WORK/layout.log"
	fi
fi

log "starting a test cluster on port $PORT"
init_cluster "$CLUSTER" "$PORT"
# logical: every test also writes the rows tessera logs for logical
# decoding (tableam/logical.c), and the bench's logical workload measures
grep -q '^wal_level' "$CLUSTER/data/postgresql.conf" ||
	echo "wal_level = logical" >>"$CLUSTER/data/postgresql.conf"
start_cluster "$CLUSTER"

if want regress; then
	log "pg_regress"
	# every test file must be in the schedule, and every scheduled one exist
	missing=0
	for f in "$REPO"/test/sql/*.sql; do
		n=$(basename "$f" .sql)
		grep -qE "^test:.*\b$n\b" "$REPO/test/schedule" || { echo "  test/sql/$n.sql is not in test/schedule"; missing=1; }
		[ -f "$REPO/test/expected/$n.out" ] || { echo "  test/expected/$n.out is missing"; missing=1; }
	done
	if [ "$missing" = 0 ]; then pass "regress/schedule-complete"; else fail "regress/schedule-complete"; fi
	mkdir -p "$WORK/regress" && chown postgres "$WORK/regress"
	as_postgres "$PGXS_DIR/test/regress/pg_regress" \
		--inputdir="$REPO/test" --outputdir="$WORK/regress" \
		--bindir="$PGBIN" --host="$CLUSTER" --port="$PORT" --user=postgres \
		--dbname=tessera_regression --schedule="$REPO/test/schedule" \
		>"$WORK/regress/run.log" 2>&1 || true
	count_results regress "$WORK/regress/run.log"
	[ -f "$WORK/regress/regression.diffs" ] && [ -s "$WORK/regress/regression.diffs" ] &&
		echo "  diffs: $WORK/regress/regression.diffs" >&2
fi

if want isolation; then
	log "isolation specs (tessera and heap)"
	iso="$WORK/isolation"
	mkdir -p "$iso/specs" "$iso/expected" "$iso/out"
	names=()
	for spec in "$REPO"/test/isolation/specs/*.spec; do
		n=$(basename "$spec" .spec)
		cp "$spec" "$iso/specs/$n.spec"
		sed 's/USING tessera/USING heap/g' "$spec" >"$iso/specs/${n}_heap.spec"
		cp "$REPO/test/isolation/expected/$n.out" "$iso/expected/$n.out"
		cp "$REPO/test/isolation/expected/$n.out" "$iso/expected/${n}_heap.out"
		names+=("$n" "${n}_heap")
	done
	chown -R postgres "$iso"
	as_postgres "$PGXS_DIR/test/isolation/pg_isolation_regress" \
		--inputdir="$iso" --outputdir="$iso/out" --bindir="$PGBIN" \
		--host="$CLUSTER" --port="$PORT" --user=postgres \
		--dbname=tessera_isolation "${names[@]}" >"$iso/run.log" 2>&1 || true
	count_results isolation "$iso/run.log"
fi

if want tap; then
	log "TAP tests"
	# test modules the TAP tests load (hook_witness: another extension's hook)
	for m in "$REPO"/test/modules/*/; do
		make -C "$m" -s PG_CONFIG="$PGBIN/pg_config" >/dev/null
		make -C "$m" -s install PG_CONFIG="$PGBIN/pg_config" >/dev/null
	done
	tap="$WORK/tap"
	mkdir -p "$tap" && chown postgres "$tap"
	echo "shared_preload_libraries = 'tessera'" >"$tap/extra.conf"
	chmod 644 "$tap/extra.conf"
	for t in "$REPO"/test/t/*.pl; do
		n=$(basename "$t" .pl)
		mkdir -p "$tap/$n" && chown postgres "$tap/$n"
		if (cd "$tap/$n" && PERL5LIB="$PGXS_DIR/test/perl" \
			PG_REGRESS="$PGXS_DIR/test/regress/pg_regress" TESTDIR="$tap/$n" \
			as_postgres env TEMP_CONFIG="$tap/extra.conf" PG_TEST_EXTRA="" \
			prove -I "$PGXS_DIR/test/perl" "$t" >"$tap/$n.log" 2>&1); then
			pass "tap/$n"
		else
			fail "tap/$n"
			tail -20 "$tap/$n.log" | sed 's/^/      /'
		fi
	done
fi

if want bench; then
	log "benchmark suite tests"
	if "$REPO/bench/setup.sh" >"$WORK/bench-setup.log" 2>&1; then
		if TESSERA_BENCH_DSN="host=$CLUSTER port=$PORT dbname=postgres user=postgres" \
			python3 "$REPO/bench/test_bench.py" >"$WORK/bench-test.log" 2>&1; then
			pass "bench/test_bench.py"
		else
			fail "bench/test_bench.py"
			tail -30 "$WORK/bench-test.log" | sed 's/^/      /'
		fi
	else
		fail "bench/setup.sh"
		tail -20 "$WORK/bench-setup.log" | sed 's/^/      /'
	fi
fi

if want files; then
	log "Parquet files with pyarrow and DuckDB (test/files/parquet_interop.py)"
	files="$WORK/files"
	mkdir -p "$files" && chown postgres "$files" && chmod 777 "$files"
	if "$REPO/bench/setup.sh" >"$WORK/files-setup.log" 2>&1 &&
		{ python3 -c 'import pyarrow, duckdb' 2>/dev/null ||
			PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore \
				python3 -m pip install -q pyarrow duckdb >>"$WORK/files-setup.log" 2>&1; }; then
		python3 "$REPO/test/files/parquet_interop.py" \
			--dsn "host=$CLUSTER port=$PORT dbname=postgres user=postgres" --dir "$files" \
			>"$WORK/files.log" 2>&1 && rc=0 || rc=$?
		n=0
		while IFS= read -r line; do
			case "$line" in
				"  ok      "*) pass "files/${line#  ok      }"; n=$((n + 1)) ;;
				"  FAILED  "*) fail "files/${line#  FAILED  }"; n=$((n + 1)) ;;
			esac
		done <"$WORK/files.log"
		if [ "$n" -eq 0 ] || { [ "$rc" -ne 0 ] && ! grep -q FAILED "$WORK/files.log"; }; then
			fail "files/parquet_interop.py"
			tail -20 "$WORK/files.log" | sed 's/^/      /'
		fi
	else
		fail "files (setup)"
		tail -20 "$WORK/files-setup.log" | sed 's/^/      /'
	fi
fi

if want random; then
	log "random workloads, heap vs tessera"
	if "$REPO/bench/setup.sh" >"$WORK/random-setup.log" 2>&1; then
		for seed in 1 2 3; do
			if python3 "$REPO/test/random/heap_vs_tessera.py" --seed "$seed" --rounds 6 \
				--dsn "host=$CLUSTER port=$PORT dbname=postgres user=postgres" \
				>"$WORK/random-$seed.log" 2>&1; then
				pass "random/seed-$seed"
			else
				fail "random/seed-$seed"
				tail -10 "$WORK/random-$seed.log" | sed 's/^/      /'
			fi
		done
	else
		fail "random (setup)"
	fi
fi

if want pg; then
	log "PostgreSQL's regression and isolation suites on tessera (vs heap)"
	for s in regress isolation; do
		if TESSERA_PG_SUITES_DIR="$WORK/pg-suites" "$REPO/scripts/pg-suites.sh" "$s" \
			>"$WORK/pg-$s.log" 2>&1; then
			pass "pg/$s"
		else
			fail "pg/$s"
			grep -E "other difference|^$s:" -A6 "$WORK/pg-$s.log" | head -40 | sed 's/^/      /' || true
		fi
	done
fi

if [ ${#FAILURES[@]} -gt 0 ]; then
	echo "failed: ${FAILURES[*]}"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
