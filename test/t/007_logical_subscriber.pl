# A tessera table as the target of logical replication: a subscriber's
# tessera tables receive the initial copy and then every INSERT, UPDATE (of
# key and non-key columns) and DELETE of a heap publisher, found through the
# primary key (replica identity index) or, for REPLICA IDENTITY FULL and no
# index on the subscriber, through a sequential scan; after each round the
# subscriber holds exactly the publisher's rows (seq scan and index scan).
# Writes to an unpublished tessera table on the publisher do not disturb
# logical decoding.  And without tessera in shared_preload_libraries (no
# rows logged for decoding) a tessera table cannot be put into a
# publication: CREATE PUBLICATION ... FOR TABLE, ALTER PUBLICATION ... ADD
# TABLE, FOR ALL TABLES, FOR TABLES IN SCHEMA, and moving a published table
# to tessera all fail with feature_not_supported (SQLSTATE 0A000).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use POSIX ();
use TesseraNode;

my $publisher = tessera_node('publisher', allows_streaming => 'logical');
my $subscriber = tessera_node('subscriber');

$publisher->safe_psql('postgres', q{
	CREATE TABLE s (c1 int PRIMARY KEY, c2 text, c3 int, c4 numeric, c5 timestamp);
	CREATE TABLE f (a int, b text, c int);
	ALTER TABLE f REPLICA IDENTITY FULL;
	-- a tessera table on the publisher that is not published
	CREATE TABLE local_t (a int, b text) USING tessera;
});
$publisher->safe_psql('postgres', seed_sql('s', 1, 30000));
# duplicates and NULLs: FULL identity matches whole rows, NULL = NULL
$publisher->safe_psql('postgres', q{
	INSERT INTO f SELECT i % 2000, CASE WHEN i % 11 = 0 THEN NULL ELSE 'f' || (i % 2000) END, i % 13
	FROM generate_series(1, 6000) i;
	CREATE PUBLICATION p_s FOR TABLE s;
	CREATE PUBLICATION p_f FOR TABLE f;
});

$subscriber->safe_psql('postgres', q{
	CREATE TABLE s (c1 int PRIMARY KEY, c2 text, c3 int, c4 numeric, c5 timestamp) USING tessera
		WITH (tessera_stripe_row_limit = 5000, tessera_row_group_row_limit = 1000);
	CREATE TABLE f (a int, b text, c int) USING tessera
		WITH (tessera_stripe_row_limit = 2000, tessera_row_group_row_limit = 500);
});
my $connstr = $publisher->connstr . ' dbname=postgres';
# one subscription per table, so that a failure to apply one table's
# changes does not hold back the other's
$subscriber->safe_psql('postgres', qq{
	CREATE SUBSCRIPTION sub_s CONNECTION '$connstr' PUBLICATION p_s;
	CREATE SUBSCRIPTION sub_f CONNECTION '$connstr' PUBLICATION p_f;
});

# Wait until subscription sub_$tab has applied everything committed on
# the publisher (as wait_for_catchup does), but give up as soon as its
# apply worker reports an error, or after 60 s rather than the harness's
# 180 s; the errors from the subscriber's log go to the test's log.
sub wait_applied
{
	my ($phase, $tab) = @_;
	my $lsn = $publisher->lsn('insert');
	my $done = 0;
	foreach (1 .. 600)
	{
		$done = $publisher->safe_psql('postgres', qq{
			SELECT count(*) > 0 AND bool_and('$lsn' <= replay_lsn)
			FROM pg_stat_replication WHERE application_name = 'sub_$tab'}) eq 't';
		last if $done;
		last if $subscriber->safe_psql('postgres', qq{
			SELECT apply_error_count + sync_error_count > 0
			FROM pg_stat_subscription_stats WHERE subname = 'sub_$tab'}) eq 't';
		usleep(100_000);
	}
	ok($done, "$phase: the subscriber applied the changes to $tab")
	  or diag(join("\n", grep { /ERROR|FATAL|DETAIL|CONTEXT/ } split /\n/,
		slurp_file($subscriber->logfile)));
}

my %dump = (
	s => q{SELECT count(*), sum(c1), sum(c3), md5(string_agg(x::text, '|' ORDER BY c1))
		FROM s x WHERE c1 BETWEEN -1000000 AND 2000000},
	f => q{SELECT count(*), count(b), sum(c), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM f x},
);

# The subscriber's tables hold the publisher's rows, s also through its index.
sub compare
{
	my ($phase) = @_;
	foreach my $tab ('s', 'f')
	{
		wait_applied($phase, $tab);
		same_results($publisher, $subscriber, $dump{$tab}, "$phase: $tab (seq scan) matches the publisher");
	}
	my $idx = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';
	like($subscriber->safe_psql('postgres', "$idx EXPLAIN (COSTS OFF) $dump{s}"),
		qr/Index Scan using s_pkey on s x/, "$phase: the subscriber plans an index scan of s");
	is($subscriber->safe_psql('postgres', "$idx $dump{s}"),
		$publisher->safe_psql('postgres', $dump{s}), "$phase: s (index scan) matches the publisher");
}

# 1. initial synchronization (copy_data)
$subscriber->wait_for_subscription_sync;
compare('initial sync');

# 2. INSERTs, UPDATEs of non-key and key columns, DELETEs, one at a time and
#    in bulk, several changes of one row in one transaction
$publisher->safe_psql('postgres', seed_sql('s', 30001, 35000, 'later'));
$publisher->safe_psql('postgres', q{
	INSERT INTO s VALUES (-1, 'single', 1, 1, NULL);
	UPDATE s SET c3 = c3 + 1 WHERE c1 % 3 = 0;
	UPDATE s SET c2 = 'one', c4 = NULL WHERE c1 = 17;
	UPDATE s SET c1 = c1 + 100000, c2 = 'moved' WHERE c1 BETWEEN 1000 AND 1999;
	UPDATE s SET c1 = -c1 WHERE c1 = 5000;
	DELETE FROM s WHERE c1 % 7 = 0;
	DELETE FROM s WHERE c1 = 1;
	BEGIN;
	INSERT INTO s VALUES (200000, 'in xact', 0, 0, NULL);
	UPDATE s SET c3 = 1 WHERE c1 = 200000;
	UPDATE s SET c3 = c3 + 1, c1 = 200001 WHERE c1 = 200000;
	UPDATE s SET c2 = 'twice' WHERE c1 BETWEEN 2000 AND 2100;
	UPDATE s SET c2 = c2 || ' and again' WHERE c1 BETWEEN 2050 AND 2150;
	DELETE FROM s WHERE c1 BETWEEN 2090 AND 2110;
	INSERT INTO s VALUES (2100, 'reinserted', 0, 0, NULL);
	COMMIT;
	BEGIN;
	UPDATE s SET c3 = -1 WHERE c1 BETWEEN 3000 AND 3999;
	ROLLBACK;
});
$publisher->safe_psql('postgres', q{
	UPDATE f SET c = c + 100 WHERE a % 5 = 0;
	UPDATE f SET b = 'was null' WHERE b IS NULL AND a % 2 = 0;
	DELETE FROM f WHERE a % 4 = 1;
	-- one of several identical rows
	DELETE FROM f WHERE ctid = (SELECT min(ctid) FROM f WHERE a = 10);
	UPDATE f SET c = 999 WHERE ctid = (SELECT min(ctid) FROM f WHERE a = 12);
	INSERT INTO f VALUES (NULL, NULL, NULL), (NULL, NULL, NULL);
	DELETE FROM f WHERE ctid = (SELECT min(ctid) FROM f WHERE a IS NULL);
});
# writes to the unpublished tessera table in between
$publisher->safe_psql('postgres', q{
	INSERT INTO local_t SELECT i, 'x' FROM generate_series(1, 5000) i;
	BEGIN;
	INSERT INTO s VALUES (-2, 'next to tessera', 2, 2, NULL);
	INSERT INTO local_t VALUES (0, 'y');
	COMMIT;
});
compare('changes');

# 3. more rounds on rows that were changed before (the subscriber's
#    tessera rows have been updated and deleted already)
$publisher->safe_psql('postgres', q{
	UPDATE s SET c3 = c3 * 2 WHERE c1 % 3 = 0;
	UPDATE s SET c1 = c1 - 100000, c2 = 'moved back' WHERE c1 BETWEEN 101000 AND 101499;
	DELETE FROM s WHERE c1 % 5 = 0;
	UPDATE f SET c = c + 1 WHERE a % 5 = 0;
	DELETE FROM f WHERE a % 3 = 0;
});
# VACUUM once those are applied (VACUUM running while rows are applied is
# step 4; a run of this step that did not wait once lost a DELETE of f,
# before dirty catalog scans read one consistent set of stripes: catalog.c)
wait_applied('second round', $_) foreach ('s', 'f');
$subscriber->safe_psql('postgres', 'VACUUM s; VACUUM f');
$publisher->safe_psql('postgres', q{
	UPDATE s SET c4 = 0 WHERE c1 BETWEEN 20000 AND 25000;
	DELETE FROM s WHERE c1 BETWEEN 24000 AND 26000;
	UPDATE f SET b = b || '!' WHERE a % 7 = 0;
});
compare('second round and VACUUM');

# 3b. changes applied while VACUUM runs on the subscriber, again and again:
#     it compacts, folds and merges the stripes the apply workers are
#     scanning (f, dirty snapshot) and fetching and locking rows of (s), and
#     its relcache invalidations reset the workers' fetch caches.  (Rows a
#     dirty scan returned once carried the running VACUUM as their deleter,
#     and the apply worker waited for it forever; a row lock fetched through
#     a directory the reset had freed.)
my $vacuum_loop = fork();
die "fork: $!" unless defined $vacuum_loop;
if ($vacuum_loop == 0)
{
	foreach (1 .. 40)
	{
		system('psql', '-XAtq', '-d', $subscriber->connstr('postgres'),
			'-c', 'VACUUM s', '-c', 'VACUUM f');
		usleep(30_000);
	}
	POSIX::_exit(0);
}
foreach my $round (1 .. 4)
{
	$publisher->safe_psql('postgres', join("\n",
		"INSERT INTO f SELECT i % 2000, 'v$round', i % 13 FROM generate_series(1, 300) i;",
		"INSERT INTO s SELECT i, 'v$round', i % 1000, 0, NULL FROM generate_series(300000 + $round * 1000, 300000 + $round * 1000 + 299) i;",
		(map { my $k = ($_ * 37 + $round * 101) % 2000;
			   ("UPDATE f SET c = c + 1 WHERE a = $k;",
				"DELETE FROM f WHERE a = " . (($k + 3) % 2000) . " AND c % 2 = 0;",
				"UPDATE s SET c3 = c3 + 1 WHERE c1 = " . ($k * 7 + 2) . ";",
				"DELETE FROM s WHERE c1 = " . ($k * 11 + 3) . ";") } (1 .. 60))));
}
waitpid($vacuum_loop, 0);
# An UPDATE or DELETE of f (REPLICA IDENTITY FULL: the apply worker finds
# the row by a sequential scan with a dirty snapshot) applied while VACUUM
# compacted and folded f was now and then lost: the scan read the stripe
# catalog's index before a compaction inserted the merged stripe and its
# rows after the compaction committed (catalog.c, CatalogScan).
compare('changes during VACUUM');
is($subscriber->safe_psql('postgres', q{
		SELECT string_agg(subname || ' ' || apply_error_count || ' ' || sync_error_count, ', ' ORDER BY subname)
		FROM pg_stat_subscription_stats}),
	'sub_f 0 0, sub_s 0 0', 'no apply or sync errors on the subscriber');
$subscriber->safe_psql('postgres', 'DROP SUBSCRIPTION sub_s; DROP SUBSCRIPTION sub_f');

# 4. without tessera in shared_preload_libraries, tessera rows are not
#    logged for logical decoding, and tessera tables cannot be published
#    (with it, they can: 015_logical_publisher).  The publisher restarts
#    without it; each session first reads local_t, which loads tessera.
$subscriber->stop;
$publisher->append_conf('postgresql.conf', "shared_preload_libraries = ''");
$publisher->restart;
sub refused
{
	my ($sql, $name, $why) = @_;
	$why //= qr/0A000.*\n.*\n.*shared_preload_libraries/;
	my ($rc, $out, $err) = $publisher->psql('postgres',
		"SELECT count(*) FROM local_t;\n\\set VERBOSITY verbose\n$sql");
	like($err, $why, "refused: $name")
	  or diag("rc $rc, stderr: $err");
}
refused('CREATE PUBLICATION p_t FOR TABLE local_t', 'CREATE PUBLICATION ... FOR TABLE');
is($publisher->safe_psql('postgres', "SELECT count(*) FROM pg_publication WHERE pubname = 'p_t'"),
	'0', 'the publication was not created');
refused('ALTER PUBLICATION p_s ADD TABLE local_t', 'ALTER PUBLICATION ... ADD TABLE');
is($publisher->safe_psql('postgres', "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_publication_tables WHERE pubname = 'p_s'"),
	's', 'the publication still has its own table only');
# (FOR ALL TABLES would also take tessera's catalog, which it may take
# empty only where the rows of tessera tables are decodable)
refused('CREATE PUBLICATION p_all FOR ALL TABLES', 'CREATE PUBLICATION ... FOR ALL TABLES',
	qr/0A000.*tessera_internal/);
is($publisher->safe_psql('postgres', "SELECT count(*) FROM pg_publication WHERE pubname = 'p_all'"),
	'0', 'the FOR ALL TABLES publication was not created');
refused('CREATE PUBLICATION p_schema FOR TABLES IN SCHEMA public', 'CREATE PUBLICATION ... FOR TABLES IN SCHEMA');
refused('ALTER TABLE f SET ACCESS METHOD tessera', 'moving a published table to tessera');
is($publisher->safe_psql('postgres',
		"SELECT amname FROM pg_class JOIN pg_am ON pg_am.oid = relam WHERE relname = 'f'"),
	'heap', 'the published table stays heap');

$publisher->stop;
done_testing();
