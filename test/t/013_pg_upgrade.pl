# pg_upgrade of a cluster with tessera tables keeps every row, index,
# option and the tables' delta rows, deletes and row states; the upgraded
# tables take writes, VACUUM and compaction afterwards.
#
# From an older major version when TESSERA_UPGRADE_FROM names its
# installation (bin/ and lib/, tessera installed; scripts/test.sh --pg 18
# sets it to 17) and the two can upgrade at all, else from the version
# under test to itself, as PostgreSQL's own pg_upgrade test does: either
# way the schema is restored in binary-upgrade mode and the files, tessera's
# catalog among them, are carried over.
#
# The two cannot upgrade at all when the old server gives every column a
# "pg_attver" option that the new one rejects (Debian's 15.20 and 17.12
# do, 18.6 does not know it): pg_upgrade then fails for heap tables alike.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use File::Basename qw(dirname);
use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

my $new = PostgreSQL::Test::Cluster->new('new');
my @no_checksums = $new->pg_version >= 18 ? ('--no-data-checksums') : ();
my $new_install = dirname($new->config_data('--bindir'));
my $old_install = $ENV{TESSERA_UPGRADE_FROM};
if ($old_install && !-x "$old_install/bin/postgres")
{
	diag("TESSERA_UPGRADE_FROM=$old_install has no bin/postgres");
	$old_install = undef;
}
if ($old_install)
{
	# does the old server write column options the new one rejects?
	my $probe_old = PostgreSQL::Test::Cluster->new('probe_old', install_path => $old_install);
	$probe_old->init;
	$probe_old->start;
	my $opts = $probe_old->safe_psql('postgres', q{
		CREATE TABLE probe (a int);
		SELECT coalesce(string_agg(o, ','), '') FROM pg_attribute, unnest(attoptions) o
		WHERE attrelid = 'probe'::regclass AND attnum > 0});
	$probe_old->stop;
	if ($opts ne '')
	{
		my $probe_new = PostgreSQL::Test::Cluster->new('probe_new');
		$probe_new->init(extra => [@no_checksums]);
		$probe_new->start;
		my ($rc, $out, $err) = $probe_new->psql('postgres',
			"CREATE TABLE probe (a int); ALTER TABLE probe ALTER COLUMN a SET ($opts)");
		$probe_new->stop;
		if ($rc != 0)
		{
			diag("no pg_upgrade from $old_install is possible for any table here: "
				  . "its columns get options ($opts) the new server rejects ($err); "
				  . "upgrading from the version under test to itself instead");
			$old_install = undef;
		}
	}
}
$old_install = $new_install unless $old_install;

my $old = PostgreSQL::Test::Cluster->new('old', install_path => $old_install);
$old->init(extra => [$old->pg_version >= 18 ? ('--no-data-checksums') : ()]);
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
$new->init(extra => [@no_checksums]);
$new->append_conf('postgresql.conf', "shared_preload_libraries = 'tessera'\n");

my $bindir = "$new_install/bin";
{
	local $ENV{LD_LIBRARY_PATH} = "$old_install/lib" .
	  ($ENV{LD_LIBRARY_PATH} ? ":$ENV{LD_LIBRARY_PATH}" : '');
	command_ok([
			'pg_upgrade', '--no-sync',
			'-d', File::Spec->rel2abs($old->data_dir), '-D', File::Spec->rel2abs($new->data_dir),
			'-b', "$old_install/bin", '-B', $bindir,
			'-s', $new->host, '-p', $old->port, '-P', $new->port,
		],
		'pg_upgrade from ' . $old->pg_version . ' to ' . $new->pg_version);
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
