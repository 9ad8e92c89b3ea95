#!/usr/bin/env bash
# Shared helpers of the README's commands: install what is missing, build,
# install the extension, run server-side steps as the postgres user.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The PostgreSQL major version to build and test against: the host's 15,
# or 17/18 inside a Debian root of their own (run_in_pg_root below).
PGVER=${TESSERA_PG:-15}
PGBIN=/usr/lib/postgresql/$PGVER/bin
export PATH="$PGBIN:$PATH"

log() { printf '==> %s\n' "$*" >&2; }

# Run a command as the postgres user (initdb, postgres and TAP refuse root).
as_postgres() {
	if [ "$(id -u)" = 0 ]; then
		local envs=(PATH="$PATH") v
		for v in PERL5LIB PG_REGRESS TESTDIR PGHOST PGPORT PGUSER PGDATABASE TEMP_CONFIG PGOPTIONS PGISOLATIONTIMEOUT; do
			[ -n "${!v:-}" ] && envs+=("$v=${!v}")
		done
		runuser -u postgres -- env "${envs[@]}" "$@"
	else
		"$@"
	fi
}

# Install build and test dependencies from Debian's packages if missing.
install_deps() {
	local need=()
	[ -x "$PGBIN/postgres" ] || need+=("postgresql-$PGVER")
	[ -f "/usr/include/postgresql/$PGVER/server/postgres.h" ] || need+=("postgresql-server-dev-$PGVER")
	[ -f /usr/include/zstd.h ] || need+=(libzstd-dev)
	[ -f /usr/include/lz4.h ] || need+=(liblz4-dev)
	[ -f /usr/include/xxhash.h ] || need+=(libxxhash-dev)
	# the server's libpq headers include GSSAPI's where PostgreSQL was built with it
	[ -f /usr/include/gssapi/gssapi.h ] || need+=(libkrb5-dev)
	command -v pkg-config >/dev/null || need+=(pkg-config)
	perl -MIPC::Run -e 1 2>/dev/null || need+=(libipc-run-perl)
	command -v make >/dev/null || need+=(make)
	command -v gcc >/dev/null || need+=(gcc)
	if [ ${#need[@]} -gt 0 ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "missing packages: ${need[*]} (run as root to install them)" >&2
			exit 1
		fi
		log "installing ${need[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -q "${need[@]}" >/dev/null 2>&1 || {
			apt-get update -q >/dev/null 2>&1
			apt-get install -y -q "${need[@]}" >/dev/null
		}
	fi
	id postgres >/dev/null 2>&1 || { echo "no postgres user: install postgresql-$PGVER" >&2; exit 1; }
}

# Rust (cargo) for the Parquet file layer (rust/): the one in PATH or in
# ~/.cargo, or a minimal toolchain installed with rustup (arrow and parquet
# need Rust 1.85; Debian bookworm's cargo is 1.63).  Not in the roots of
# other PostgreSQL versions: the library is built here and copied there.
RUST_MIN=1.85
ensure_cargo() {
	local need=()
	[ -d "$HOME/.cargo/bin" ] && export PATH="$PATH:$HOME/.cargo/bin"
	# cargo links the system's libzstd, found by pkg-config
	[ -f /usr/include/zstd.h ] || need+=(libzstd-dev)
	command -v pkg-config >/dev/null || need+=(pkg-config)
	if [ ${#need[@]} -gt 0 ]; then
		log "installing ${need[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -q "${need[@]}" >/dev/null 2>&1 || {
			apt-get update -q >/dev/null 2>&1
			apt-get install -y -q "${need[@]}" >/dev/null
		}
	fi
	if command -v cargo >/dev/null &&
		[ "$(printf '%s\n' "$RUST_MIN" "$(cargo --version | awk '{print $2}')" | sort -V | head -1)" = "$RUST_MIN" ]; then
		return 0
	fi
	log "installing Rust (rustup, minimal profile)"
	local init
	init=$(mktemp)
	python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
		https://static.rust-lang.org/rustup/dist/x86_64-unknown-linux-gnu/rustup-init "$init"
	chmod +x "$init"
	"$init" -y -q --profile minimal --default-toolchain stable --no-modify-path >/dev/null
	rm -f "$init"
	export PATH="$HOME/.cargo/bin:$PATH"
}

# the Parquet layer's static library, built here where cargo is (the
# Makefile also rebuilds it when its sources change)
build_parquet_lib() {
	ensure_cargo
	log "building the Parquet layer (rust/, cargo)"
	(cd "$REPO/rust" && ZSTD_SYS_USE_PKG_CONFIG=1 cargo build --release --locked --quiet)
}

build_and_install() {
	if [ -z "${TESSERA_IN_PG_ROOT:-}" ]; then
		build_parquet_lib
	fi
	log "building tessera"
	make -C "$REPO" -s -j"$(nproc)" PG_CONFIG="$PGBIN/pg_config" >/dev/null
	log "installing tessera into $($PGBIN/pg_config --pkglibdir)"
	make -C "$REPO" -s install PG_CONFIG="$PGBIN/pg_config" >/dev/null
}

# init_cluster DIR PORT: a throwaway cluster, loopback/socket only.
init_cluster() {
	local dir=$1 port=$2
	mkdir -p "$dir"
	chown postgres "$dir" 2>/dev/null || true
	chmod 700 "$dir"
	if [ ! -f "$dir/data/PG_VERSION" ]; then
		as_postgres "$PGBIN/initdb" -D "$dir/data" -A trust -U postgres --no-sync >/dev/null
		cat >>"$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = 'localhost'
unix_socket_directories = '$dir'
shared_preload_libraries = 'tessera'
max_prepared_transactions = 10
fsync = on
logging_collector = off
CONF
	fi
}

# reserve_huge_pages DATADIR: as root, make room in the kernel's pool of
# huge pages for the stopped cluster's shared memory (PostgreSQL computes
# the count: shared_memory_size_in_huge_pages), so that its huge_pages =
# try takes them.  A parallel worker is a new process that maps every
# shared buffer it reads one 4 kB page at a time; tessera's scans are short
# enough that those faults were a fifth of an SSB query (see README,
# Tuning).  TESSERA_HUGE_PAGES=0 skips it; where the kernel refuses (a
# container), the cluster runs on ordinary pages as before.
reserve_huge_pages() {
	local data=$1 need free total
	[ "${TESSERA_HUGE_PAGES:-1}" != 0 ] && [ "$(id -u)" = 0 ] || return 0
	[ -w /proc/sys/vm/nr_hugepages ] || return 0
	need=$(as_postgres "$PGBIN/postgres" -D "$data" -C shared_memory_size_in_huge_pages 2>/dev/null) || return 0
	[ "${need:-0}" -gt 0 ] 2>/dev/null || return 0
	# free and not promised to a running server
	free=$(awk '/^HugePages_Free:/ {f = $2} /^HugePages_Rsvd:/ {r = $2} END {print f - r}' /proc/meminfo)
	total=$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo)
	[ "$free" -ge "$need" ] && return 0
	echo $((total + need - free)) >/proc/sys/vm/nr_hugepages 2>/dev/null || return 0
	log "reserved huge pages for the cluster's shared memory (vm.nr_hugepages $total -> $(cat /proc/sys/vm/nr_hugepages); TESSERA_HUGE_PAGES=0 skips this)"
}

start_cluster() {
	local dir=$1
	as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
}

stop_cluster() {
	local dir=$1
	[ -f "$dir/data/postmaster.pid" ] || return 0
	# a server still recovering from a crash may not stop in time: then immediately
	as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
		as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
}

# install_old_pg_into_root ROOT VERSION: for the pg_upgrade test
# (test/t/013_pg_upgrade.pl), an older PostgreSQL with tessera built for it,
# at the same paths inside ROOT; prints its installation directory, or
# nothing.  For 18 that is 17 from its own root, if a run there installed
# tessera (.ci/run tests 17 first).  (This machine's PostgreSQL 15 is not
# used: its build gives every column a "pg_attver" option that 17's and
# 18's pg_restore reject, for heap tables too.)  Its binaries run on the
# newer root's libc; libraries whose sonames ROOT lacks go into its lib/,
# where only the old binaries look.
install_old_pg_into_root() {
	local root=$1 ver=$2 old src lib path have
	[ "$ver" = 18 ] || return 0
	old=17
	src="$(dirname "$root")/pg$old"
	[ -f "$src/usr/lib/postgresql/$old/lib/tessera.so" ] || return 0
	rm -rf "$root/usr/lib/postgresql/$old" "$root/usr/share/postgresql/$old"
	mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql"
	cp -a "$src/usr/lib/postgresql/$old" "$root/usr/lib/postgresql/$old"
	cp -a "$src/usr/share/postgresql/$old" "$root/usr/share/postgresql/$old"
	have=$(chroot "$root" /sbin/ldconfig -p | awk '{print $1}')
	chroot "$src" sh -c "ldd /usr/lib/postgresql/$old/bin/*" 2>/dev/null |
		awk '/=> \// {print $1, $3}' | sort -u |
		while read -r lib path; do
			case "$lib" in libc.so.* | libm.so.* | libresolv.so.* | ld-linux*) continue ;; esac
			grep -qxF "$lib" <<<"$have" || cp -L "$src$path" "$root/usr/lib/postgresql/$old/lib/$lib"
		done
	echo "/usr/lib/postgresql/$old"
}

# run_in_pg_root VERSION SCRIPT ARGS...: run one of this checkout's scripts
# against PostgreSQL VERSION.  15 is the host's; for another version, set
# up (once; cached) the Debian root that has it (scripts/pg-root.sh), copy
# the checkout's files into it and run the script there as root of that
# system.  Returns only for 15 (the caller goes on); otherwise exits with
# the script's status.
run_in_pg_root() {
	local ver=$1 script=$2 root dest keep upgrade_from PGBIN_ROOT="/usr/lib/postgresql/$1/bin/pg_ctl"
	shift 2
	if [ "$ver" = 15 ] || [ -n "${TESSERA_IN_PG_ROOT:-}" ]; then
		return 0
	fi
	[ "$(id -u)" = 0 ] || { echo "--pg $ver needs root (it runs in a chroot)" >&2; exit 1; }
	root=$("$REPO/scripts/pg-root.sh" "$ver")
	dest="$root/tessera"
	log "copying the checkout into $dest"
	# what earlier runs there made and later ones reuse: the demo's cluster
	# and the benchmark's generated data
	mkdir -p "$root/tessera-keep"
	if [ -f "$dest/.pgdata/data/postmaster.pid" ]; then
		chroot "$root" runuser -u postgres -- "$PGBIN_ROOT" -D /tessera/.pgdata/data -m fast stop \
			>/dev/null 2>&1 || true
	fi
	for keep in .pgdata bench/.data .pgsrc; do
		if [ -e "$dest/$keep" ]; then
			rm -rf "$root/tessera-keep/${keep//\//_}"
			mv "$dest/$keep" "$root/tessera-keep/${keep//\//_}"
		fi
	done
	rm -rf "$dest"
	mkdir -p "$dest"
	if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$REPO" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - 2>/dev/null) |
			tar -xf - -C "$dest"
	else
		(cd "$REPO" && tar -cf - --exclude=./.pgdata --exclude=./bench/.data --exclude=./.pgsrc .) |
			tar -xf - -C "$dest"
	fi
	for keep in .pgdata bench/.data .pgsrc; do
		if [ -e "$root/tessera-keep/${keep//\//_}" ]; then
			mkdir -p "$(dirname "$dest/$keep")"
			mv "$root/tessera-keep/${keep//\//_}" "$dest/$keep"
		fi
	done
	# the Parquet layer's library: built here (no cargo in the root)
	build_parquet_lib
	mkdir -p "$dest/rust/target/release"
	cp -p "$REPO/rust/target/release/libtessera_parquet.a" "$dest/rust/target/release/"
	upgrade_from=$(install_old_pg_into_root "$root" "$ver")
	exec chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TESSERA_PG="$ver" TESSERA_IN_PG_ROOT=1 PIP_BREAK_SYSTEM_PACKAGES=1 \
		TESSERA_UPGRADE_FROM="$upgrade_from" TESSERA_TEST_PORT="${TESSERA_TEST_PORT:-}" TESSERA_KEEP_TEST_DIR="${TESSERA_KEEP_TEST_DIR:-}" \
		"/tessera/scripts/$script" "$@"
}
