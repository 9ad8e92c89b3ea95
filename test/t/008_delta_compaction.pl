# Small writes live in the delta (the stripe catalog) until compaction moves
# them into stripes.  A crash during or right after a compaction loses no
# committed row and duplicates none; a standby agrees throughout; background
# compaction runs and logs.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

my $primary = tessera_node('primary', allows_streaming => 1,
	conf => "tessera.autocompact_stripes = 0\n");
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres', q{
	CREATE TABLE t (c1 int PRIMARY KEY, c2 text, c3 int, c4 numeric, c5 timestamp) USING tessera;
	CREATE TABLE h (c1 int PRIMARY KEY, c2 text, c3 int, c4 numeric, c5 timestamp);
});

# 300 small transactions into both, some rolled back, some rows changed
for my $k (0 .. 299)
{
	my ($lo, $hi) = ($k * 10 + 1, $k * 10 + 10);
	if ($k % 37 == 5)
	{
		$primary->safe_psql('postgres',
			'BEGIN; ' . seed_sql('t', $lo, $hi, 'aborted') . '; ROLLBACK;');
		next;
	}
	$primary->safe_psql('postgres', seed_sql('t', $lo, $hi) . '; ' . seed_sql('h', $lo, $hi));
}
$primary->safe_psql('postgres', q{
	UPDATE t SET c3 = -1 WHERE c1 % 50 = 1;
	UPDATE h SET c3 = -1 WHERE c1 % 50 = 1;
	DELETE FROM t WHERE c1 % 50 = 2;
	DELETE FROM h WHERE c1 % 50 = 2;
});

my $agg = 'SELECT count(*), count(DISTINCT c1), sum(c1), sum(c3), sum(c4), max(c5) FROM';
my $expect = $primary->safe_psql('postgres', "$agg h");
my $delta = q{SELECT count(*) FROM tessera.stripes WHERE relation = 't'::regclass AND in_delta};
ok($primary->safe_psql('postgres', $delta) > 250, 'small writes are in the delta');
is($primary->safe_psql('postgres', "$agg t"), $expect, 'delta rows read like heap rows');

# 1. a compaction that has written its stripe but not committed, then a crash
my $open = $primary->background_psql('postgres');
$open->query_safe('BEGIN');
ok($open->query_safe(q{SELECT tessera.compact('t')}) > 0, 'compaction moved rows (uncommitted)');
$open->query_safe('SELECT 1');
crash_and_restart($primary);
$open->{run}->kill_kill;
is($primary->safe_psql('postgres', "$agg t"), $expect, 'uncommitted compaction: same rows after a crash');
ok($primary->safe_psql('postgres', $delta) > 250, 'uncommitted compaction: the delta is still there');

# 2. a committed compaction, no checkpoint, then a crash
ok($primary->safe_psql('postgres', q{SELECT tessera.compact('t')}) > 0, 'compaction committed');
crash_and_restart($primary);
is($primary->safe_psql('postgres', "$agg t"), $expect, 'committed compaction: same rows after a crash');
is($primary->safe_psql('postgres', $delta), '0', 'committed compaction: the delta is empty');
is( $primary->safe_psql('postgres', q{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*), sum(c3) FROM t WHERE c1 IN (1, 51, 52, 1001, 2999, 3000)}),
	$primary->safe_psql('postgres', q{
		SELECT count(*), sum(c3) FROM h WHERE c1 IN (1, 51, 52, 1001, 2999, 3000)}),
	'index scans find the moved rows');

# 3. the standby replayed all of it
$primary->wait_for_catchup($standby);
same_results($primary, $standby, "$agg t", 'standby agrees after compaction');
same_results($primary, $standby, 'SELECT c1, c3 FROM t WHERE c1 % 50 IN (1, 2) ORDER BY c1',
	'standby agrees on changed rows');

# 4. changes after the move, then VACUUM (compacts new small writes too)
$primary->safe_psql('postgres', q{
	UPDATE t SET c3 = -2 WHERE c1 % 50 = 3;
	UPDATE h SET c3 = -2 WHERE c1 % 50 = 3;
});
$primary->safe_psql('postgres', seed_sql('t', 5001, 5010) . '; ' . seed_sql('h', 5001, 5010));
$primary->safe_psql('postgres', seed_sql('t', 5011, 5020) . '; ' . seed_sql('h', 5011, 5020));
$primary->safe_psql('postgres', 'VACUUM t');
$expect = $primary->safe_psql('postgres', "$agg h");
is($primary->safe_psql('postgres', "$agg t"), $expect, 'changes after compaction, then VACUUM');
is($primary->safe_psql('postgres', $delta), '0', 'VACUUM compacted the new small writes');
crash_and_restart($primary);
is($primary->safe_psql('postgres', "$agg t"), $expect, 'and survive a crash');
$primary->wait_for_catchup($standby);
same_results($primary, $standby, "$agg t", 'standby agrees after VACUUM');

# 5. background compaction: a worker starts after every N-th small write
$primary->safe_psql('postgres', 'ALTER SYSTEM SET tessera.autocompact_stripes = 16');
$primary->safe_psql('postgres', 'SELECT pg_reload_conf()');
for my $k (0 .. 47)
{
	my ($lo, $hi) = (6001 + $k * 5, 6005 + $k * 5);
	$primary->safe_psql('postgres', seed_sql('t', $lo, $hi) . '; ' . seed_sql('h', $lo, $hi));
}
ok( $primary->poll_query_until('postgres',
		q{SELECT count(*) < 16 FROM tessera.stripes WHERE relation = 't'::regclass AND in_delta}),
	'background workers compacted the delta');
is($primary->safe_psql('postgres', "$agg t"), $primary->safe_psql('postgres', "$agg h"),
	'same rows after background compaction');
ok( $primary->wait_for_log(qr/tessera compaction of "public\.t": \d+ delta rows moved/),
	'background compaction is logged');

$standby->stop;
$primary->stop;
done_testing();
