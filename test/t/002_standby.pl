# A streaming standby returns the same results as the primary for every
# kind of change, and keeps working after promotion.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

my $primary = tessera_node('primary', allows_streaming => 1);
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres', q{
	CREATE TABLE t (c1 int, c2 text, c3 int, c4 numeric, c5 timestamp) USING tessera
		WITH (tessera_compression = 'lz4', tessera_row_group_row_limit = 2000);
	CREATE TABLE p (k int, v text) PARTITION BY RANGE (k);
	CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (1000) USING tessera;
	CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (1000) TO (2000) USING tessera;
});
$primary->safe_psql('postgres', seed_sql('t', 1, 60000));
$primary->safe_psql('postgres', q{
	INSERT INTO p SELECT i, md5(i::text) FROM generate_series(0, 1999) i;
	BEGIN;
	INSERT INTO t VALUES (-1, 'rolled back', 0, 0, NULL);
	SAVEPOINT a;
	INSERT INTO t VALUES (-2, 'kept', 0, 0, NULL);
	RELEASE a;
	SAVEPOINT b;
	INSERT INTO t VALUES (-3, 'rolled back', 0, 0, NULL);
	ROLLBACK TO b;
	COMMIT;
	BEGIN;
	INSERT INTO t VALUES (-4, 'rolled back', 0, 0, NULL);
	ROLLBACK;
	ALTER TABLE t ADD COLUMN c6 int DEFAULT 6;
	CREATE TABLE t_full USING tessera AS SELECT * FROM t WHERE c1 % 3 = 0;
	VACUUM FULL t_full;
	CREATE TABLE t_trunc (a int) USING tessera;
	INSERT INTO t_trunc SELECT generate_series(1, 100);
	TRUNCATE t_trunc;
	INSERT INTO t_trunc SELECT generate_series(1, 5);
	CREATE TABLE t_am (a int, b text);
	INSERT INTO t_am SELECT i, 'x' || i FROM generate_series(1, 3000) i;
	ALTER TABLE t_am SET ACCESS METHOD tessera;
});
$primary->wait_for_catchup($standby);

my @queries = (
	'SELECT count(*), sum(c1), sum(c3), sum(c4), max(c5), sum(c6) FROM t',
	"SELECT c1, c2 FROM t WHERE c1 < 0 ORDER BY c1",
	'SELECT c3, count(*), avg(c4) FROM t GROUP BY c3 ORDER BY c3',
	'SELECT tableoid::regclass, count(*), max(v) FROM p GROUP BY 1 ORDER BY 1',
	'SELECT count(*), sum(c1) FROM t_full',
	'SELECT count(*), sum(a) FROM t_trunc',
	'SELECT count(*), sum(a), max(b) FROM t_am',
	"SELECT relation, stripe_id, row_count, data_bytes FROM tessera.stripes ORDER BY 1, 2",
	"SELECT relation, compression FROM tessera.options ORDER BY 1",
);
same_results($primary, $standby, $_, "standby agrees: $_") foreach @queries;

# a parallel scan on the standby
is( $standby->safe_psql('postgres', q{
		SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
		SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
		SELECT count(*), sum(c1) FROM t}),
	$primary->safe_psql('postgres', 'SELECT count(*), sum(c1) FROM t'),
	'parallel scan on the standby');

# the standby refuses writes cleanly
my ($ret, $out, $err) = $standby->psql('postgres', 'INSERT INTO t (c1) VALUES (1)');
like($err, qr/read-only transaction/, 'standby rejects writes');

# promotion: the new primary writes where the old one stopped
$standby->promote;
$standby->safe_psql('postgres', seed_sql('t', 70001, 70100, 'after promotion'));
is($standby->safe_psql('postgres', "SELECT count(*) FROM t WHERE c2 = 'after promotion'"), '100',
	'writes after promotion');
is( $standby->safe_psql('postgres',
		"SELECT count(*) = count(DISTINCT ctid) FROM t"),
	't', 'TIDs stay unique after promotion');

$primary->stop;
$standby->stop;
done_testing();
