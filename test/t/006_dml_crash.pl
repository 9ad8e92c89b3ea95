# Crash recovery and a streaming standby for writes that change existing
# rows.  A tessera table with a primary key and a heap twin get the same
# UPDATEs (of key and non-key columns), DELETEs, MERGEs and VACUUMs; after
# each of these crashes of the primary
#   1. immediate shutdown after committed UPDATE / DELETE / VACUUM,
#   2. kill -9 of a backend after committed UPDATE / DELETE / MERGE / VACUUM,
#   3. immediate shutdown while an UPDATE and a DELETE are done but not
#      committed, an UPDATE is still running, rows are locked FOR UPDATE and
#      an UPDATE and a DELETE are prepared (two-phase),
#   4. kill -9 of a backend in the middle of a DELETE while another
#      session's UPDATE is not committed,
#   5. kill -9 of a VACUUM half-way (its index pass has begun) of a table
#      with many deleted rows, and an immediate shutdown right after a
#      completed VACUUM,
# the tessera table holds exactly the heap twin's rows (aggregates and an
# md5 of the ordered full dump) through a seq scan, an index scan, a bitmap
# scan and tessera's custom scan where it has one (the plans are checked),
# on the primary and on the standby; the primary key passes amcheck's
# bt_index_check with heapallindexed where amcheck is installed; the lost
# transactions' rows can be changed again.  Finally (6) a standby query's
# REPEATABLE READ snapshot keeps seeing rows that the primary deletes or
# updates and then vacuums away, or the query is cancelled by a recovery
# conflict, as for heap.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

my $primary = tessera_node('primary', allows_streaming => 1, conf => 'autovacuum = off');
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', 'max_standby_streaming_delay = 1s');
$standby->start;

my $have_amcheck = $primary->safe_psql('postgres',
	"SELECT count(*) FROM pg_available_extensions WHERE name = 'amcheck'") eq '1';
my $have_pageinspect = $primary->safe_psql('postgres',
	"SELECT count(*) FROM pg_available_extensions WHERE name = 'pageinspect'") eq '1';
$primary->safe_psql('postgres', 'CREATE EXTENSION amcheck') if $have_amcheck;
$primary->safe_psql('postgres', 'CREATE EXTENSION pageinspect') if $have_pageinspect;

$primary->safe_psql('postgres', q{
	CREATE TABLE t (c1 int PRIMARY KEY, c2 text, c3 int, c4 numeric, c5 timestamp) USING tessera
		WITH (tessera_stripe_row_limit = 20000, tessera_row_group_row_limit = 3000);
	CREATE TABLE h (c1 int PRIMARY KEY, c2 text, c3 int, c4 numeric, c5 timestamp);
});
$primary->safe_psql('postgres', seed_sql('t', 1, 100000));
$primary->safe_psql('postgres', seed_sql('h', 1, 100000));

# A statement ({t} is the table) run on the tessera table and on the heap
# twin: both change the same number of rows.
sub both
{
	my ($sql) = @_;
	my %n;
	foreach my $tab ('t', 'h')
	{
		(my $s = $sql) =~ s/\{t\}/$tab/g;
		$n{$tab} = $primary->safe_psql('postgres',
			"SET lock_timeout = '10s';\n$s;\n\\echo :ROW_COUNT");
	}
	is($n{t}, $n{h}, "same row count as heap: $sql");
}

# Aggregates and an md5 of every row in c1 order; the range covers every row.
my $dump = q{SELECT count(*), sum(c1), sum(c3), sum(c4), max(c5), count(DISTINCT c2),
	md5(string_agg(x::text, '|' ORDER BY c1)) FROM %s x WHERE c1 BETWEEN -1000000 AND 2000000};
# Scans of t, each with the plan it must get.  Where tessera has its custom
# scan (TesseraScan) the plain Seq Scan is checked with it turned off, and
# the custom scan on its own.
my $have_custom = $primary->safe_psql('postgres',
	"SELECT count(*) FROM pg_settings WHERE name = 'tessera.enable_custom_scan'") eq '1';
my $no_custom = $have_custom ? 'SET tessera.enable_custom_scan = off;' : '';
my %scan = (
	seq => [ "$no_custom SET enable_indexscan = off; SET enable_bitmapscan = off;", qr/Seq Scan on t x/ ],
	index => [ 'SET enable_seqscan = off; SET enable_bitmapscan = off;', qr/Index Scan using t_pkey on t x/ ],
	bitmap => [ 'SET enable_seqscan = off; SET enable_indexscan = off;', qr/Bitmap Heap Scan on t x/ ],
	custom => [ 'SET enable_indexscan = off; SET enable_bitmapscan = off;', qr/Custom Scan \(TesseraScan\) on t x/ ],
);
my @modes = ('seq', 'index', 'bitmap', $have_custom ? ('custom') : ());

# Which rows differ between t and h on a node (for the log of a failure).
sub show_diff
{
	my ($node) = @_;
	diag($node->safe_psql('postgres', q{
		SET enable_indexscan = off; SET enable_bitmapscan = off;
		SELECT 'only in t', a.* FROM (SELECT * FROM t EXCEPT ALL SELECT * FROM h) a
		UNION ALL
		SELECT 'only in h', b.* FROM (SELECT * FROM h EXCEPT ALL SELECT * FROM t) b
		ORDER BY 2 LIMIT 20}));
}

# The heap twin's contents on the primary are the truth; the tessera table
# must return them through every scan, on the primary and on the standby.
sub check_contents
{
	my ($phase) = @_;
	$primary->wait_for_catchup($standby);
	my $expect = $primary->safe_psql('postgres', "$scan{seq}[0] " . sprintf($dump, 'h'));
	foreach my $node ($primary, $standby)
	{
		my $who = $node->name;
		foreach my $mode (@modes)
		{
			my ($set, $plan_re) = @{ $scan{$mode} };
			like($node->safe_psql('postgres', "$set EXPLAIN (COSTS OFF) " . sprintf($dump, 't')),
				$plan_re, "$phase: $who plans a $mode scan");
			is($node->safe_psql('postgres', "$set " . sprintf($dump, 't')),
				$expect, "$phase: $who, $mode scan matches heap")
			  or show_diff($node);
		}
		if ($have_amcheck)
		{
			my ($rc, $out, $err) = $node->psql('postgres', "SELECT bt_index_check('t_pkey', true)");
			is("$rc $err", '0 ', "$phase: $who, bt_index_check(heapallindexed) of t_pkey");
		}
	}
}

# kill -9 of one backend; wait until the postmaster has reinitialized and
# crash recovery has finished.
sub kill_backend
{
	my ($node, $pid) = @_;
	my $offset = -s $node->logfile;
	crash_and_restart($node, $pid);
	$node->wait_for_log(qr/database system is ready to accept connections/, $offset);
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'no recovery after killing a backend';
}

# A background session running a statement that pauses in pg_sleep once it
# has changed most of its rows; returns the session and its backend pid.
sub start_paused
{
	my ($sql) = @_;
	my $s = $primary->background_psql('postgres', on_error_stop => 0);
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	$s->{stdin} .= "$sql;\n";
	$s->{run}->pump_nb;
	$primary->poll_query_until('postgres',
		"SELECT wait_event = 'PgSleep' OR wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $pid")
	  or die "statement did not reach its pause: $sql";
	$primary->safe_psql('postgres', "SELECT wait_event FROM pg_stat_activity WHERE pid = $pid") eq 'PgSleep'
	  or die "statement waits for a lock instead of pausing: $sql";
	return ($s, $pid);
}

check_contents('after the load');

# 1. committed UPDATE, DELETE, UPDATE of the key and VACUUM, then an
#    immediate shutdown: no checkpoint, everything is replayed from WAL
both('UPDATE {t} SET c3 = c3 + 1 WHERE c1 <= 50000');
both('DELETE FROM {t} WHERE c1 % 10 = 3');
both("UPDATE {t} SET c1 = c1 + 1000000, c2 = 'moved' WHERE c1 BETWEEN 75001 AND 80000");
$primary->safe_psql('postgres', 'VACUUM t; VACUUM h');
is($primary->safe_psql('postgres', "$scan{seq}[0] " . sprintf($dump, 't')),
	$primary->safe_psql('postgres', "$scan{seq}[0] " . sprintf($dump, 'h')),
	'before the first crash, t matches heap');
crash_and_restart($primary);
check_contents('committed UPDATE/DELETE/VACUUM, immediate shutdown');

# 2. committed UPDATE, DELETE, MERGE and VACUUM, then kill -9 of a backend
both('UPDATE {t} SET c3 = c3 * 2, c4 = c4 + 1 WHERE c1 BETWEEN 50001 AND 70000 AND c3 % 2 = 0');
both('DELETE FROM {t} WHERE c1 BETWEEN 60001 AND 65000');
both(q{MERGE INTO {t} d USING generate_series(62001, 67000) s ON d.c1 = s
	WHEN MATCHED AND s % 3 = 0 THEN DELETE
	WHEN MATCHED THEN UPDATE SET c2 = 'merged', c3 = d.c3 + s
	WHEN NOT MATCHED THEN INSERT VALUES (s, 'merge-inserted', s % 1000, s, NULL)});
$primary->safe_psql('postgres', 'VACUUM t; VACUUM h');
my $victim = $primary->background_psql('postgres', on_error_stop => 0);
kill_backend($primary, $victim->query_safe('SELECT pg_backend_pid()'));
$victim->{run}->kill_kill;
check_contents('committed UPDATE/DELETE/MERGE/VACUUM, kill -9');

# 3. immediate shutdown with changes in progress: an UPDATE done and its
#    new versions written out, a DELETE done, rows locked, an UPDATE still
#    running, and a prepared UPDATE and DELETE
my $size_before = $primary->safe_psql('postgres', "SELECT pg_relation_size('t')");
my $upd = $primary->background_psql('postgres', on_error_stop => 0);
$upd->query_safe('BEGIN');
$upd->query_safe("UPDATE t SET c3 = c3 + 1000, c2 = 'uncommitted' WHERE c1 BETWEEN 30001 AND 45000");
$upd->query_safe('SELECT count(*) FROM t');    # writes the new versions out
my $del = $primary->background_psql('postgres', on_error_stop => 0);
$del->query_safe('BEGIN');
$del->query_safe('DELETE FROM t WHERE c1 BETWEEN 85001 AND 95000');
my $lck = $primary->background_psql('postgres', on_error_stop => 0);
$lck->query_safe('BEGIN');
$lck->query_safe('SELECT count(*) FROM (SELECT 1 FROM t WHERE c1 BETWEEN 10001 AND 12500 FOR UPDATE) s');
$primary->safe_psql('postgres', q{
	BEGIN;
	UPDATE t SET c3 = c3 + 500, c2 = 'prepared' WHERE c1 BETWEEN 5001 AND 7500;
	PREPARE TRANSACTION 'upd';
	BEGIN;
	DELETE FROM t WHERE c1 BETWEEN 7501 AND 10000;
	PREPARE TRANSACTION 'del';
});
my ($run) = start_paused(q{UPDATE t SET c2 = 'running', c3 = -1
	WHERE c1 BETWEEN 45001 AND 59999 AND (c1 < 59500 OR pg_sleep(600) IS NOT NULL)});
ok($primary->safe_psql('postgres', "SELECT pg_relation_size('t') > $size_before") eq 't',
	'the uncommitted changes had been written to the table file');
check_contents('changes in progress');
crash_and_restart($primary);
$_->{run}->kill_kill foreach ($upd, $del, $lck, $run);
check_contents('UPDATE/DELETE in progress, immediate shutdown');

is($primary->safe_psql('postgres', 'SELECT gid FROM pg_prepared_xacts ORDER BY gid'),
	"del\nupd", 'prepared transactions survive the crash');
$primary->safe_psql('postgres', q{
	COMMIT PREPARED 'upd';
	ROLLBACK PREPARED 'del';
	UPDATE h SET c3 = c3 + 500, c2 = 'prepared' WHERE c1 BETWEEN 5001 AND 7500;
});
# the rows of the lost transactions can be changed again
both("UPDATE {t} SET c3 = c3 + 7, c2 = 'after crash' WHERE c1 BETWEEN 30001 AND 45000");
both('DELETE FROM {t} WHERE c1 BETWEEN 85001 AND 90000');
both("UPDATE {t} SET c2 = 'relocked' WHERE c1 BETWEEN 10001 AND 12500");
both('UPDATE {t} SET c3 = c3 - 1 WHERE c1 BETWEEN 45001 AND 59999');
both('DELETE FROM {t} WHERE c1 BETWEEN 7501 AND 8000');
both("UPDATE {t} SET c4 = -c4 WHERE c1 BETWEEN 5001 AND 5500");
check_contents('prepared transactions resolved, lost rows changed again');

# 4. kill -9 of a backend half-way through a DELETE, while another session
#    has updated rows without committing
$upd = $primary->background_psql('postgres', on_error_stop => 0);
$upd->query_safe('BEGIN');
$upd->query_safe("UPDATE t SET c4 = 0, c2 = 'uncommitted' WHERE c1 BETWEEN 15001 AND 22500");
my $run_pid;
($run, $run_pid) = start_paused(q{DELETE FROM t
	WHERE c1 BETWEEN 85001 AND 99999 AND (c1 < 97500 OR pg_sleep(600) IS NOT NULL)});
kill_backend($primary, $run_pid);
$_->{run}->kill_kill foreach ($upd, $run);
check_contents('DELETE in progress, kill -9');
both('DELETE FROM {t} WHERE c1 BETWEEN 90001 AND 92000');
both("UPDATE {t} SET c4 = c4 * 3, c2 = 'again' WHERE c1 BETWEEN 15001 AND 22500");

# 5. VACUUM of a table with many deleted rows, killed once its index pass
#    has begun (slowed down by the cost delay), then a complete VACUUM
#    (which folds the dead rows and gives pages back) followed by an
#    immediate shutdown
both('DELETE FROM {t} WHERE c1 % 3 = 0');
$primary->safe_psql('postgres', 'VACUUM h');
my $lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
my $vac = $primary->background_psql('postgres', on_error_stop => 0);
my $vac_pid = $vac->query_safe('SELECT pg_backend_pid()');
$vac->query_safe(q{SET vacuum_cost_delay = '2ms'; SET vacuum_cost_limit = 1});
$vac->{stdin} .= "VACUUM t;\n";
$vac->{run}->pump_nb;
if ($have_pageinspect)
{
	# a leaf page of the primary key written after the VACUUM began
	$primary->poll_query_until('postgres', qq{
		SELECT count(*) > 0 FROM generate_series(1, (pg_relation_size('t_pkey') / 8192)::int - 1) b
		WHERE (page_header(get_raw_page('t_pkey', b))).lsn > '$lsn'})
	  or die 'VACUUM did not reach its index pass';
}
else
{
	$primary->poll_query_until('postgres',
		"SELECT wait_event = 'VacuumDelay' FROM pg_stat_activity WHERE pid = $vac_pid")
	  or die 'VACUUM did not start';
	sleep 1;
}
ok( $primary->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE pid = $vac_pid AND query = 'VACUUM t;'") eq '1',
	'VACUUM was still running when killed');
kill_backend($primary, $vac_pid);
$vac->{run}->kill_kill;
check_contents('VACUUM killed half-way');

$primary->safe_psql('postgres', 'VACUUM t');
crash_and_restart($primary);
check_contents('immediate shutdown right after VACUUM');

# that VACUUM folded the deleted rows out of their stripes and gave pages
# back (moved and truncated); the standby's file is the primary's
is($primary->safe_psql('postgres',
		"SELECT sum(folded_rows) > 0 FROM tessera.row_groups WHERE relation = 't'::regclass"),
	't', 'VACUUM folded the deleted rows');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('flush'));
is($standby->safe_psql('postgres', "SELECT pg_relation_size('t')"),
	$primary->safe_psql('postgres', "SELECT pg_relation_size('t')"),
	'standby: same relation size after the pages were given back');
both("UPDATE {t} SET c3 = c3 + 1, c2 = c2 || '+' WHERE c1 % 2 = 0");
both('DELETE FROM {t} WHERE c1 % 7 = 0');
check_contents('writes after the last crash');

# 6. a standby query's snapshot: rows that the primary deletes or updates
#    and then vacuums away stay visible to it, or it is cancelled by a
#    recovery conflict (as happens for heap); it never silently loses them
foreach my $tab ('h', 't')
{
	my $reader = $standby->background_psql('postgres', on_error_stop => 0);
	$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
	my $before = $reader->query_safe("SELECT count(*), sum(c3) FROM $tab");
	$primary->safe_psql('postgres', qq{
		DELETE FROM $tab WHERE c1 BETWEEN 1 AND 30000;
		UPDATE $tab SET c3 = c3 + 1 WHERE c1 BETWEEN 30001 AND 60000;
		VACUUM $tab;
	});
	$primary->wait_for_catchup($standby);
	# a conflict cancels the query, or terminates the idle session (psql exits)
	my ($seq, $idx);
	eval {
		($seq) = $reader->query("$scan{seq}[0] SELECT count(*), sum(c3) FROM $tab");
		($idx) = $reader->query(
			"$scan{index}[0] SELECT count(*), sum(c3) FROM $tab WHERE c1 BETWEEN -1000000 AND 2000000");
	};
	if ($reader->{stderr} =~ /conflict with recovery/)
	{
		pass("standby snapshot on $tab: cancelled by a recovery conflict");
	}
	else
	{
		is($seq, $before, "standby snapshot on $tab: seq scan still sees the old rows");
		is($idx, $before, "standby snapshot on $tab: index scan still sees the old rows");
	}
	$reader->{run}->kill_kill;
}

$standby->stop;
$primary->stop;
done_testing();
