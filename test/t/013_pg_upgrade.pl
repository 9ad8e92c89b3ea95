# pg_upgrade of a cluster with tessera tables from an older PostgreSQL
# major version to the one under test keeps every row, index, option and
# the tables' delta rows, deletes and row locks; the upgraded tables take
# writes, VACUUM and compaction afterwards.
#
# Needs the old version's binaries with tessera installed:
# TESSERA_UPGRADE_FROM names their installation (its bin/ and lib/; the
# test adds lib/ to the old binaries' library path).  scripts/test.sh
# --pg 18 sets it up with the host's PostgreSQL 15; elsewhere the test is
# skipped.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use File::Path qw(rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

my $old_install = $ENV{TESSERA_UPGRADE_FROM};
plan skip_all => 'TESSERA_UPGRADE_FROM (an older PostgreSQL with tessera) is not set'
  unless $old_install && -x "$old_install/bin/postgres";

my $old = PostgreSQL::Test::Cluster->new('old', install_path => $old_install);
$old->init;
$old->append_conf('postgresql.conf', "shared_preload_libraries = 'tessera'\n");
$old->start;
$old->safe_psql('postgres', q{
	CREATE EXTENSION tessera;
	-- stripes, an index, deletes and updates (row states), options
	CREATE TABLE t (id int PRIMARY KEY, note text, v numeric(10,2), ts timestamptz) USING tessera
		WITH (tessera_compression = 'lz4', tessera_row_group_row_limit = 5000);
	INSERT INTO t SELECT i, md5(i::text), i / 3.0, timestamptz '2024-01-01' + i * interval '1 minute'
		FROM generate_series(1, 60000) i;
	CREATE INDEX t_note ON t (note);
	DELETE FROM t WHERE id % 10 = 0;
	UPDATE t SET v = -v WHERE id % 7 = 0;
	-- small writes left in the delta (not compacted)
	CREATE TABLE d (k bigint, s text) USING tessera WITH (tessera_stripe_row_limit = 1000);
	ALTER TABLE d SET (autovacuum_enabled = false);
});
$old->safe_psql('postgres', "INSERT INTO d VALUES ($_, 'row $_')") foreach (1 .. 30);
$old->safe_psql('postgres', q{
	DELETE FROM d WHERE k % 3 = 0;
	-- a materialized view and a partitioned table stored as tessera
	CREATE MATERIALIZED VIEW mv USING tessera AS SELECT id % 100 AS g, count(*) AS n FROM t GROUP BY 1;
	CREATE TABLE p (id int, part int) PARTITION BY LIST (part);
	CREATE TABLE p1 PARTITION OF p FOR VALUES IN (1) USING tessera;
	CREATE TABLE p2 PARTITION OF p FOR VALUES IN (2) USING tessera;
	INSERT INTO p SELECT i, 1 + i % 2 FROM generate_series(1, 1000) i;
});

my $check = q{
	SELECT count(*), sum(id), md5(string_agg(note || v || ts, ',' ORDER BY id)) FROM t;
	SELECT count(*), md5(string_agg(k || s, ',' ORDER BY k)) FROM d;
	SELECT string_agg(g || ':' || n, ',' ORDER BY g) FROM mv;
	SELECT count(*), sum(id) FROM p1;
	SELECT count(*), sum(id) FROM p2;
	SELECT relation, compression, row_group_row_limit, stripe_row_limit FROM tessera.options
		WHERE relation::text IN ('t', 'd') ORDER BY 1;
	SET enable_seqscan = off; SET enable_bitmapscan = off; SET tessera.enable_custom_scan = off;
	SELECT id, note FROM t WHERE id IN (7, 4242, 59999) ORDER BY id;
	SELECT id FROM t WHERE note = md5('31337');
};
my $before = $old->safe_psql('postgres', $check);
$old->stop;

# the new cluster: same locale and encoding, no data checksums (the old
# cluster has none; 18's initdb turns them on by default)
my $new = PostgreSQL::Test::Cluster->new('new');
$new->init(extra => [$new->pg_version >= 18 ? ('--no-data-checksums') : ()]);
$new->append_conf('postgresql.conf', "shared_preload_libraries = 'tessera'\n");

my $workdir = PostgreSQL::Test::Utils::tempdir;
my $bindir = $new->config_data('--bindir');
{
	local $ENV{LD_LIBRARY_PATH} = "$old_install/lib" .
	  ($ENV{LD_LIBRARY_PATH} ? ":$ENV{LD_LIBRARY_PATH}" : '');
	chdir $workdir or die "chdir $workdir: $!";
	command_ok([
			'pg_upgrade', '--no-sync',
			'-d', $old->data_dir, '-D', $new->data_dir,
			'-b', "$old_install/bin", '-B', $bindir,
			'-s', $new->host, '-p', $old->port, '-P', $new->port,
		],
		'pg_upgrade from ' . $old->pg_version . ' to ' . $new->pg_version);
	chdir $FindBin::RealBin;
}
$new->start;
is($new->safe_psql('postgres', $check), $before,
	'every row, index and option is there after the upgrade');
is($new->safe_psql('postgres', q{
		SELECT count(*) FROM tessera.verify('t') UNION ALL SELECT count(*) FROM tessera.verify('d')}), "0\n0",
	'tessera.verify finds nothing wrong');

# the upgraded tables take writes and maintenance
$new->safe_psql('postgres', q{
	INSERT INTO t SELECT i, md5(i::text), i, now() FROM generate_series(60001, 61000) i;
	UPDATE t SET note = 'changed' WHERE id = 4242;
	DELETE FROM t WHERE id BETWEEN 100 AND 199;
	INSERT INTO d VALUES (31, 'after');
	VACUUM t; VACUUM d;
	REFRESH MATERIALIZED VIEW mv;
});
is($new->safe_psql('postgres', q{
		SELECT count(*), sum(id) FILTER (WHERE note = 'changed') FROM t;
		SELECT count(*) FROM d;
		SET enable_seqscan = off; SET tessera.enable_custom_scan = off;
		SELECT count(*) FROM t WHERE note = 'changed';
	}), "54910|4242\n21\n1",
	'writes, VACUUM and index lookups work on the upgraded tables');

$new->stop;
done_testing();
