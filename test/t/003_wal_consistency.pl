# wal_consistency_checking = all: a standby replaying tessera's WAL (full
# page images, generic WAL for the metapage, heap records for the catalog)
# rebuilds exactly the pages the primary wrote.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

my $primary = tessera_node('primary', allows_streaming => 1,
	conf => "wal_consistency_checking = 'all'\nwal_keep_size = '1GB'");
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "wal_consistency_checking = 'all'");
$standby->start;

$primary->safe_psql('postgres', q{
	CREATE TABLE t (c1 int, c2 text, c3 int, c4 numeric, c5 timestamp) USING tessera
		WITH (tessera_stripe_row_limit = 10000, tessera_row_group_row_limit = 1000);
});
$primary->safe_psql('postgres', seed_sql('t', 1, 40000));
$primary->safe_psql('postgres', q{
	BEGIN;
	INSERT INTO t (c1) SELECT generate_series(1, 100);
	SAVEPOINT s;
	INSERT INTO t (c1) SELECT generate_series(1, 100);
	SELECT count(*) FROM t;
	ROLLBACK TO s;
	COMMIT;
	TRUNCATE t;
	INSERT INTO t (c1, c2) SELECT i, repeat('v', i % 500) FROM generate_series(1, 5000) i;
	CREATE UNLOGGED TABLE u (a int) USING tessera;
	INSERT INTO u SELECT generate_series(1, 100);
	VACUUM FULL t;
	ALTER TABLE t SET (tessera_compression = 'pglz');
	INSERT INTO t (c1) SELECT generate_series(1, 3000);
});

# deletes, updates and VACUUM giving their space back: folded stripes,
# cleared row states, unhooked and moved state pages, moved stripes,
# truncation (VACUUM runs outside a multi-statement string)
$primary->safe_psql('postgres', q{
	CREATE TABLE d (a int PRIMARY KEY, b text) USING tessera
		WITH (tessera_stripe_row_limit = 2000, tessera_row_group_row_limit = 500);
	INSERT INTO d SELECT g, 'x' || g FROM generate_series(1, 6000) g;
	UPDATE d SET b = 'u' WHERE a % 300 = 1;
	DELETE FROM d WHERE a % 2 = 0;
});
$primary->safe_psql('postgres', 'VACUUM d');
$primary->safe_psql('postgres', q{
	DELETE FROM d WHERE a > 4000;
	UPDATE d SET b = 'w' WHERE a % 7 = 0;
});
$primary->safe_psql('postgres', 'VACUUM d');
is($primary->safe_psql('postgres',
		"SELECT sum(folded_rows) > 0 FROM tessera.row_groups WHERE relation = 'd'::regclass"),
	't', 'VACUUM folded rows under wal_consistency_checking');
$primary->wait_for_catchup($standby);

same_results($primary, $standby, 'SELECT count(*), sum(a), max(b) FROM d',
	'standby replayed the space given back');
same_results($primary, $standby, 'SELECT count(*), sum(c1), sum(length(c2)) FROM t',
	'standby replayed with consistency checks');
ok(!$standby->log_contains('inconsistent page found'), 'no inconsistent page on the standby');

# crash recovery on the primary replays with checks too
crash_and_restart($primary);
is($primary->safe_psql('postgres', 'SELECT count(*) FROM t'), '8000', 'crash recovery replayed');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM d'), '2000', 'crash recovery replayed the reclaim');
ok(!$primary->log_contains('inconsistent page found'), 'no inconsistent page in crash recovery');

$primary->stop;
$standby->stop;
done_testing();
