#!/usr/bin/env bash
# PostgreSQL's own regression and isolation suites, run with tessera as
# the default table access method (every table the suites create is a
# tessera table, unless a test names another access method).
#
# The source of the suites is Debian's source package of the version under
# test (postgresql-15, or -17/-18 in their roots; fetched into .pgsrc/ the
# first time); regress.so and contrib/spi's autoinc and
# refint are built from it with PGXS.  A throwaway cluster on port 54392
# has tessera preloaded; every test database gets CREATE EXTENSION tessera.
# Each suite runs twice: with default_table_access_method = heap, whose
# output is the expected output, then with tessera.
#
# test/pg-suites/compare.py then sets aside differences in EXPLAIN output
# and in the order of rows of queries without ORDER BY; every other
# difference must be listed, with its reason, in
# test/pg-suites/known-differences.txt, or the run fails.
#
# Usage: scripts/pg-suites.sh [regress|isolation ...]   (default: both)
#        TESSERA_PG_SUITES_TESTS="test1 test2" limits the tests run.
source "$(dirname "$0")/common.sh"

SRC="$REPO/.pgsrc"
WORK=${TESSERA_PG_SUITES_DIR:-/tmp/tessera-pg-suites}
PORT=${TESSERA_PG_SUITES_PORT:-54392}
PGXS_DIR=$(dirname "$("$PGBIN/pg_config" --pgxs)")/..
OURS="$REPO/test/pg-suites"

suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(regress isolation)

# Debian's source of the PostgreSQL under test (the installed version where
# the mirror still has it, else the newest it has): its test suites and
# regress.c.
fetch_source() {
	local installed tmp pkg=postgresql-$PGVER
	installed=$(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null || echo unknown)
	if [ -f "$SRC/src/test/regress/parallel_schedule" ] &&
		[ "$(cat "$SRC/.fetched-for" 2>/dev/null)" = "$pkg $installed" ]; then
		return 0
	fi
	log "fetching PostgreSQL $PGVER's source (Debian source package)"
	tmp=$(mktemp -d)
	mkdir -p "$tmp/parts" "$tmp/lists/partial"
	# the mirrors apt already uses, as deb-src entries (bookworm's image
	# lists them in deb822 form, a debootstrapped root in one-line form)
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		sed -e 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
			>"$tmp/parts/src.sources"
	fi
	if [ -f /etc/apt/sources.list ]; then
		sed -n -e 's/^deb /deb-src /p' /etc/apt/sources.list >"$tmp/parts/src.list"
	fi
	local opts=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$tmp/parts"
		-o Dir::State::Lists="$tmp/lists" -o Acquire::Check-Valid-Until=false)
	apt-get "${opts[@]}" update >/dev/null 2>&1 || true
	# the installed version first, then the others newest first (a mirror
	# may list a version whose files it no longer serves)
	local v
	for v in "$installed" $(apt-cache "${opts[@]}" showsrc "$pkg" 2>/dev/null |
		awk '/^Version:/{print $2}' | sort -Vru); do
		(cd "$tmp" && apt-get "${opts[@]}" source --download-only "$pkg=$v" \
			>/dev/null 2>&1) && break
	done
	local tarball
	tarball=$(ls "$tmp/${pkg}_"*.orig.tar.* 2>/dev/null | tail -1 || true)
	if [ -z "$tarball" ]; then
		# A mirror may list a version it serves no source of (here: trixie's
		# 17.12) while its pool still has earlier minor releases' upstream
		# tarballs.  The suites of an earlier minor release do as well: the
		# tessera pass is compared with a heap pass of the same tests.
		local mirror minor m
		mirror=$(sed -n -e 's/^deb \(http[^ ]*\) .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -1)
		[ -n "$mirror" ] || mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
		minor=${installed#*.}
		minor=${minor%%[-+~]*}
		for ((m = minor - 1; m >= 0 && m >= minor - 6; m--)); do
			python3 - "$mirror/pool/main/p/$pkg/${pkg}_$PGVER.$m.orig.tar.bz2" \
				"$tmp/${pkg}_$PGVER.$m.orig.tar.bz2" <<'PY' 2>/dev/null || continue
import shutil, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=60) as r, open(sys.argv[2], "wb") as f:
    shutil.copyfileobj(r, f)
PY
			tarball="$tmp/${pkg}_$PGVER.$m.orig.tar.bz2"
			log "the mirror serves no source of $pkg $installed: using $PGVER.$m's suites"
			break
		done
	fi
	[ -n "$tarball" ] || { echo "could not fetch the source of $pkg" >&2; exit 1; }
	case "$tarball" in
		*.bz2) command -v bzip2 >/dev/null || apt-get install -y -q bzip2 >/dev/null ;;
		*.xz) command -v xz >/dev/null || apt-get install -y -q xz-utils >/dev/null ;;
	esac
	rm -rf "$SRC"
	mkdir -p "$SRC"
	tar xf "$tarball" -C "$SRC" --strip-components=1
	echo "$pkg $installed" >"$SRC/.fetched-for"
	rm -rf "$tmp"
}

# regress.so, autoinc.so and refint.so, built with PGXS
build_test_modules() {
	local dir="$WORK/lib"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$SRC/src/test/regress/regress.c" "$SRC/contrib/spi/autoinc.c" "$SRC/contrib/spi/refint.c" "$dir/"
	cat >"$dir/Makefile" <<'MK'
MODULES = regress autoinc refint
PG_CPPFLAGS = -DREFINT_VERBOSE
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
MK
	make -C "$dir" -s PG_CONFIG="$PGBIN/pg_config" >/dev/null
}

install_deps
build_and_install
fetch_source
# only the suites run now: a run of the other keeps its results
for s in "${suites[@]}"; do rm -rf "${WORK:?}/$s"; done
rm -rf "$WORK/cluster"
mkdir -p "$WORK"
build_test_modules
chmod -R a+rX "$WORK"
chown -R postgres "$WORK"

CLUSTER="$WORK/cluster"
init_cluster "$CLUSTER" "$PORT"
cat >>"$CLUSTER/data/postgresql.conf" <<CONF
max_connections = 40
# every change to a tessera table also logs its rows for logical decoding
wal_level = logical
# the shared frame cache on, small enough to evict: every suite runs through it
tessera.shared_cache_size = 16MB
include_if_exists = 'access_method.conf'
CONF
start_cluster "$CLUSTER"
trap 'stop_cluster "$CLUSTER"' EXIT

# The expected outputs of the tessera pass: what the heap pass printed
expected_dir() {
	local suite=$1 src=$2 out="$WORK/$1/expected"
	mkdir -p "$out"
	cp "$src"/expected/*.out "$out/"
	for f in "$WORK/$suite/heap/results"/*.out; do
		[ -f "$f" ] || continue
		local n
		n=$(basename "$f" .out)
		rm -f "$out/$n.out" "$out/${n}"_[0-9].out
		cp "$f" "$out/$n.out"
	done
}

# pass NAME AM EXPECTED TOOL TOOL-ARGS...: run the suite's tests with
# default_table_access_method = AM against the expected outputs in EXPECTED
FAILED=0
run_pass() {
	local suite=$1 pass=$2 am=$3 expected=$4 tool=$5
	shift 5
	local dir="$WORK/$suite/$pass"
	rm -rf "$dir"
	mkdir -p "$dir"
	ln -sfn "$expected" "$dir/expected"
	# the inputs (sql/, specs/, data/) are read in place
	for d in sql specs data input output; do
		[ -d "$SRCDIR/$d" ] && ln -sfn "$SRCDIR/$d" "$dir/$d"
	done
	chown -R postgres "$WORK/$suite"
	local tests=()
	if [ -n "${TESSERA_PG_SUITES_TESTS:-}" ]; then
		read -r -a tests <<<"$TESSERA_PG_SUITES_TESTS"
	else
		tests=(--schedule="$SRCDIR/$SCHEDULE")
	fi
	# set in the server's configuration: a session option would be checked
	# in databases that do not have the extension yet
	echo "default_table_access_method = '$am'" >"$CLUSTER/data/access_method.conf"
	chown postgres "$CLUSTER/data/access_method.conf"
	as_postgres "$PGBIN/pg_ctl" -D "$CLUSTER/data" reload >/dev/null
	sleep 1
	(cd "$dir" && PGISOLATIONTIMEOUT="${PGISOLATIONTIMEOUT:-60}" \
		as_postgres "$tool" --inputdir="$dir" --outputdir="$dir" \
		--bindir="$PGBIN" --host="$CLUSTER" --port="$PORT" --user=postgres \
		--load-extension=tessera "$@" "${tests[@]}" >"$dir/run.log" 2>&1) || true
}

run_suite() {
	local suite=$1 tool=$2
	SRCDIR=$3 SCHEDULE=$4
	shift 4
	log "PostgreSQL's $suite suite, heap pass (the expected output)"
	rm -rf "$WORK/$suite"
	mkdir -p "$WORK/$suite"
	run_pass "$suite" heap heap "$SRCDIR/expected" "$tool" "$@"
	expected_dir "$suite" "$SRCDIR"
	log "PostgreSQL's $suite suite, tessera pass"
	run_pass "$suite" tessera tessera "$WORK/$suite/expected" "$tool" "$@"
	local log="$WORK/$suite/tessera/run.log"
	if ! grep -qE '\.\.\. (ok|FAILED)|^(not )?ok [0-9]+ ' "$log"; then
		cat "$log"
		FAILED=$((FAILED + 1))
		return
	fi
	local n_fail=0
	python3 "$OURS/compare.py" --suite "$suite" "$WORK/$suite/heap/results" \
		"$WORK/$suite/tessera/results" | tee "$WORK/$suite/compare.log" || n_fail=1
	echo "($suite: pg_regress's diffs against the heap pass in $WORK/$suite/tessera/regression.diffs)"
	FAILED=$((FAILED + n_fail))
}

for s in "${suites[@]}"; do
	case "$s" in
		regress)
			run_suite regress "$PGXS_DIR/test/regress/pg_regress" "$SRC/src/test/regress" \
				parallel_schedule --dlpath="$WORK/lib" --max-concurrent-tests=20 ;;
		isolation)
			run_suite isolation "$PGXS_DIR/test/isolation/pg_isolation_regress" \
				"$SRC/src/test/isolation" isolation_schedule ;;
		*) echo "unknown suite $s" >&2; exit 2 ;;
	esac
done
[ "$FAILED" -eq 0 ]
