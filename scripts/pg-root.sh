#!/usr/bin/env bash
# scripts/pg-root.sh VERSION: print the directory of a Debian root holding
# PostgreSQL VERSION (17 or 18) with its server-dev files and what the
# test suites need, creating it first if it does not exist yet.
#
# Debian bookworm (this machine) packages PostgreSQL 15 only; 17 comes from
# trixie and 18 from forky, which need their suite's libc, so they live in
# a root of their own (debootstrap from the mirror apt already uses, then
# apt-get in a chroot).  Roots are cached under TESSERA_PG_ROOTS
# (default /var/cache/tessera-pg), outside the checkout, and reused.
set -euo pipefail

ver=${1:?usage: pg-root.sh 17|18}
case "$ver" in
	17) suite=trixie; script=trixie ;;
	18) suite=forky; script=sid ;;
	*) echo "pg-root.sh: PostgreSQL $ver is not supported (15 is the host's; 17, 18)" >&2; exit 2 ;;
esac
base=${TESSERA_PG_ROOTS:-/var/cache/tessera-pg}
root="$base/pg$ver"
log() { printf '==> %s\n' "$*" >&2; }

# The mounts a chroot needs (proc for postgres, /dev/shm for its dynamic
# shared memory); idempotent.
mount_root() {
	mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
	mountpoint -q "$root/dev" || mount --rbind /dev "$root/dev"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	# the host's trusted certificates (a site's own CA for pip's downloads)
	# and pip settings
	if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
		mkdir -p "$root/etc/ssl/certs"
		cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
	fi
	[ -f /etc/pip.conf ] && cp -L /etc/pip.conf "$root/etc/pip.conf"
	true
}

pkgs="postgresql-$ver postgresql-server-dev-$ver make gcc libc6-dev libzstd-dev liblz4-dev git
	libxxhash-dev libkrb5-dev libipc-run-perl perl python3 python3-pip ca-certificates bzip2"

# the stamp lists what was installed: a changed list installs again
if [ -f "$root/.tessera-ready" ] && [ "$(cat "$root/.tessera-ready")" = "$(echo $pkgs)" ]; then
	mount_root
	echo "$root"
	exit 0
fi

[ "$(id -u)" = 0 ] || { echo "pg-root.sh: creating $root needs root" >&2; exit 1; }
mirror=$(grep -rhoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
	head -1 | tr -d ' ' || true)
mirror=${mirror:-http://deb.debian.org/debian}
export DEBIAN_FRONTEND=noninteractive
command -v debootstrap >/dev/null || {
	log "installing debootstrap"
	apt-get install -y -q debootstrap >/dev/null 2>&1 || {
		apt-get update -q >/dev/null 2>&1
		apt-get install -y -q debootstrap >/dev/null
	}
}

mkdir -p "$base"
if [ ! -x "$root/usr/bin/apt-get" ]; then
	log "debootstrap $suite into $root (PostgreSQL $ver)"
	rm -rf "$root.tmp"
	debootstrap --variant=minbase "$suite" "$root.tmp" "$mirror" \
		"/usr/share/debootstrap/scripts/$script" >"$base/pg$ver-debootstrap.log" 2>&1 || {
		tail -20 "$base/pg$ver-debootstrap.log" >&2
		exit 1
	}
	if [ -e "$root" ]; then
		# a broken earlier attempt: never delete through its mounts
		umount -R "$root/dev" 2>/dev/null || true
		umount "$root/proc" 2>/dev/null || true
		mountpoint -q "$root/dev" || mountpoint -q "$root/proc" ||
			rm -rf --one-file-system "$root"
	fi
	mv "$root.tmp" "$root"
fi
mount_root
log "installing PostgreSQL $ver and the build and test dependencies into $root"
chroot "$root" env DEBIAN_FRONTEND=noninteractive bash -c "
	apt-get -o Acquire::Check-Valid-Until=false update -q &&
	apt-get -o Acquire::Check-Valid-Until=false install -y -q --no-install-recommends $(echo $pkgs)
" >"$base/pg$ver-apt.log" 2>&1 || {
	tail -20 "$base/pg$ver-apt.log" >&2
	exit 1
}
echo $pkgs >"$root/.tessera-ready"
mount_root	# again: the packages replaced the certificate bundle
echo "$root"
