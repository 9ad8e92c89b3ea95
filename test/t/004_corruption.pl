# Damaged files are detected and reported as data corruption naming the
# table, stripe and column -- never a crash or wrong rows.
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

my $node = tessera_node('corrupt');
$node->safe_psql('postgres', q{
	CREATE TABLE t (id int, payload text, n numeric) USING tessera
		WITH (tessera_compression = 'none', tessera_row_group_row_limit = 5000);
	INSERT INTO t SELECT i, 'payload ' || md5(i::text), i / 3.0 FROM generate_series(1, 20000) i;
	CHECKPOINT;
});
my $datadir = $node->data_dir;
my $relpath = $node->safe_psql('postgres', "SELECT pg_relation_filepath('t')");
my $file = "$datadir/$relpath";
my $good = $node->safe_psql('postgres', 'SELECT count(*), sum(id), md5(string_agg(payload, \',\' ORDER BY id)) FROM t');

# byte offset in the file of a stripe-relative offset
sub file_offset
{
	my ($start_block, $off) = @_;
	my $blk = $start_block + int($off / PAGE_DATA_SIZE);
	return $blk * 8192 + PAGE_DATA_START + ($off % PAGE_DATA_SIZE);
}

sub flip_bytes
{
	my ($pos, $count) = @_;
	open(my $fh, '+<', $file) or die "open $file: $!";
	binmode $fh;
	for my $i (0 .. $count - 1)
	{
		seek($fh, $pos + $i, 0) or die;
		my $b;
		read($fh, $b, 1) == 1 or die;
		seek($fh, $pos + $i, 0) or die;
		print $fh chr(ord($b) ^ 0x5a);
	}
	close($fh);
}

# where the payload chunk of stripe 1, row group 2 lives
my ($start_block, $chunk_off, $chunk_len) = split /\|/, $node->safe_psql('postgres', q{
	SELECT s.start_block, c.stripe_offset, c.stored_bytes
	FROM tessera.chunks c JOIN tessera.stripes s USING (relation, stripe_id)
	WHERE c.relation = 't'::regclass AND c.stripe_id = 1 AND c.row_group = 2 AND c.attname = 'payload'});
my ($dir_off) = $node->safe_psql('postgres',
	"SELECT data_bytes - directory_bytes FROM tessera.stripes WHERE relation = 't'::regclass AND stripe_id = 1");

# 1. bytes flipped inside a chunk
$node->stop;
flip_bytes(file_offset($start_block, $chunk_off + int($chunk_len / 2)), 4);
$node->start;
my ($ret, $out, $err) = $node->psql('postgres', 'SELECT count(*), max(payload) FROM t');
isnt($ret, 0, 'reading a damaged chunk fails');
like($err, qr/corrupt data in tessera table "t", stripe 1, row group 2, column "payload"/,
	'the error names table, stripe, row group and column');
like($err, qr/checksum mismatch/, 'the detail says what is wrong');
($ret, $out, $err) = $node->psql('postgres',
	'\set VERBOSITY verbose' . "\n" . 'SELECT max(payload) FROM t');
like($err, qr/XX001/, 'SQLSTATE is data_corrupted');
# columns in undamaged chunks still read, the server is alive
is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM t'), '20000|200010000',
	'other columns still readable');
($ret, $out, $err) = $node->psql('postgres', 'SELECT payload FROM t WHERE id = 12000');
like($err, qr/corrupt data/, 'fetching a row of the damaged row group fails too');

# repair: flip back
$node->stop;
flip_bytes(file_offset($start_block, $chunk_off + int($chunk_len / 2)), 4);
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*), sum(id), md5(string_agg(payload, \',\' ORDER BY id)) FROM t'),
	$good, 'restored bytes read correctly again');

# 1b. the same bytes read by index fetches one value at a time: a point read
# takes only the frame its value lies in (stored raw here, uncompressed),
# which is checksummed on its own
$node->safe_psql('postgres', 'CREATE INDEX t_id ON t (id)');
$node->stop;
flip_bytes(file_offset($start_block, $chunk_off + int($chunk_len / 2)), 4);
$node->start;
($ret, $out, $err) = $node->psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	DO $$DECLARE p text; BEGIN
		FOR i IN 10001..15000 LOOP
			SELECT payload INTO p FROM t WHERE id = i;
		END LOOP;
	END$$});
like($err, qr/corrupt data in tessera table "t", stripe 1, row group 2, column "payload".*checksum mismatch/s,
	'a point read of a value in the damaged frame reports it');
is($node->safe_psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT payload = 'payload ' || md5('10001') FROM t WHERE id = 10001}), 't',
	'values in undamaged frames of that chunk still read by point reads');
$node->stop;
flip_bytes(file_offset($start_block, $chunk_off + int($chunk_len / 2)), 4);
$node->start;
$node->safe_psql('postgres', 'DROP INDEX t_id');

# 2. the stripe directory damaged
$node->stop;
flip_bytes(file_offset($start_block, $dir_off + 40), 2);
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM t');
like($err, qr/corrupt data in tessera table "t", stripe 1, stripe directory/, 'damaged directory is reported');
like($err, qr/directory checksum mismatch/, 'directory checksum detail');
$node->stop;
flip_bytes(file_offset($start_block, $dir_off + 40), 2);
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '20000', 'directory repaired');

# 2a. one column's section of the directory damaged (version 5: each
#     column's chunk entries are checksummed on their own, read when a scan
#     reads that column): reading the column reports it, naming it; the
#     other columns, and counting rows, still read
sub read_stripe_bytes
{
	my ($start_block, $off, $len) = @_;
	open(my $fh, '<', $file) or die "open $file: $!";
	binmode $fh;
	my $bytes = '';
	for my $i (0 .. $len - 1)
	{
		seek($fh, file_offset($start_block, $off + $i), 0) or die;
		my $b;
		read($fh, $b, 1) == 1 or die;
		$bytes .= $b;
	}
	close($fh);
	return $bytes;
}
my ($magic, $version, $natts, $nrg, $ncid, $flags) =
  unpack('V V x24 V V V x8 V', read_stripe_bytes($start_block, $dir_off, 56));
is($version, 5, 'new stripes have directory version 5');
my $coltable = 56 + $nrg * 16 + $ncid * 8 + (($flags & 1) ? $nrg * 48 : 0);
# payload is the second column: its entry's offset (uint32, from the directory's start)
my ($payload_sec) = unpack('V', read_stripe_bytes($start_block, $dir_off + $coltable + 16, 4));
$node->stop;
flip_bytes(file_offset($start_block, $dir_off + $payload_sec + 60), 2);
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM t'), '20000|200010000',
	'other columns and counts read past a damaged column section');
($ret, $out, $err) = $node->psql('postgres', 'SELECT max(payload) FROM t');
like($err, qr/corrupt data in tessera table "t", stripe 1, column "payload".*directory section checksum mismatch/s,
	'a damaged column section is reported naming the column');
($ret, $out, $err) = $node->psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT payload FROM t WHERE ctid = '(0,1)'});
like($err, qr/corrupt data in tessera table "t", stripe 1, column "payload"/,
	'a fetch of the column reports it too');
ok($node->safe_psql('postgres', q{
	SELECT count(*) FROM tessera.verify('t') WHERE problem ~ 'directory section checksum mismatch'}) > 0,
	'tessera.verify reports the damaged column section');
$node->stop;
flip_bytes(file_offset($start_block, $dir_off + $payload_sec + 60), 2);
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*), sum(id), md5(string_agg(payload, \',\' ORDER BY id)) FROM t'),
	$good, 'column section repaired');

# 2b. formats newer than this build: a stripe directory and the metapage
#     that say a higher version (uint32 after the magic) are refused as
#     not supported, with a hint, not reported as corruption
sub put_u32
{
	my ($pos, $value) = @_;
	open(my $fh, '+<', $file) or die "open $file: $!";
	binmode $fh;
	seek($fh, $pos, 0) or die;
	my $old;
	read($fh, $old, 4) == 4 or die;
	seek($fh, $pos, 0) or die;
	print $fh pack('V', $value);
	close($fh);
	return unpack('V', $old);
}
$node->stop;
my $dir_version = put_u32(file_offset($start_block, $dir_off + 4), 99);
$node->start;
($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT count(*) FROM t");
like($err, qr/0A000: stripe 1 of tessera table "t" has directory format version 99, but this build reads versions up to $dir_version/,
	'a newer directory format is refused by name, feature_not_supported');
like($err, qr/HINT:.*newer tessera/, 'with a hint to install the newer library');
$node->stop;
put_u32(file_offset($start_block, $dir_off + 4), $dir_version);
my $meta_version = put_u32(PAGE_DATA_START + 4, 7);
$node->start;
($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT count(*) FROM t");
like($err, qr/0A000: tessera table "t" has storage format version 7, but this build reads version $meta_version/,
	'a newer storage format is refused');
like($err, qr/HINT:.*newer tessera/, 'with its hint');
$node->stop;
put_u32(PAGE_DATA_START + 4, $meta_version);
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '20000', 'versions restored');

# 3. a page's special space overwritten (not our page any more)
$node->stop;
flip_bytes(($start_block + 1) * 8192 + 8192 - 8, 4);
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'SELECT max(t::text) FROM t');    # reads every column
like($err, qr/corrupt data in tessera table "t", stripe 1/, 'foreign page is reported');
$node->stop;
flip_bytes(($start_block + 1) * 8192 + 8192 - 8, 4);
$node->start;

# 4. the file truncated under the catalog
$node->stop;
truncate($file, 2 * 8192) or die "truncate: $!";
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM t');
like($err, qr/corrupt data in tessera table "t", stripe \d+, stripe directory/, 'truncated file is reported');
like($err, qr/stripe pages lie outside the relation/, 'truncation detail');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server still up');

# 5. a damaged table can still be dropped, as a heap table can: with its
# metapage overwritten (a WARNING: its catalog rows cannot be found), or its
# file gone
$node->stop;
flip_bytes(PAGE_DATA_START, 8);
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'DROP TABLE t');
is($ret, 0, 'a table with a damaged metapage can be dropped');
like($err, qr/WARNING:.*"t" has an invalid metapage: its stripe catalog rows are left in place/,
	'with a warning naming it');
# TRUNCATE empties a damaged table (the usual remedy, as for heap)
$node->safe_psql('postgres', q{
	CREATE TABLE damaged (a int, b text) USING tessera;
	INSERT INTO damaged SELECT i, md5(i::text) FROM generate_series(1, 3000) i;
	CHECKPOINT;
});
my $damaged = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('damaged')");
$node->stop;
{
	open(my $fh, '+<', $damaged) or die "open $damaged: $!";
	binmode $fh;
	seek($fh, PAGE_DATA_START, 0) or die;
	print $fh "\xff" x 8;
	close($fh);
}
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM damaged');
like($err, qr/"damaged" has an invalid metapage/, 'the damaged table is reported');
($ret, $out, $err) = $node->psql('postgres', 'TRUNCATE damaged');
is($ret, 0, 'TRUNCATE of a table with a damaged metapage succeeds');
like($err, qr/WARNING:.*"damaged" has an invalid metapage/, 'and warns');
$node->safe_psql('postgres', 'INSERT INTO damaged VALUES (1, \'one\'), (2, \'two\')');
is($node->safe_psql('postgres', 'SELECT count(*), sum(a) FROM damaged'), '2|3',
	'the truncated table takes new rows');
is($node->safe_psql('postgres', "SELECT count(*) FROM tessera.verify('damaged') WHERE severity <> 'warning'"),
	'0', 'and verify finds nothing wrong with it');
$node->safe_psql('postgres', q{
	CREATE TABLE gone (a int) USING tessera;
	INSERT INTO gone SELECT generate_series(1, 1000);
	CHECKPOINT;
});
my $gone = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('gone')");
$node->stop;
unlink($gone) or die "unlink $gone: $!";
$node->start;
($ret, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM gone');
like($err, qr/could not open file/, 'a missing file is an error on read');
($ret, $out, $err) = $node->psql('postgres', 'DROP TABLE gone');
is($ret, 0, 'and the table can be dropped');
is($err, '', 'silently, as heap');

$node->stop;
done_testing();
