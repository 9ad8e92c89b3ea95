# tessera tables as the source of logical replication: a random workload
# (single-row, multi-row and COPY inserts, INSERT ... SELECT, updates of
# key and non-key columns, deletes, ON CONFLICT, savepoints rolled back and
# released, aborted transactions, two-phase commits, TRUNCATE) runs on
# tessera tables and on heap twins, one seed after another.
#  - test_decoding gives the same change stream for the tessera tables as
#    for their heap twins (relation names aside), for REPLICA IDENTITY
#    DEFAULT, FULL and NOTHING, and nothing of tessera's own catalog;
#  - pgoutput subscribers, one with heap tables (two-phase) and one with tessera (streaming)
#    tables, hold exactly the publisher's rows after every seed, also after
#    concurrent pgbench writers, a publisher crash in the middle of a
#    transaction and a subscriber crash while it applies;
#  - a FOR ALL TABLES publication carries the user tables, and none of
#    tessera's catalog rows: the subscriber's own tessera tables stay
#    intact;
#  - decoding again from an older position (peek, then get) gives the same
#    changes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Spec;
use Time::HiRes qw(usleep);
use TesseraNode;

my $seeds = $ENV{TESSERA_LOGICAL_SEEDS} // 10;

my $pub = tessera_node('publisher', allows_streaming => 'logical',
	conf => "logical_decoding_work_mem = 64kB\n");
my $sub = tessera_node('subscriber', conf => "max_logical_replication_workers = 8\n"
	  . "max_worker_processes = 16\n");

# The tables, twice: suffix _h (heap) and _t (tessera).
my $ddl = q{
	CREATE TABLE k_AM (id int PRIMARY KEY, a int, b text, c numeric(12,2), d timestamptz) USING AMNAME;
	CREATE TABLE f_AM (x int, y text, z float8) USING AMNAME;
	ALTER TABLE f_AM REPLICA IDENTITY FULL;
	CREATE TABLE u_AM (id int NOT NULL, v text, w date) USING AMNAME;
	CREATE UNIQUE INDEX u_AM_id ON u_AM (id);
	ALTER TABLE u_AM REPLICA IDENTITY USING INDEX u_AM_id;
};
sub tables_sql
{
	my ($suffix, $am) = @_;
	my $s = $ddl;
	$s =~ s/_AM/_$suffix/g;
	$s =~ s/AMNAME/$am/g;
	return $s;
}
$pub->safe_psql('postgres', tables_sql('h', 'heap') . tables_sql('t', 'tessera') . q{
	-- REPLICA IDENTITY NOTHING: decoded, not published (no deletes possible there)
	CREATE TABLE n_h (a int, b text);
	CREATE TABLE n_t (a int, b text) USING tessera;
	ALTER TABLE n_h REPLICA IDENTITY NOTHING;
	ALTER TABLE n_t REPLICA IDENTITY NOTHING;
	CREATE PUBLICATION pub_t FOR TABLE k_t, f_t, u_t;
	SELECT pg_create_logical_replication_slot('td', 'test_decoding');
});

# subscribers: database sub_heap (heap tables) and sub_tess (tessera tables)
foreach my $db ('sub_heap', 'sub_tess')
{
	my $am = $db eq 'sub_heap' ? 'heap' : 'tessera';
	$sub->safe_psql('postgres', "CREATE DATABASE $db");
	$sub->safe_psql($db, "CREATE EXTENSION tessera");
	$sub->safe_psql($db, tables_sql('t', $am));
	my $conn = $pub->connstr . ' dbname=postgres';
	# the heap subscriber decodes prepared transactions at PREPARE, the
	# tessera one receives large transactions streamed while in progress
	my $with = $db eq 'sub_heap' ? 'two_phase = true' : 'streaming = on';
	$sub->safe_psql($db, "CREATE SUBSCRIPTION s_$db CONNECTION '$conn' PUBLICATION pub_t WITH ($with)");
}

# absolute: the server reads it (basedir is relative on some versions)
my $copy_file = File::Spec->rel2abs($pub->basedir) . '/rows.csv';

# One random workload on the tables with suffix SFX, as SQL text; the same
# seed gives the same statements for both suffixes.
sub workload
{
	my ($seed, $sfx) = @_;
	srand($seed);
	my @out;
	my $next_id = 1 + 100000 * $seed;
	my $word = sub { join('', map { chr(97 + int(rand(26))) } 1 .. 1 + int(rand(12))) };
	my $kval = sub {
		my $id = shift;
		my $b = rand() < 0.1 ? 'NULL' : "'" . $word->() . "'";
		sprintf("(%d, %d, %s, %.2f, timestamptz '2024-01-01 00:00:00+00' + %d * interval '1 minute')",
			$id, int(rand(1000)), $b, rand(100000) - 50000, int(rand(100000)));
	};
	open(my $csv, '>', $copy_file) or die;
	for my $i (1 .. 300)
	{
		printf $csv "%d,%d,%s,%.2f,2024-02-%02d 10:00:00+00\n", 9000000 + $seed * 1000 + $i,
		  int(rand(100)), $word->(), rand(1000), 1 + int(rand(27));
	}
	close($csv);
	for my $step (1 .. 40)
	{
		my $r = rand();
		my $s;
		if ($r < 0.15)
		{
			$s = "INSERT INTO k_SFX VALUES " . join(', ', map { $kval->($next_id++) } 1 .. 1 + int(rand(20))) . ";";
		}
		elsif ($r < 0.22)
		{
			my $n = 1 + int(rand(3000));
			$s = "INSERT INTO k_SFX SELECT i, i % 97, 'gen' || (i % 13), i / 7.0, NULL FROM generate_series($next_id, "
			  . ($next_id + $n - 1) . ") i;";
			$next_id += $n;
		}
		elsif ($r < 0.27)
		{
			$s = "UPDATE k_SFX SET a = a + 1, b = b || 'u' WHERE id % " . (2 + int(rand(9))) . " = 0;";
		}
		elsif ($r < 0.31)
		{
			# this seed's rows not moved yet (its ids stay below +50000)
			$s = "UPDATE k_SFX SET id = id + 50000 WHERE id % 17 = " . int(rand(17))
			  . " AND id BETWEEN 100000 * $seed AND 100000 * $seed + 49999;";
		}
		elsif ($r < 0.36)
		{
			$s = "DELETE FROM k_SFX WHERE id % 11 = " . int(rand(11)) . ";";
		}
		elsif ($r < 0.42)
		{
			my @rows = map { sprintf("(%d, '%s', %.3f)", int(rand(50)), $word->(), rand(10)) } 1 .. 1 + int(rand(30));
			push @rows, "(NULL, NULL, NULL)" if rand() < 0.3;
			$s = "INSERT INTO f_SFX VALUES " . join(', ', @rows) . ";";
		}
		elsif ($r < 0.47)
		{
			$s = "UPDATE f_SFX SET z = z + 1 WHERE x = " . int(rand(50)) . ";";
		}
		elsif ($r < 0.51)
		{
			$s = "DELETE FROM f_SFX WHERE x % 7 = " . int(rand(7)) . ";";
		}
		elsif ($r < 0.58)
		{
			my $id = int(rand(200));
			$s = "INSERT INTO u_SFX VALUES ($id, '" . $word->() . "', date '2024-01-01' + $id) "
			  . "ON CONFLICT (id) DO UPDATE SET v = excluded.v || '+';";
		}
		elsif ($r < 0.61)
		{
			$s = "INSERT INTO u_SFX VALUES (" . int(rand(200)) . ", 'x', NULL) ON CONFLICT DO NOTHING;";
		}
		elsif ($r < 0.64)
		{
			$s = "UPDATE u_SFX SET id = id + 1000 * " . ($seed * 100 + $step) . " WHERE id = " . int(rand(200)) . ";";
		}
		elsif ($r < 0.68)
		{
			$s = "BEGIN; INSERT INTO k_SFX VALUES " . $kval->($next_id++) . "; SAVEPOINT a; "
			  . "UPDATE k_SFX SET a = -1 WHERE id % 5 = 1; DELETE FROM f_SFX WHERE x = 3; "
			  . "ROLLBACK TO SAVEPOINT a; INSERT INTO k_SFX VALUES " . $kval->($next_id++) . "; "
			  . "SAVEPOINT b; INSERT INTO f_SFX VALUES (1, 'sp', 1); RELEASE SAVEPOINT b; COMMIT;";
		}
		elsif ($r < 0.71)
		{
			$s = "BEGIN; INSERT INTO k_SFX VALUES " . $kval->($next_id++) . "; DELETE FROM f_SFX; ROLLBACK;";
		}
		elsif ($r < 0.75)
		{
			$s = "BEGIN; INSERT INTO k_SFX VALUES " . $kval->($next_id++) . "; UPDATE f_SFX SET y = 'prep' WHERE x = "
			  . int(rand(50)) . "; PREPARE TRANSACTION 'p_SFX'; COMMIT PREPARED 'p_SFX';";
		}
		elsif ($r < 0.77)
		{
			$s = "BEGIN; DELETE FROM u_SFX WHERE id < 100; PREPARE TRANSACTION 'p_SFX'; ROLLBACK PREPARED 'p_SFX';";
		}
		elsif ($r < 0.83)
		{
			$s = "COPY k_SFX FROM '$copy_file' WITH (FORMAT csv); DELETE FROM k_SFX WHERE id >= 9000000;";
		}
		elsif ($r < 0.86)
		{
			$s = "TRUNCATE f_SFX;";
		}
		elsif ($r < 0.92)
		{
			$s = "INSERT INTO n_SFX SELECT i, 'n' || i FROM generate_series(1, " . (1 + int(rand(50))) . ") i; "
			  . "UPDATE n_SFX SET b = b || '!' WHERE a % 3 = 0; DELETE FROM n_SFX WHERE a % 4 = 0;";
		}
		else
		{
			$s = "BEGIN; UPDATE k_SFX SET c = -c WHERE id % 3 = 2; INSERT INTO f_SFX VALUES (7, 'seven', 7); "
			  . "UPDATE f_SFX SET y = y || '7' WHERE x = 7; DELETE FROM k_SFX WHERE id % 13 = 4; COMMIT;";
		}
		$s =~ s/_SFX/_$sfx/g;
		push @out, $s;
	}
	return join("\n", @out) . "\n";
}

# test_decoding's changes since the last call, relation names generalized
sub changes
{
	my $rows = $pub->safe_psql('postgres', q{
		SELECT data FROM pg_logical_slot_get_changes('td', NULL, NULL,
			'include-xids', '0', 'skip-empty-xacts', '1')});
	$rows =~ s/public\.(\w)_[ht]\b/public.$1_X/g;
	return $rows;
}

# A stream with the changes of each transaction sorted: a statement that
# changes many rows visits them in its scan's order, which differs between
# heap and tessera (heap puts new versions where there is room).
sub per_transaction
{
	my @out;
	my @xact;
	foreach my $line (split /\n/, shift)
	{
		if ($line eq 'BEGIN') { @xact = (); next; }
		if ($line eq 'COMMIT') { push @out, 'BEGIN', sort(@xact), 'COMMIT'; next; }
		push @xact, $line;
	}
	return join("\n", @out);
}

# where two change streams part: the lines around it, and both in files
sub first_difference
{
	my ($heap, $tess, $seed) = @_;
	my @h = split /\n/, $heap;
	my @t = split /\n/, $tess;
	my $i = 0;
	$i++ while $i < @h && $i < @t && $h[$i] eq $t[$i];
	diag("streams part at line $i of " . scalar(@h) . " (heap) / " . scalar(@t) . " (tessera)");
	diag("heap:    " . join("\n         ", @h[ ($i > 2 ? $i - 2 : 0) .. ($i + 3 < @h ? $i + 3 : $#h) ]));
	diag("tessera: " . join("\n         ", @t[ ($i > 2 ? $i - 2 : 0) .. ($i + 3 < @t ? $i + 3 : $#t) ]));
	PostgreSQL::Test::Utils::append_to_file("$PostgreSQL::Test::Utils::tmp_check/heap_$seed.txt", $heap);
	PostgreSQL::Test::Utils::append_to_file("$PostgreSQL::Test::Utils::tmp_check/tessera_$seed.txt", $tess);
}

my %dump = (
	k => q{SELECT count(*), coalesce(sum(id), 0), md5(coalesce(string_agg(x::text, '|' ORDER BY id), '')) FROM k_t x},
	f => q{SELECT count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM f_t x},
	u => q{SELECT count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY id), '')) FROM u_t x},
);

# Wait until both subscriptions have applied what the publisher committed.
sub wait_subscribers
{
	my ($phase) = @_;
	my $lsn = $pub->lsn('insert');
	my $done = 0;
	foreach (1 .. 1200)
	{
		$done = $pub->safe_psql('postgres', qq{
			SELECT count(*) = 2 AND bool_and('$lsn' <= replay_lsn)
			FROM pg_stat_replication WHERE application_name LIKE 's_sub_%'}) eq 't';
		last if $done;
		usleep(100_000);
	}
	ok($done, "$phase: the subscribers caught up")
	  or diag(join("\n", grep { /ERROR|FATAL|DETAIL/ } split /\n/, slurp_file($sub->logfile)));
}

# The subscribers hold the publisher's rows: polled until they do (60 s at
# most), since after a crash the publisher may still list a dead
# walsender's replay position, and a subscriber re-applies what its crash
# lost (asynchronous commits) only after it has reconnected.
sub compare_subscribers
{
	my ($phase) = @_;
	wait_subscribers($phase);
	foreach my $tab (sort keys %dump)
	{
		my $want = $pub->safe_psql('postgres', $dump{$tab});
		foreach my $db ('sub_heap', 'sub_tess')
		{
			my ($got, $polls) = ('', 0);
			foreach (1 .. 600)
			{
				$polls++;
				$got = $sub->safe_psql($db, $dump{$tab});
				last if $got eq $want;
				usleep(100_000);
			}
			note("$phase: ${tab}_t on $db equal after $polls polls") if $polls > 1;
			is($got, $want, "$phase: ${tab}_t on $db matches the publisher");
		}
	}
}

$sub->poll_query_until('sub_tess', q{SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate <> 'r'})
  or die 'no initial sync';
$sub->poll_query_until('sub_heap', q{SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate <> 'r'})
  or die 'no initial sync';

# one row per statement: the streams are the same line for line
my $exact = q{
	INSERT INTO k_SFX VALUES (1, 1, 'one', 1.5, NULL), (2, 2, NULL, NULL, '2024-01-01');
	UPDATE k_SFX SET b = 'uno' WHERE id = 1;
	UPDATE k_SFX SET id = 3 WHERE id = 2;
	BEGIN;
	INSERT INTO f_SFX VALUES (1, 'a', 1);
	UPDATE k_SFX SET a = 10 WHERE id = 3;
	INSERT INTO k_SFX VALUES (4, 4, 'four', 4, NULL);
	SELECT pg_logical_emit_message(true, 'test', 'between');
	DELETE FROM f_SFX WHERE x = 1;
	SAVEPOINT s;
	INSERT INTO k_SFX VALUES (5, 5, 'gone', 5, NULL);
	ROLLBACK TO SAVEPOINT s;
	INSERT INTO u_SFX VALUES (1, 'u', NULL) ON CONFLICT (id) DO UPDATE SET v = 'again';
	INSERT INTO u_SFX VALUES (1, 'u', NULL) ON CONFLICT (id) DO UPDATE SET v = 'again';
	UPDATE u_SFX SET id = 2 WHERE id = 1;
	COMMIT;
	DELETE FROM k_SFX WHERE id = 1;
	INSERT INTO n_SFX VALUES (1, 'n');
	UPDATE n_SFX SET b = 'm';
	DELETE FROM n_SFX;
	TRUNCATE k_SFX, f_SFX, u_SFX;
};
changes();
foreach my $sfx ('h', 't')
{
	(my $sql = $exact) =~ s/_SFX/_$sfx/g;
	$pub->safe_psql('postgres', $sql);
}
{
	my @streams = split /(?=^BEGIN\n(?:table public\.k_X: INSERT: id\[integer\]:1 ))/m, changes();
	s/\n+$// foreach @streams;
	is(scalar(@streams), 2, 'the single-row statements decode for both tables');
	ok($streams[0] eq $streams[1], 'single-row statements: the same stream line for line')
	  or first_difference($streams[0], $streams[1], 0);
	like($streams[1], qr/UPDATE: old-key: id\[integer\]:2 new-tuple: id\[integer\]:3 /,
		'a key change carries the old key');
	like($streams[1], qr/n_X: DELETE: \(no-tuple-data\)/, 'REPLICA IDENTITY NOTHING: a delete without old tuple');
	like($streams[1], qr/f_X: DELETE: x\[integer\]:1 y\[text\]:'a' z\[double precision\]:1/,
		'REPLICA IDENTITY FULL: a delete with the whole old row');
}

my $mismatches = 0;
for my $seed (1 .. $seeds)
{
	changes();
	$pub->safe_psql('postgres', workload($seed, 'h'));
	my $heap = per_transaction(changes());
	$pub->safe_psql('postgres', workload($seed, 't'));
	my $tess = per_transaction(changes());
	ok($tess eq $heap, "seed $seed: test_decoding streams of tessera and heap have the same transactions")
	  or first_difference($heap, $tess, $seed);
	$mismatches++ if $heap ne $tess;
	unlike($tess, qr/tessera_internal/, "seed $seed: no change of tessera's catalog is decoded");
	is($pub->safe_psql('postgres', q{SELECT count(*) FROM (
			SELECT * FROM k_h EXCEPT ALL SELECT * FROM k_t UNION ALL
			SELECT * FROM k_t EXCEPT ALL SELECT * FROM k_h) d}), '0',
		"seed $seed: the twins hold the same rows");
	compare_subscribers("seed $seed") if $seed % 3 == 1 || $seed == $seeds;
}
is($mismatches, 0, "test_decoding streams identical over $seeds seeds");

# a large value, inserted and updated (heap sends an unchanged TOASTed value
# as such; tessera has none: the subscribers must still end up equal)
$pub->safe_psql('postgres', q{
	INSERT INTO k_t VALUES (-5, 1, repeat('long value ', 5000), 1, NULL);
	UPDATE k_t SET a = 2 WHERE id = -5;
	INSERT INTO f_t VALUES (-5, repeat('x', 100000), 0);
	UPDATE f_t SET z = 1 WHERE x = -5;
	DELETE FROM f_t WHERE x = -5 AND z = 1;
	INSERT INTO f_t VALUES (-6, repeat('y', 100000), 0);
});
compare_subscribers('large values');

# decoding again from an older position gives the same changes
$pub->safe_psql('postgres', workload(99, 't'));
my $peek1 = $pub->safe_psql('postgres', q{SELECT data FROM pg_logical_slot_peek_changes('td', NULL, NULL, 'include-xids', '0')});
my $peek2 = $pub->safe_psql('postgres', q{SELECT data FROM pg_logical_slot_peek_changes('td', NULL, NULL, 'include-xids', '0')});
ok(length($peek1) > 1000, 'peek decodes the workload');
is($peek2, $peek1, 'decoding twice from the slot\'s position gives the same changes');
changes();

# concurrent writers (pgbench, 3 clients) on the published tessera tables
my $script = $pub->basedir . '/writers.sql';
open(my $fh, '>', $script) or die;
print $fh q{\set id random(1, 300000)
\set fx random(1, 60)
BEGIN;
INSERT INTO k_t VALUES (:id + 2000000, :fx, 'pgbench', :fx, now()) ON CONFLICT (id) DO UPDATE SET a = k_t.a + 1;
UPDATE k_t SET b = 'touched' WHERE id = :id;
INSERT INTO f_t VALUES (:fx, 'w', :id);
DELETE FROM f_t WHERE x = :fx AND z < :id - 250000;
COMMIT;
};
close($fh);
$pub->command_ok([ 'pgbench', '-n', '-c', '3', '-t', '300', '-f', $script,
		'-h', $pub->host, '-p', $pub->port, 'postgres' ], 'concurrent writers');
compare_subscribers('concurrent writers');

# the publisher crashes in the middle of a transaction, and after commits
my $bg = $pub->background_psql('postgres');
$bg->query_safe(q{BEGIN; INSERT INTO k_t SELECT i, 0, 'lost', 0, NULL FROM generate_series(3000001, 3001000) i;});
$pub->safe_psql('postgres', q{INSERT INTO k_t SELECT i, 1, 'kept', 1, NULL FROM generate_series(3002001, 3003000) i});
$pub->stop('immediate');
$bg->{run}->kill_kill;
$pub->start;
is($pub->safe_psql('postgres', q{SELECT count(*) FROM k_t WHERE b = 'lost'}), '0',
	'the crashed transaction left no rows');
compare_subscribers('publisher crash');
like(changes(), qr/'kept'/, 'test_decoding decodes what committed before the crash');

# the subscriber crashes while it applies a large transaction
$pub->safe_psql('postgres', q{INSERT INTO k_t SELECT i, 2, 'big', 2, NULL FROM generate_series(4000001, 4060000) i});
usleep(300_000);
$sub->stop('immediate');
$sub->start;
compare_subscribers('subscriber crash');

# FOR ALL TABLES: user tables replicate, tessera's catalog does not
$pub->safe_psql('postgres', q{
	CREATE PUBLICATION pub_all FOR ALL TABLES;
	CREATE TABLE local_t (a int PRIMARY KEY, b text) USING tessera;
	INSERT INTO local_t SELECT i, 'local' || i FROM generate_series(1, 5000) i;
	INSERT INTO local_t VALUES (0, 'small');
});
$sub->safe_psql('postgres', 'CREATE DATABASE sub_all');
$sub->safe_psql('sub_all', 'CREATE EXTENSION tessera');
$sub->safe_psql('sub_all', tables_sql('h', 'heap') . tables_sql('t', 'tessera') . q{
	CREATE TABLE n_h (a int, b text);
	CREATE TABLE n_t (a int, b text) USING tessera;
	CREATE TABLE local_t (a int PRIMARY KEY, b text) USING tessera;
	-- the subscriber's own tessera table, with stripes and a delta stripe
	CREATE TABLE mine (a int) USING tessera;
	INSERT INTO mine SELECT generate_series(1, 10000);
	INSERT INTO mine VALUES (-1);
});
my $before = $sub->safe_psql('sub_all', 'SELECT count(*), sum(a) FROM mine');
my $conn = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('sub_all', "CREATE SUBSCRIPTION s_all CONNECTION '$conn' PUBLICATION pub_all");
$sub->poll_query_until('sub_all', q{SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate <> 'r'})
  or die 'no initial sync of pub_all';
$pub->safe_psql('postgres', q{
	INSERT INTO local_t VALUES (-1, 'after');
	UPDATE local_t SET b = 'changed' WHERE a % 1000 = 0;
	DELETE FROM local_t WHERE a % 1000 = 1;
});
$pub->wait_for_catchup('s_all');
foreach my $q (
	q{SELECT count(*), md5(string_agg(x::text, '|' ORDER BY a)) FROM local_t x},
	$dump{k}, $dump{f}, $dump{u})
{
	is($sub->safe_psql('sub_all', $q), $pub->safe_psql('postgres', $q), "FOR ALL TABLES: $q");
}
is($sub->safe_psql('sub_all', 'SELECT count(*), sum(a) FROM mine'), $before,
	"FOR ALL TABLES: the subscriber's own tessera table is intact");
is($sub->safe_psql('sub_all', q{SELECT (SELECT count(*) FROM tessera_internal.stripe) =
		(SELECT count(*) FROM tessera.stripes)}), 't',
	"FOR ALL TABLES: no stripe of the publisher's arrived in the subscriber's catalog");

done_testing();
