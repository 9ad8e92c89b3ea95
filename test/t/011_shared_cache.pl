# The shared decoded-frame cache (tessera.shared_cache_size): point reads
# and scans in every backend use it, and whatever changes a table under it
# -- updates, deletes, VACUUM's folds, compaction, rewrites, TRUNCATE (also
# the in-place kind), DROP/CREATE EXTENSION, eviction, a standby replaying
# all of it -- a read returns what a heap twin returns.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

# small enough that the big table below does not fit
my $conf = "tessera.shared_cache_size = 4MB\ntessera.vacuum_fold_fraction = 0.5\n";
my $primary = tessera_node('primary', allows_streaming => 1, conf => $conf);

is($primary->safe_psql('postgres', 'SHOW tessera.shared_cache_size'), '4MB',
	'cache size from postgresql.conf');
# every tessera setting is defined before the prefix is reserved: one set
# in the configuration file is not thrown away at server start
is($primary->safe_psql('postgres', 'SHOW tessera.vacuum_fold_fraction'), '0.5',
	'other tessera settings from postgresql.conf are kept');
is($primary->safe_psql('postgres', 'SELECT enabled, blocks FROM tessera.shared_cache'),
	't|1024', 'cache is on, 1024 blocks of 4 kB');

# md5 text after an x (17 distinct bytes: not packed) compresses and fills
# framed chunks of 4 kB frames
sub make_tables
{
	my ($node, $rows, $tag) = @_;
	$node->safe_psql('postgres', qq{
		DROP TABLE IF EXISTS t, h;
		CREATE TABLE t (id int PRIMARY KEY, note text, v int) USING tessera;
		CREATE TABLE h (id int PRIMARY KEY, note text, v int) USING heap;
		INSERT INTO t SELECT i, 'x' || md5('$tag' || i), i % 97 FROM generate_series(1, $rows) i;
		INSERT INTO h SELECT * FROM t;
		VACUUM ANALYZE t, h;
	});
}

# point reads through the index, in random key order
my $ids = join(',', map { ($_ * 7919) % 30000 + 1 } 1 .. 300);
sub lookups
{
	my ($table) = @_;
	return qq{SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT md5(string_agg(id || ':' || note || ':' || v, ',' ORDER BY id))
		FROM $table WHERE id IN ($ids)};
}

sub check_lookups
{
	my ($node, $name) = @_;
	my $h = $node->safe_psql('postgres', lookups('h'));
	# twice: the second finds the frames in the cache
	is($node->safe_psql('postgres', lookups('t')), $h, "$name: lookups");
	is($node->safe_psql('postgres', lookups('t')), $h, "$name: cached lookups");
	my $scan = 'SELECT count(*), sum(length(note)), max(note), min(note), sum(v) FROM ';
	is($node->safe_psql('postgres', $scan . 't'), $node->safe_psql('postgres', $scan . 'h'),
		"$name: scan");
}

make_tables($primary, 30000, 'a');
check_lookups($primary, 'fresh table');
my ($hits, $inserts) = split /\|/, $primary->safe_psql('postgres',
	'SELECT hits, inserts FROM tessera.shared_cache');
ok($inserts > 0, "frames were cached ($inserts)");
ok($hits > 0, "frames were found in the cache ($hits)");
like($primary->safe_psql('postgres', lookups('t') . '; SELECT backend_hits > 0, backend_misses = 0 FROM tessera.shared_cache'),
	qr/\nt\|t$/, 'a new session reads every frame from the cache');
like($primary->safe_psql('postgres',
		q{EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF) SELECT note FROM t WHERE note LIKE 'zz%'}),
	qr/Shared Cache Frames: [1-9]/, 'a scan takes frames from the cache');

# every kind of change under the cache
my @changes = (
	[ 'update', q{UPDATE %s SET note = 'x' || md5('u' || id) WHERE id % 7 = 0} ],
	[ 'delete', q{DELETE FROM %s WHERE id % 11 = 0} ],
	[ 'vacuum (folds)', q{VACUUM %s} ],
	[ 'insert', q{INSERT INTO %s SELECT i, 'x' || md5('i' || i), 1 FROM generate_series(30001, 30500) i} ],
	[ 'rewrite', q{ALTER TABLE %s ALTER COLUMN v TYPE bigint} ],
	[ 'truncate and reload', q{TRUNCATE %1$s; INSERT INTO %1$s SELECT i, 'x' || md5('b' || i), i % 89 FROM generate_series(1, 30000) i} ],
	[ 'vacuum full', q{VACUUM FULL %s} ],
);
foreach my $c (@changes)
{
	my ($name, $sql) = @$c;
	$primary->safe_psql('postgres', sprintf($sql, 't'));
	$primary->safe_psql('postgres', sprintf($sql, 'h'));
	check_lookups($primary, $name);
}
$primary->safe_psql('postgres', q{
	UPDATE t SET note = 'compacted ' || id WHERE id % 3 = 0;
	UPDATE h SET note = 'compacted ' || id WHERE id % 3 = 0;
	SELECT tessera.compact('t');
});
check_lookups($primary, 'compaction');

# TRUNCATE of a table created in the same transaction truncates in place:
# same storage, stripes counted on
my $inplace = q{
	BEGIN;
	CREATE TABLE %1$s2 (id int PRIMARY KEY, note text, v int) USING %2$s;
	INSERT INTO %1$s2 SELECT i, 'x' || md5('p' || i), i FROM generate_series(1, 30000) i;
	SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
	SELECT md5(string_agg(note, ',' ORDER BY id)) FROM %1$s2 WHERE id IN (IDS);
	TRUNCATE %1$s2;
	INSERT INTO %1$s2 SELECT i, 'x' || md5('q' || i), i FROM generate_series(1, 30000) i;
	SELECT md5(string_agg(note, ',' ORDER BY id)) FROM %1$s2 WHERE id IN (IDS);
	COMMIT;
};
$inplace =~ s/IDS/$ids/g;
is($primary->safe_psql('postgres', sprintf($inplace, 't', 'tessera')),
	$primary->safe_psql('postgres', sprintf($inplace, 'h', 'heap')),
	'in-place truncate in the creating transaction');

# DROP EXTENSION starts storage ids from 1 again: the same keys, other bytes
$primary->safe_psql('postgres', 'CREATE DATABASE d2');
my $ext = q{
	CREATE EXTENSION tessera;
	CREATE TABLE x (id int PRIMARY KEY, note text) USING tessera;
	INSERT INTO x SELECT i, 'x' || md5('TAG' || i) FROM generate_series(1, 20000) i;
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT md5(string_agg(note, ',' ORDER BY id)) FROM x WHERE id IN (IDS);
	SELECT md5(string_agg(note, ',' ORDER BY id)) FROM x WHERE id IN (IDS);
};
$ext =~ s/IDS/$ids/g;
(my $ext_a = $ext) =~ s/TAG/one/;
(my $ext_b = $ext) =~ s/TAG/two/;
my $first = $primary->safe_psql('d2', $ext_a);
$primary->safe_psql('d2', 'DROP EXTENSION tessera CASCADE');
my $second = $primary->safe_psql('d2', $ext_b);
my $expect = $primary->safe_psql('d2', qq{
	SELECT md5(string_agg('x' || md5('two' || i), ',' ORDER BY i)) FROM unnest(ARRAY[$ids]) i WHERE i <= 20000});
isnt($second, $first, 'recreated extension: other data');
like($second, qr/^\Q$expect\E\n\Q$expect\E$/, 'recreated extension: lookups see the new data');

# a table bigger than the cache: frames are evicted, answers stay right
make_tables($primary, 200000, 'big');
my $all = join(',', map { ($_ * 104729) % 200000 + 1 } 1 .. 2000);
my $big = qq{SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT md5(string_agg(id || note, ',' ORDER BY id)) FROM %s WHERE id IN ($all)};
is($primary->safe_psql('postgres', sprintf($big, 't')),
	$primary->safe_psql('postgres', sprintf($big, 'h')), 'lookups over a table bigger than the cache');
is($primary->safe_psql('postgres', sprintf($big, 't')),
	$primary->safe_psql('postgres', sprintf($big, 'h')), 'again, after evictions');
ok($primary->safe_psql('postgres', 'SELECT evictions FROM tessera.shared_cache') > 0,
	'frames were evicted');

# a standby with its own cache, replaying changes under it
make_tables($primary, 30000, 'c');
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);
check_lookups($standby, 'standby');
foreach my $c (@changes)
{
	my ($name, $sql) = @$c;
	$primary->safe_psql('postgres', sprintf($sql, 't'));
	$primary->safe_psql('postgres', sprintf($sql, 'h'));
	$primary->wait_for_catchup($standby);
	check_lookups($standby, "standby, $name");
	is($standby->safe_psql('postgres', lookups('t')), $primary->safe_psql('postgres', lookups('t')),
		"standby agrees with the primary after $name");
}
ok($standby->safe_psql('postgres', 'SELECT hits FROM tessera.shared_cache') > 0,
	'the standby reads from its cache');

$standby->stop;
$primary->stop;
done_testing();
