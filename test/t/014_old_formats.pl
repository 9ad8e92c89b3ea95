# Tables written by older builds, in every older on-disk format, read by this
# one: stored fixtures (test/fixtures/formats, made by
# scripts/make-format-fixtures.sh from the last commit writing each format)
# are put in place of a new table's storage.  Each must return the rows the
# old build returned, pass tessera.verify, take indexes and writes like any
# table, and be rewritten in the newest format by VACUUM FULL.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use File::Copy;
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

use constant PAGE_DATA_START => 24;
use constant PAGE_DATA_SIZE => 8192 - 24 - 8;
use constant DIR_MAGIC => 0x54535244;
use constant NEWEST_DIR_VERSION => 5;

my $fixtures = "$FindBin::RealBin/../fixtures/formats";
my @formats = sort grep { -d "$fixtures/$_" } map { s{.*/}{}r } glob("$fixtures/*");
ok(scalar(@formats) >= 2, 'fixtures of older formats: ' . join(', ', @formats));

my $node = tessera_node('formats', conf => "TimeZone = 'UTC'\ntessera.autocompact_stripes = 0");
my $datadir = $node->data_dir;

sub slurp_file_bin
{
	my ($path) = @_;
	open(my $fh, '<', $path) or die "open $path: $!";
	binmode $fh;
	local $/;
	my $bytes = <$fh>;
	close($fh);
	return $bytes;
}

# stripe-relative offset in a stripe's pages -> byte offset in the file
sub file_offset
{
	my ($start_block, $off) = @_;
	return ($start_block + int($off / PAGE_DATA_SIZE)) * 8192 + PAGE_DATA_START +
	  ($off % PAGE_DATA_SIZE);
}

# Directory format versions of a table's stripes, given its stripe catalog
# rows (COPY text) and its delta rows (stripe id -> bytes) and main fork.
sub dir_versions
{
	my ($stripes, $delta, $main) = @_;
	my %versions;
	foreach my $line (split /\n/, $stripes)
	{
		my ($sid, $stripe_id, $first, $count, $start_block, $blocks, $data, $dir_off,
			$dir_bytes, $rgs, $cols, $flags) = split /\t/, $line;
		my $hdr;
		if ($flags & 1)
		{
			die "delta stripe $stripe_id without bytes" unless defined $delta->{$stripe_id};
			$hdr = substr($delta->{$stripe_id}, $dir_off, 8);
		}
		else
		{
			$hdr = substr($main, file_offset($start_block, $dir_off), 8);
		}
		my ($magic, $version) = unpack('VV', $hdr);
		die "stripe $stripe_id: no directory at its offset" unless $magic == DIR_MAGIC;
		$versions{$version}++;
	}
	return join(',', sort keys %versions);
}

sub delta_bytes
{
	my ($copy_text) = @_;
	my %bytes;
	foreach my $line (split /\n/, $copy_text)
	{
		my ($sid, $stripe_id, $hex) = split /\t/, $line;
		$hex =~ s/^\\\\x// or die "unexpected delta bytes: " . substr($hex, 0, 20);
		$bytes{$stripe_id} = pack('H*', $hex);
	}
	return \%bytes;
}

my $digest_sql = q{SELECT count(*), coalesce(sum(id), 0),
	md5(string_agg(x::text, E'\n' ORDER BY id)) FROM %s x};

foreach my $format (@formats)
{
	my $dir = "$fixtures/$format";
	my ($extversion) = slurp_file("$dir/README") =~ /^# extension version: (\S+)/m;
	ok(defined $extversion, "$format: fixture names its extension version");
	my $db = 'f_' . ($format =~ s/-/_/gr);
	my @tables = sort map { s{.*/}{}r =~ s/\.sql$//r } glob("$dir/*.sql");

	# the extension as the old build had it, tables as it defined them; the
	# storage ids the fixtures carry stay below any this database hands out
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, qq{
		DROP EXTENSION IF EXISTS tessera;
		CREATE EXTENSION tessera VERSION '$extversion';
		SELECT setval('tessera_internal.storage_id_seq', 1000);
	});
	my %expected_versions;
	foreach my $t (@tables)
	{
		$node->safe_psql($db, slurp_file("$dir/$t.sql"));
		foreach my $cat ('stripe', 'delta')
		{
			$node->safe_psql($db, "COPY tessera_internal.$cat FROM STDIN;\n" .
				slurp_file("$dir/$t.$cat") . "\\.\n");
		}
	}
	my %paths = map { $_ => $node->safe_psql($db, "SELECT pg_relation_filepath('$_')") } @tables;
	$node->stop;
	foreach my $t (@tables)
	{
		my $path = "$datadir/$paths{$t}";
		gunzip("$dir/$t.main.gz" => $path) or die "gunzip $t: $GunzipError";
		unlink glob("${path}_*");
		$expected_versions{$t} = dir_versions(slurp_file("$dir/$t.stripe"),
			delta_bytes(slurp_file("$dir/$t.delta")), slurp_file_bin($path));
	}
	$node->start;
	$node->safe_psql($db, 'ALTER EXTENSION tessera UPDATE');

	foreach my $t (@tables)
	{
		my $what = "$format $t";
		note "$what: directory versions $expected_versions{$t}";
		if ($format =~ /v1-v2/)
		{
			is($expected_versions{$t}, '1,2', "$what: holds directories of versions 1 and 2");
		}
		elsif ($format =~ /v3/)
		{
			is($expected_versions{$t}, '3', "$what: holds directories of version 3");
		}

		# the rows the old build returned, by every read path
		my $want = slurp_file("$dir/$t.digest") =~ s/\s+$//r =~ s/ /|/gr;
		is($node->safe_psql($db, sprintf($digest_sql, $t)), $want, "$what: rows as written");
		is($node->safe_psql($db, "SET tessera.enable_custom_scan = off; " . sprintf($digest_sql, $t)),
			$want, "$what: rows through the table AM's own scan");
		is($node->safe_psql($db, "SELECT count(*) FROM tessera.verify('$t') WHERE severity <> 'warning'"),
			'0', "$what: tessera.verify finds nothing wrong");
		cmp_ok($node->safe_psql($db, "SELECT coalesce(sum(folded_rows), 0) FROM tessera.row_group_info('$t')"),
			'>', 0, "$what: folded dead rows are read as such") if $format =~ /v1-v2/;

		# a heap copy to compare everything after with
		$node->safe_psql($db, "CREATE TABLE h_$t AS SELECT * FROM $t");
		my $same = sub {
			my ($name, $pre) = @_;
			$pre //= '';
			is($node->safe_psql($db, $pre . sprintf($digest_sql, $t)),
				$node->safe_psql($db, $pre . sprintf($digest_sql, "h_$t")), "$what: $name");
		};
		$same->('aggregates over old stripes equal heap\'s',
			"SELECT sum(amount), sum(wide), count(note), max(ts), min(d), count(raw), sum(f8) FROM $t;");
		is($node->safe_psql($db, qq{
			SELECT sum(amount), sum(wide), count(note), max(ts), min(d), count(raw), sum(f8), count(*) FILTER (WHERE flag)
			FROM $t WHERE cat <> 'beta' AND maybe IS NOT NULL}),
		   $node->safe_psql($db, qq{
			SELECT sum(amount), sum(wide), count(note), max(ts), min(d), count(raw), sum(f8), count(*) FILTER (WHERE flag)
			FROM h_$t WHERE cat <> 'beta' AND maybe IS NOT NULL}),
			"$what: filtered vectorized aggregates equal heap's");

		# index builds and single-row fetches from old stripes and the delta
		$node->safe_psql($db, "CREATE UNIQUE INDEX ${t}_id ON $t (id)");
		is($node->safe_psql($db, qq{
			SET enable_seqscan = off; SET enable_bitmapscan = off; SET tessera.enable_custom_scan = off;
			SELECT string_agg(x::text, ';' ORDER BY id) FROM $t x
			WHERE id IN (1, 2, 4000, 4001, 7901, 9999, 12000, 12001, 14999, 15000, 20003)}),
		   $node->safe_psql($db, qq{
			SELECT string_agg(x::text, ';' ORDER BY id) FROM h_$t x
			WHERE id IN (1, 2, 4000, 4001, 7901, 9999, 12000, 12001, 14999, 15000, 20003)}),
			"$what: index fetches equal heap's");

		# writes onto old stripes
		foreach my $sql (
			"UPDATE %s SET note = 'new ' || id, big = big + 1 WHERE id % 7 = 3",
			"DELETE FROM %s WHERE id % 11 = 5 OR id = 20002",
			"INSERT INTO %s (id, note, cat) SELECT i, 'later', 'eta' FROM generate_series(30001, 30500) i")
		{
			$node->safe_psql($db, sprintf($sql, $t));
			$node->safe_psql($db, sprintf($sql, "h_$t"));
		}
		$same->('updates, deletes and inserts on old stripes as on heap');
		$node->safe_psql($db, "VACUUM $t");
		$same->('after VACUUM');
		is($node->safe_psql($db, qq{
			SET enable_seqscan = off; SET enable_bitmapscan = off; SET tessera.enable_custom_scan = off;
			SELECT count(*), sum(length(note)) FROM $t WHERE id BETWEEN 3000 AND 13000}),
		   $node->safe_psql($db, "SELECT count(*), sum(length(note)) FROM h_$t WHERE id BETWEEN 3000 AND 13000"),
			"$what: index range scan after VACUUM");

		# VACUUM FULL writes every stripe again, in the newest format
		$node->safe_psql($db, "VACUUM FULL $t; CHECKPOINT");
		$same->('after VACUUM FULL');
		is($node->safe_psql($db, "SELECT count(*) FROM tessera.verify('$t') WHERE severity <> 'warning'"),
			'0', "$what: tessera.verify after VACUUM FULL");
		my $sid = unpack('Q<', substr(slurp_file_bin("$datadir/" .
			$node->safe_psql($db, "SELECT pg_relation_filepath('$t')")), PAGE_DATA_START + 8, 8));
		my $stripes = $node->safe_psql($db,
			"COPY (SELECT * FROM tessera_internal.stripe WHERE storage_id = $sid ORDER BY first_row) TO STDOUT");
		my $delta = $node->safe_psql($db,
			"COPY (SELECT * FROM tessera_internal.delta WHERE storage_id = $sid) TO STDOUT");
		isnt($stripes, '', "$what: stripes after VACUUM FULL");
		is(dir_versions($stripes, delta_bytes($delta), slurp_file_bin("$datadir/" .
			$node->safe_psql($db, "SELECT pg_relation_filepath('$t')"))),
			NEWEST_DIR_VERSION, "$what: VACUUM FULL rewrote every directory in the newest format");
	}
}

# the storage ids handed out afterwards do not collide with the fixtures'
$node->safe_psql('f_' . ($formats[0] =~ s/-/_/gr), q{
	CREATE TABLE later (a int) USING tessera;
	INSERT INTO later SELECT generate_series(1, 10);
});
is($node->safe_psql('f_' . ($formats[0] =~ s/-/_/gr), 'SELECT count(*), sum(a) FROM later'), '10|55',
	'a new table beside the old ones');

done_testing();
