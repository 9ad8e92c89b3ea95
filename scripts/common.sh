#!/usr/bin/env bash
# Shared helpers of the README's commands: install what is missing, build,
# install the extension, run server-side steps as the postgres user.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGBIN=/usr/lib/postgresql/15/bin
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
	[ -x /usr/lib/postgresql/15/bin/postgres ] || need+=(postgresql-15)
	[ -f /usr/include/postgresql/15/server/postgres.h ] || need+=(postgresql-server-dev-15)
	[ -f /usr/include/zstd.h ] || need+=(libzstd-dev)
	[ -f /usr/include/lz4.h ] || need+=(liblz4-dev)
	[ -f /usr/include/xxhash.h ] || need+=(libxxhash-dev)
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
	id postgres >/dev/null 2>&1 || { echo "no postgres user: install postgresql-15" >&2; exit 1; }
}

build_and_install() {
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

start_cluster() {
	local dir=$1
	as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
}

stop_cluster() {
	local dir=$1
	[ -f "$dir/data/postmaster.pid" ] && as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
}
