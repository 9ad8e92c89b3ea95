# tessera.verify(regclass) finds each kind of damage: catalog rows edited by
# hand (flags, row counts, reservations, storage ids, a truncated catalog),
# damaged chunks, directories, row states, map pages and the metapage, and
# pages claimed twice.  Each damage is made, verified, and repaired in turn;
# an undamaged table verifies clean.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TesseraNode;

use constant PAGE_DATA_START => 24;
use constant PAGE_DATA_SIZE  => 8192 - 24 - 8;

my $node = tessera_node('verify');
$node->safe_psql('postgres', q{
	CREATE TABLE t (id int PRIMARY KEY, payload text, n numeric) USING tessera
		WITH (tessera_compression = 'none', tessera_row_group_row_limit = 5000,
			  tessera_stripe_row_limit = 20000);
	INSERT INTO t SELECT i, 'payload ' || md5(i::text), i / 3.0 FROM generate_series(1, 50000) i;
	DELETE FROM t WHERE id % 100 = 0;
	UPDATE t SET payload = 'updated' WHERE id % 333 = 0;
	CHECKPOINT;
});
my $datadir = $node->data_dir;
my $file = "$datadir/" . $node->safe_psql('postgres', "SELECT pg_relation_filepath('t')");
my $storage = $node->safe_psql('postgres',
	"SELECT storage_id FROM tessera_internal.stripe s JOIN tessera.stripes v ON v.stripe_id = s.stripe_id AND v.first_row = s.first_row WHERE v.relation = 't'::regclass LIMIT 1");
my $good = $node->safe_psql('postgres', 'SELECT count(*), sum(id), md5(string_agg(payload, \',\' ORDER BY id)) FROM t');
my $verify = q{SELECT severity, coalesce(stripe_id::text, '-'), coalesce(row_group::text, '-'),
	coalesce(block::text, '-'), problem FROM tessera.verify('t')};

is($node->safe_psql('postgres', $verify), '', 'an undamaged table verifies clean');

sub problems
{
	my ($what) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $verify);
	is($ret, 0, "verify runs to the end ($what)") or diag($err);
	return $out;
}

sub catalog
{
	my ($sql) = @_;
	$node->safe_psql('postgres', "SET allow_system_table_mods = on; $sql");
}

# 1. a stripe's flags edited: verify says so, and reads refuse the stripe
catalog("UPDATE tessera_internal.stripe SET flags = flags | 64 WHERE storage_id = $storage AND stripe_id = 2");
like(problems('flags'), qr/^error\|2\|-\|-\|unknown stripe flags 0x40$/m, 'unknown flags reported');
my ($ret, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM t');
like($err, qr/stripe catalog row has unknown flags/, 'a scan refuses a stripe with unknown flags');
catalog("UPDATE tessera_internal.stripe SET flags = flags & ~64 WHERE storage_id = $storage AND stripe_id = 2");

# 2. a stripe's row count set to 0 (it would read as a placeholder)
my $rows2 = $node->safe_psql('postgres',
	"SELECT row_count FROM tessera_internal.stripe WHERE storage_id = $storage AND stripe_id = 2");
catalog("UPDATE tessera_internal.stripe SET row_count = 0 WHERE storage_id = $storage AND stripe_id = 2");
like(problems('row count'), qr/^error\|2\|.*says 0 rows .* but lists \d+ pages/m,
	'a placeholder with pages is reported');
($ret, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM t');
like($err, qr/says it holds no rows but lists pages/, 'and a scan refuses it instead of skipping its rows');
catalog("UPDATE tessera_internal.stripe SET row_count = $rows2 WHERE storage_id = $storage AND stripe_id = 2");

# 3. a reservation stretched over the next stripe
catalog("UPDATE tessera_internal.stripe SET reserved_rows = 45000 WHERE storage_id = $storage AND stripe_id = 1");
like(problems('reservation'), qr/^error\|1\|.*reservation up to row \d+ overlaps stripe 2/m,
	'an overlapping reservation is reported');
catalog("UPDATE tessera_internal.stripe SET reserved_rows = 20000 WHERE storage_id = $storage AND stripe_id = 1");

# 4. a stripe's catalog row moved to another storage: its pages belong to nobody
catalog("UPDATE tessera_internal.stripe SET storage_id = storage_id + 1000 WHERE storage_id = $storage AND stripe_id = 3");
like(problems('storage id'), qr/^error\|3\|-\|-\|rows \d+\.\.\d+ of a replaced catalog row of this stripe are in no visible stripe/m,
	'pages of a stripe whose catalog row is gone are reported');
catalog("UPDATE tessera_internal.stripe SET storage_id = storage_id - 1000 WHERE storage_id = $storage + 1000");

# 5. a catalog row pointing at another stripe's pages
my ($start1, $start2) = split /\n/, $node->safe_psql('postgres',
	"SELECT start_block FROM tessera_internal.stripe WHERE storage_id = $storage AND stripe_id IN (1, 2) ORDER BY stripe_id");
catalog("UPDATE tessera_internal.stripe SET start_block = $start1 WHERE storage_id = $storage AND stripe_id = 2");
my $p = problems('start block');
like($p, qr/^error\|2\|/m, 'a stripe read from the wrong pages is reported');
like($p, qr/page belongs to another visible stripe too/, 'and its pages are claimed twice');
catalog("UPDATE tessera_internal.stripe SET start_block = $start2 WHERE storage_id = $storage AND stripe_id = 2");
is($node->safe_psql('postgres', $verify), '', 'clean again after the catalog repairs');

# file damage: find pages by kind (the special space's magic and kind)
sub page_kinds
{
	open(my $fh, '<', $file) or die "open $file: $!";
	binmode $fh;
	my (@kinds, $page);
	while (read($fh, $page, 8192) == 8192)
	{
		my ($special) = unpack('v', substr($page, 16, 2));
		my ($magic, $kind, $level) = unpack('V v v', substr($page, 8192 - 8, 8));
		push @kinds, ($special == 8192 - 8 && $magic == 0x54535250) ? "$kind.$level" : 'other';
	}
	close($fh);
	return @kinds;
}

sub xor_bytes
{
	my ($pos, $count, $mask) = @_;
	open(my $fh, '+<', $file) or die "open $file: $!";
	binmode $fh;
	for my $i (0 .. $count - 1)
	{
		seek($fh, $pos + $i, 0) or die;
		my $b;
		read($fh, $b, 1) == 1 or die;
		seek($fh, $pos + $i, 0) or die;
		print $fh chr(ord($b) ^ $mask);
	}
	close($fh);
}

my @kinds = page_kinds();
my ($state_blk) = grep { $kinds[$_] eq '2.0' } 0 .. $#kinds;
my ($map_blk) = grep { $kinds[$_] eq '1.0' } 0 .. $#kinds;
ok(defined $state_blk && defined $map_blk, 'the table has state and map pages');

# 6. a chunk's bytes flipped
my ($cstart, $coff, $clen) = split /\|/, $node->safe_psql('postgres', q{
	SELECT s.start_block, c.stripe_offset, c.stored_bytes
	FROM tessera.chunks c JOIN tessera.stripes s USING (relation, stripe_id)
	WHERE c.relation = 't'::regclass AND c.stripe_id = 2 AND c.row_group = 1 AND c.attname = 'payload'});
my $cpos = ($cstart + int(($coff + int($clen / 2)) / PAGE_DATA_SIZE)) * 8192 + PAGE_DATA_START +
	(($coff + int($clen / 2)) % PAGE_DATA_SIZE);
$node->stop;
xor_bytes($cpos, 4, 0x5a);
$node->start;
like(problems('chunk'), qr/^error\|2\|1\|-\|corrupt data in tessera table "t", stripe 2, row group 1, column "payload".*checksum mismatch/m,
	'a damaged chunk is reported with its stripe, row group and column');
$node->stop;
xor_bytes($cpos, 4, 0x5a);
$node->start;

# 7. a row state's flags damaged
open(my $fh, '<', $file) or die;
binmode $fh;
seek($fh, $state_blk * 8192, 0);
my $page;
read($fh, $page, 8192);
close($fh);
my $entry;
for my $i (0 .. 499)
{
	if (substr($page, 24 + 16 * $i, 16) ne "\0" x 16) { $entry = $i; last; }
}
ok(defined $entry, 'a state page holds a state');
$node->stop;
xor_bytes($state_blk * 8192 + 24 + 16 * $entry + 9, 1, 0x80);    # infomask's high byte
$node->start;
like(problems('row state'), qr/^error\|-\|-\|$state_blk\|row \d+: unknown state flags/m,
	'a damaged row state is reported');
$node->stop;
xor_bytes($state_blk * 8192 + 24 + 16 * $entry + 9, 1, 0x80);
$node->start;

# 8. a map page's special space damaged (its level)
$node->stop;
xor_bytes($map_blk * 8192 + 8192 - 2, 1, 0x03);
$node->start;
like(problems('map page'), qr/^error\|.*corrupt data in tessera table "t", block $map_blk/m,
	'a damaged map page is reported');
$node->stop;
xor_bytes($map_blk * 8192 + 8192 - 2, 1, 0x03);
$node->start;

# 9. a stripe page that is not a tessera page any more
$node->stop;
xor_bytes(($start1 + 1) * 8192 + 8192 - 8, 4, 0x5a);
$node->start;
like(problems('foreign page'), qr/^error\|-\|-\|@{[$start1 + 1]}\|page of a stripe is not a stripe page/m,
	'a foreign page inside a stripe is reported');
$node->stop;
xor_bytes(($start1 + 1) * 8192 + 8192 - 8, 4, 0x5a);
$node->start;
is($node->safe_psql('postgres', $verify), '', 'clean again after the file repairs');
is($node->safe_psql('postgres', 'SELECT count(*), sum(id), md5(string_agg(payload, \',\' ORDER BY id)) FROM t'),
	$good, 'and the rows are what they were');

# 10. the metapage damaged
$node->stop;
xor_bytes(PAGE_DATA_START, 4, 0x5a);
$node->start;
like(problems('metapage'), qr/^error\|-\|-\|0\|/m, 'a damaged metapage is reported');
$node->stop;
xor_bytes(PAGE_DATA_START, 4, 0x5a);
$node->start;

# 11. the catalog truncated: every stripe's pages belong to nobody
catalog('TRUNCATE tessera_internal.stripe, tessera_internal.delta');
like(problems('truncated catalog'), qr/^warning\|-\|-\|\d+\|stripe pages \d+\.\.\d+ are referenced by no stripe catalog row/m,
	'a truncated catalog is reported');

# only the owner may verify
$node->safe_psql('postgres', 'CREATE ROLE someone');
($ret, $out, $err) = $node->psql('postgres', "SET ROLE someone; SELECT * FROM tessera.verify('t')");
like($err, qr/must be owner of table t/, 'others may not verify');

$node->stop;
done_testing();
