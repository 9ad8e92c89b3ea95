# Crash recovery: after kill -9 or an immediate shutdown, during and after
# loads, every committed row is there and no uncommitted one is.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

my $node = tessera_node('crash');
$node->safe_psql('postgres', q{
	CREATE TABLE t (c1 int, c2 text, c3 int, c4 numeric, c5 timestamp) USING tessera
		WITH (tessera_stripe_row_limit = 20000, tessera_row_group_row_limit = 3000);
	CREATE TABLE h (c1 int, c2 text, c3 int, c4 numeric, c5 timestamp);
	CREATE UNLOGGED TABLE u (a int) USING tessera;
});
$node->safe_psql('postgres', seed_sql('t', 1, 50000));
$node->safe_psql('postgres', seed_sql('h', 1, 50000));
$node->safe_psql('postgres', 'INSERT INTO u SELECT generate_series(1, 1000)');
my $agg = 'SELECT count(*), sum(c1), sum(c3), sum(c4), max(c5), count(DISTINCT c2) FROM';
my $expect = $node->safe_psql('postgres', "$agg h");

# 1. an open transaction has loaded (and written out) rows, then the server
#    goes down without a checkpoint
my $open = $node->background_psql('postgres');
$open->query_safe('BEGIN');
$open->query_safe(seed_sql('t', 50001, 90000, 'uncommitted'));
$open->query_safe('SELECT count(*) FROM t');    # forces the stripe to disk
$open->query_safe('INSERT INTO t VALUES (-1, \'uncommitted\')');
# and a committed transaction right before the crash, not yet checkpointed
$node->safe_psql('postgres', seed_sql('t', 90001, 91000, 'late'));
$node->safe_psql('postgres', seed_sql('h', 90001, 91000, 'late'));
$expect = $node->safe_psql('postgres', "$agg h");
crash_and_restart($node);
$open->{run}->kill_kill;

is($node->safe_psql('postgres', "$agg t"), $expect, 'committed rows survive an immediate shutdown');
is($node->safe_psql('postgres', "SELECT count(*) FROM t WHERE c2 = 'uncommitted'"), '0',
	'uncommitted rows are gone');
is($node->safe_psql('postgres', 'SELECT count(*) FROM u'), '0', 'unlogged table is empty after the crash');
$node->safe_psql('postgres', 'INSERT INTO u SELECT generate_series(1, 10)');
is($node->safe_psql('postgres', 'SELECT count(*), sum(a) FROM u'), '10|55',
	'unlogged table is writable after the crash');
is( $node->safe_psql('postgres',
		"SELECT (SELECT sum(row_count) FROM tessera.stripes WHERE relation = 't'::regclass) = (SELECT count(*) FROM t)"),
	't', 'stripe catalog agrees with the rows');

# 2. kill -9 of the backend in the middle of a large load, after it has
#    written many stripes: the postmaster resets and replays WAL
my $size_before = $node->safe_psql('postgres', "SELECT pg_relation_size('t')");
my $loader = $node->background_psql('postgres', on_error_stop => 0);
my $loader_pid = $loader->query_safe('SELECT pg_backend_pid()');
$loader->{stdin} .= seed_sql('t', 100001, 400000, 'interrupted')
  . " WHERE (i < 400000 OR pg_sleep(600) IS NOT NULL);\n";
$loader->{run}->pump_nb;
$node->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event = 'PgSleep'")
  or die 'load did not reach its pause';
ok($node->safe_psql('postgres', "SELECT pg_relation_size('t') > $size_before") eq 't',
	'the interrupted load had written stripes');
crash_and_restart($node, $loader_pid);
$loader->{run}->kill_kill;
is($node->safe_psql('postgres', "$agg t"), $expect, 'a load killed half-way leaves no rows');

# 3. writes keep working and row numbers are never reused
my $before = $node->safe_psql('postgres', 'SELECT max(ctid) FROM t');
$node->safe_psql('postgres', seed_sql('t', 200001, 200100, 'after'));
$node->safe_psql('postgres', seed_sql('h', 200001, 200100, 'after'));
ok( $node->safe_psql('postgres', "SELECT min(ctid) > '$before'::tid FROM t WHERE c2 = 'after'") eq 't',
	'new rows get new TIDs after recovery');

# 4. immediate shutdown after a committed load with savepoints and a truncate
$node->safe_psql('postgres', q{
	BEGIN;
	CREATE TABLE t2 (a int) USING tessera;
	INSERT INTO t2 SELECT generate_series(1, 100);
	SAVEPOINT s;
	INSERT INTO t2 SELECT generate_series(1000, 2000);
	ROLLBACK TO s;
	TRUNCATE t2;
	INSERT INTO t2 SELECT generate_series(1, 7);
	COMMIT;
});
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*), sum(a) FROM t2'), '7|28', 'transactional truncate replays');
is($node->safe_psql('postgres', "$agg t"), $node->safe_psql('postgres', "$agg h"),
	'table matches heap after the second crash');

# 5. a crash leaves a session's temporary tessera tables without files;
# the next session given that temp namespace drops them and goes on
my $temp = $node->background_psql('postgres');
$temp->query_safe(q{
	CREATE TEMP TABLE tmp1 (a int, b text) USING tessera;
	INSERT INTO tmp1 SELECT i, md5(i::text) FROM generate_series(1, 5000) i;
	CREATE INDEX ON tmp1 (a);
});
my $temp_ns = $temp->query_safe('SELECT pg_my_temp_schema()::regnamespace');
my $temp_pid = $temp->query_safe('SELECT pg_backend_pid()');
crash_and_restart($node, $temp_pid);
eval { $temp->quit };
my $ok = 1;
my $reused = 0;
# sessions until one is given the crashed session's namespace (which one a
# session gets depends on the backend slots free at the time: under load an
# autovacuum worker may hold that slot for a while)
for my $i (1 .. 40)
{
	my ($ret, $out, $err) = $node->psql('postgres', q{
		CREATE TEMP TABLE tmp2 (a int) USING tessera;
		INSERT INTO tmp2 SELECT generate_series(1, 10);
		SELECT pg_my_temp_schema()::regnamespace, sum(a) FROM tmp2});
	$ok = 0 unless $ret == 0 && $out =~ /\|55$/;
	diag("session $i: $err") if $ret != 0;
	$reused = 1 if $ret == 0 && $out =~ /^\Q$temp_ns\E\|/;
	last if $reused && $i >= 8;
}
ok($ok, "temporary tessera tables work in every session after a crash (the crashed session's were in $temp_ns)");
ok($reused, "a later session was given $temp_ns");
is($node->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relnamespace = '$temp_ns'::regnamespace AND relname = 'tmp1'"),
	'0', 'the crashed session\'s temporary table is gone once its namespace is reused');

$node->stop;
done_testing();
