/*-------------------------------------------------------------------------
 *
 * directory.c
 *	  A stripe's directory read and checked, what it says of row groups,
 *	  folded and visible rows, and a framed chunk's frame table.
 *
 * NOTES
 *	  These read a stripe's own pages without a reader: the reader uses
 *	  them for its stripes, fetches and introspection for one stripe.
 *	  Everything read is checked (page layout, checksums, every size and
 *	  offset) and a mismatch is reported as ERRCODE_DATA_CORRUPTED naming
 *	  the table and stripe.
 *
 * IDENTIFICATION
 *	  src/reader/directory.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/subtrans.h"
#include "access/xact.h"
#include "port/pg_crc32c.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "tessera/reader.h"
#include "tessera/rowstate.h"
#include "tessera/storage.h"
#include "tessera/tessera.h"

/*
 * TesseraReportCorrupt
 *		Raise ERRCODE_DATA_CORRUPTED naming the table, stripe, row group (or
 *		-1) and column (or -1: the directory).
 */
void
TesseraReportCorrupt(Relation rel, uint64 stripe_id, int rg, int attidx, const char *detail)
{
	const char *what;

	if (attidx >= 0 && attidx < RelationGetDescr(rel)->natts)
		what = psprintf("column \"%s\"", NameStr(TupleDescAttr(RelationGetDescr(rel), attidx)->attname));
	else
		what = "stripe directory";

	if (rg >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt data in tessera table \"%s\", stripe " UINT64_FORMAT ", row group %d, %s",
						RelationGetRelationName(rel), stripe_id, rg, what),
				 errdetail("%s.", detail)));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupt data in tessera table \"%s\", stripe " UINT64_FORMAT ", %s",
					RelationGetRelationName(rel), stripe_id, what),
			 errdetail("%s.", detail)));
}

/* TesseraCorruptFn over a TesseraCorruptContext */
void
TesseraChunkCorrupt(void *arg, const char *detail)
{
	TesseraCorruptContext *c = (TesseraCorruptContext *) arg;

	TesseraReportCorrupt(c->rel, c->stripe_id, c->rg, c->attidx, detail);
}

/*
 * TesseraCheckStripeRow
 *		Check a stripe's catalog row (flags, sizes, counts, pages within
 *		the relation's blocks) before anything is read by it.
 */
void
TesseraCheckStripeRow(Relation rel, const TesseraStripe *s, BlockNumber rel_nblocks)
{
	const char *problem = NULL;

	if (s->flags & ~(TESSERA_STRIPE_DELTA | TESSERA_STRIPE_FROZEN | TESSERA_STRIPE_FOLDED))
		problem = "stripe catalog row has unknown flags";
	else if (s->flags & TESSERA_STRIPE_DELTA)
	{
		/* the bytes themselves are checked once fetched */
		if ((s->delta != NULL && VARSIZE_ANY_EXHDR(s->delta) != s->data_bytes) ||
			s->dir_offset + s->dir_bytes != s->data_bytes)
			problem = "delta stripe sizes are inconsistent";
	}
	else if (s->start_block == TESSERA_METAPAGE_BLKNO || s->nblocks == 0 ||
			 (uint64) s->start_block + s->nblocks > rel_nblocks)
		problem = "stripe pages lie outside the relation";
	else if (s->data_bytes > (uint64) s->nblocks * TESSERA_PAGE_DATA_SIZE ||
			 s->dir_offset + s->dir_bytes != s->data_bytes)
		problem = "stripe sizes are inconsistent";
	else if (s->n_row_groups == 0 || s->n_row_groups > s->row_count ||
			 s->natts > MaxHeapAttributeNumber)
		problem = "stripe counts are inconsistent";
	if (problem)
		TesseraReportCorrupt(rel, s->stripe_id, -1, -1, problem);
}

/* A chunk entry of column a, row group g, checked against its row group and values. */
static void
check_chunk(Relation rel, const TesseraStripe *s, const TesseraStripeDir *dir, uint32 g,
			uint32 a, const TesseraChunkDisk *c, uint64 stats_bytes)
{
	if (c->offset + c->stored_bytes > s->dir_offset ||
		c->encoding >= TESSERA_ENC_COUNT || c->codec >= TESSERA_CODEC_COUNT ||
		c->value_count > dir->rgs[g].row_count || (c->flags & ~TESSERA_CHUNK_FLAGS) ||
		((c->flags & TESSERA_CHUNK_FRAMED) &&
		 dir->hdr.format_version < TESSERA_DIR_VERSION_FRAMES) ||
		((c->flags & TESSERA_CHUNK_HAS_STATS) &&
		 ((uint64) c->min_off + c->min_len > stats_bytes ||
		  (uint64) c->max_off + c->max_len > stats_bytes)))
		TesseraReportCorrupt(rel, s->stripe_id, g, (int) a, "chunk entry is invalid");
}

/*
 * Column a's section of a version 5 directory, its bytes at sec: checked,
 * and its entries and values made the column's.
 */
static void
set_column(Relation rel, const TesseraStripe *s, TesseraStripeDir *dir, uint32 a, char *sec)
{
	const TesseraDirColumn *col = &dir->cols[a];
	uint32		nrg = dir->hdr.n_row_groups;
	TesseraChunkDisk *chunks = (TesseraChunkDisk *) sec;

	if (TesseraChunkChecksum(dir->hdr.format_version, sec,
							 TesseraDirSectionBytes(nrg, col->stats_bytes)) != col->check)
		TesseraReportCorrupt(rel, s->stripe_id, -1, (int) a, "directory section checksum mismatch");
	for (uint32 g = 0; g < nrg; g++)
		check_chunk(rel, s, dir, g, a, &chunks[g], col->stats_bytes);
	dir->col_stats[a] = sec + (Size) nrg * sizeof(TesseraChunkDisk);
	dir->col_chunks[a] = chunks;
}

/*
 * The layout after the header: pointers into buf (the head, or the whole
 * directory), the column table of version 5 checked against the
 * directory's size.
 */
static void
lay_out(Relation rel, const TesseraStripe *s, TesseraStripeDir *dir, char *buf)
{
	TesseraDirHeader *hdr = &dir->hdr;
	uint32		natts = hdr->natts;
	uint32		nrg = hdr->n_row_groups;
	char	   *p = buf + sizeof(TesseraDirHeader);
	TesseraChunkDisk *chunks = NULL;

	dir->rgs = (TesseraRowGroupDisk *) p;
	p += sizeof(TesseraRowGroupDisk) * nrg;
	if (hdr->format_version < TESSERA_DIR_VERSION_COLUMNS)
	{
		chunks = (TesseraChunkDisk *) p;
		p += sizeof(TesseraChunkDisk) * nrg * natts;
	}
	dir->cids = (TesseraCidRun *) p;
	p += sizeof(TesseraCidRun) * hdr->n_cid_runs;
	dir->dead = NULL;
	if (hdr->flags & TESSERA_DIR_DEAD_ROWS)
	{
		dir->dead = (TesseraChunkDisk *) p;
		p += sizeof(TesseraChunkDisk) * nrg;
	}
	dir->col_chunks = palloc0(sizeof(TesseraChunkDisk *) * Max(natts, 1));
	dir->col_stats = palloc0(sizeof(char *) * Max(natts, 1));
	if (chunks != NULL)
	{
		/* row group major, one stats area */
		dir->chunk_stride = natts;
		for (uint32 a = 0; a < natts; a++)
		{
			dir->col_chunks[a] = chunks + a;
			dir->col_stats[a] = p;
		}
		dir->cols = NULL;
	}
	else
	{
		uint64		next = TesseraDirHeadSize(natts, nrg, hdr->n_cid_runs, hdr->flags);
		uint64		stats = 0;

		dir->chunk_stride = 1;
		dir->cols = (TesseraDirColumn *) p;
		for (uint32 a = 0; a < natts; a++)
		{
			if (dir->cols[a].offset != next)
				TesseraReportCorrupt(rel, s->stripe_id, -1, (int) a,
									 "directory section is out of place");
			next += MAXALIGN(TesseraDirSectionBytes(nrg, dir->cols[a].stats_bytes));
			stats += dir->cols[a].stats_bytes;
		}
		if (next != s->dir_bytes || stats != hdr->stats_bytes)
			TesseraReportCorrupt(rel, s->stripe_id, -1, -1,
								 "directory sections do not add up to the directory");
	}
}

/* The row groups, dead row lists and cid runs, checked. */
static void
check_row_groups(Relation rel, const TesseraStripe *s, TesseraStripeDir *dir)
{
	TesseraDirHeader *hdr = &dir->hdr;
	uint64		rows = 0;

	for (uint32 g = 0; g < hdr->n_row_groups; g++)
	{
		TesseraRowGroupDisk *rg = &dir->rgs[g];

		if (rg->first_rownum != s->first_rownum + rows || rg->row_count == 0 ||
			(rg->flags & TESSERA_RG_DENSE) == 0)
			TesseraReportCorrupt(rel, s->stripe_id, g, -1, "row group bounds are inconsistent");
		rows += rg->row_count;
		if (dir->dead != NULL)
		{
			TesseraChunkDisk *c = &dir->dead[g];

			if (c->offset + c->stored_bytes > s->dir_offset ||
				c->codec >= TESSERA_CODEC_COUNT || c->value_count > rg->row_count ||
				(c->value_count == 0) != (c->stored_bytes == 0) || c->flags != 0)
				TesseraReportCorrupt(rel, s->stripe_id, g, -1, "dead row list entry is invalid");
		}
	}
	if (rows != s->row_count)
		TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "row groups do not add up to the stripe");
	for (uint32 k = 0; k < hdr->n_cid_runs; k++)
		if (dir->cids[k].first_row >= s->row_count ||
			(k > 0 && dir->cids[k].first_row <= dir->cids[k - 1].first_row))
			TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "command id runs are invalid");
}

/* Does the header agree with the catalog row, its version with its layout? */
static bool
header_valid(const TesseraStripe *s, const TesseraDirHeader *hdr)
{
	uint32		v = hdr->format_version;

	if (hdr->magic != TESSERA_DIR_MAGIC ||
		!((v == TESSERA_FORMAT_VERSION && hdr->flags == 0) ||
		  (v == TESSERA_DIR_VERSION_DEAD && hdr->flags == TESSERA_DIR_DEAD_ROWS) ||
		  (v >= TESSERA_DIR_VERSION_XXH3 && v <= TESSERA_DIR_VERSION_COLUMNS &&
		   (hdr->flags & ~TESSERA_DIR_DEAD_ROWS) == 0)) ||
		hdr->stripe_id != s->stripe_id || hdr->first_rownum != s->first_rownum ||
		hdr->row_count != s->row_count || hdr->n_row_groups != s->n_row_groups ||
		hdr->natts != s->natts || hdr->n_cid_runs > s->row_count)
		return false;
	if (v < TESSERA_DIR_VERSION_COLUMNS)
		return TesseraDirSize(hdr->natts, hdr->n_row_groups, hdr->n_cid_runs, hdr->stats_bytes,
							  hdr->flags) == s->dir_bytes;
	return TesseraDirHeadSize(hdr->natts, hdr->n_row_groups, hdr->n_cid_runs, hdr->flags) <=
		s->dir_bytes;
}

/*
 * Read, checksum and validate a stripe's directory, in the current memory
 * context: whole, or (whole false) of a version 5 directory its head only,
 * its columns read as they are needed (TesseraDirNeedColumn).
 */
static TesseraStripeDir *
load_dir(Relation rel, const TesseraStripe *s, BlockNumber rel_nblocks, bool whole)
{
	TesseraStripeDir *dir = palloc0(sizeof(TesseraStripeDir));
	TesseraDirHeader first;
	char	   *buf;
	TesseraDirHeader *hdr;
	pg_crc32c	crc;
	uint32		stored_crc;
	Size		len = s->dir_bytes;
	Size		covered;

	/* a delta stripe listed without its bytes: fetch them now */
	if ((s->flags & TESSERA_STRIPE_DELTA) && s->delta == NULL)
		TesseraFetchDeltaBytes(NULL, (TesseraStripe *) s);
	/* (a delta stripe's bytes may be freed after this: read it whole) */
	if (s->flags & TESSERA_STRIPE_DELTA)
		whole = true;
	TesseraCheckStripeRow(rel, s, rel_nblocks);
	if (s->dir_bytes < sizeof(TesseraDirHeader))
		TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "directory too small");
	if (!TesseraReadStripeBytes(rel, s, s->dir_offset, sizeof(first), (char *) &first, NULL))
		TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "directory pages are invalid");

	/*
	 * A directory a newer tessera wrote: its layout, and how it is
	 * checksummed, are unknown here.  Not corruption: say what to do.
	 */
	if (first.magic == TESSERA_DIR_MAGIC && first.format_version > TESSERA_DIR_VERSION_NEWEST)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("stripe " UINT64_FORMAT " of tessera table \"%s\" has directory format version %u, but this build reads versions up to %d",
						s->stripe_id, RelationGetRelationName(rel), first.format_version,
						TESSERA_DIR_VERSION_NEWEST),
				 errhint("The table was written by a newer tessera: install that version's library.")));

	/*
	 * What the checksum covers: a version 5 head's size follows from its
	 * counts.  Counts that cannot be right (damage) leave it the whole,
	 * which then fails the checksum as damage should.
	 */
	covered = len;
	if (first.magic == TESSERA_DIR_MAGIC && first.format_version == TESSERA_DIR_VERSION_COLUMNS &&
		first.n_cid_runs <= s->row_count &&
		TesseraDirHeadSize(s->natts, s->n_row_groups, first.n_cid_runs, first.flags) <= len)
	{
		covered = TesseraDirHeadSize(s->natts, s->n_row_groups, first.n_cid_runs, first.flags);
		if (!whole)
			len = covered;
	}
	buf = palloc(MAXALIGN(len));
	if (!TesseraReadStripeBytes(rel, s, s->dir_offset, len, buf, NULL))
		TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "directory pages are invalid");

	hdr = (TesseraDirHeader *) buf;
	stored_crc = hdr->crc;
	hdr->crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, buf, covered);
	FIN_CRC32C(crc);
	hdr->crc = stored_crc;
	if (crc != stored_crc)
		TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "directory checksum mismatch");
	if (!header_valid(s, hdr) ||
		(hdr->format_version == TESSERA_DIR_VERSION_COLUMNS &&
		 covered != TesseraDirHeadSize(hdr->natts, hdr->n_row_groups, hdr->n_cid_runs,
									   hdr->flags)))
		TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "directory does not match the catalog");

	dir->hdr = *hdr;
	dir->bytes = buf;
	dir->cxt = CurrentMemoryContext;
	dir->whole = whole || dir->hdr.format_version < TESSERA_DIR_VERSION_COLUMNS;
	lay_out(rel, s, dir, buf);
	check_row_groups(rel, s, dir);
	for (uint32 a = 0; a < hdr->natts; a++)
	{
		if (dir->cols != NULL)
		{
			if (whole)
				set_column(rel, s, dir, a, buf + dir->cols[a].offset);
		}
		else
			for (uint32 g = 0; g < hdr->n_row_groups; g++)
				check_chunk(rel, s, dir, g, a, TesseraDirChunk(dir, g, a), hdr->stats_bytes);
	}
	return dir;
}

/*
 * TesseraLoadDir
 *		Read, checksum and validate a stripe's whole directory; palloc'd in
 *		the current memory context.
 */
TesseraStripeDir *
TesseraLoadDir(Relation rel, const TesseraStripe *s, BlockNumber rel_nblocks)
{
	return load_dir(rel, s, rel_nblocks, true);
}

/*
 * TesseraLoadDirHead
 *		The same, but of a version 5 directory only the head: a column's
 *		entries are read by TesseraDirNeedColumn, into the current memory
 *		context of this call.
 */
TesseraStripeDir *
TesseraLoadDirHead(Relation rel, const TesseraStripe *s, BlockNumber rel_nblocks)
{
	return load_dir(rel, s, rel_nblocks, false);
}

/*
 * TesseraDirNeedColumn
 *		Make column attidx's chunk entries and values available in dir
 *		(read and checked now if they were not).  attidx must be one the
 *		stripe stores (below hdr.natts).
 */
void
TesseraDirNeedColumn(Relation rel, const TesseraStripe *s, TesseraStripeDir *dir, int attidx)
{
	MemoryContext old;
	const TesseraDirColumn *col;
	Size		len;
	char	   *sec;

	Assert(attidx >= 0 && (uint32) attidx < dir->hdr.natts);
	if (dir->col_chunks[attidx] != NULL)
		return;
	Assert(dir->cols != NULL);
	col = &dir->cols[attidx];
	len = TesseraDirSectionBytes(dir->hdr.n_row_groups, col->stats_bytes);
	old = MemoryContextSwitchTo(dir->cxt);
	sec = palloc(MAXALIGN(Max(len, 1)));
	MemoryContextSwitchTo(old);
	if (!TesseraReadStripeBytes(rel, s, s->dir_offset + col->offset, len, sec, NULL))
	{
		pfree(sec);
		TesseraReportCorrupt(rel, s->stripe_id, -1, attidx, "directory pages are invalid");
	}
	PG_TRY();
	{
		set_column(rel, s, dir, (uint32) attidx, sec);
	}
	PG_CATCH();
	{
		pfree(sec);
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/* TesseraFreeDir: free a directory TesseraLoadDir(Head) made. */
void
TesseraFreeDir(TesseraStripeDir *dir)
{
	if (!dir->whole)
		for (uint32 a = 0; a < dir->hdr.natts; a++)
			if (dir->col_chunks[a] != NULL)
				pfree(dir->col_chunks[a]);
	pfree(dir->col_chunks);
	pfree(dir->col_stats);
	pfree(dir->bytes);
	pfree(dir);
}

/*
 * TesseraDecodeDeadRows
 *		Set dead[i] for the folded rows of row group rg (dead has the row
 *		group's row count entries, cleared by the caller).  Returns the
 *		number of folded rows; 0 without reading anything if there are none.
 */
int
TesseraDecodeDeadRows(Relation rel, const TesseraStripe *s, const TesseraStripeDir *dir,
					  int rg, bool *dead)
{
	TesseraChunkDisk *cd;
	TesseraCorruptContext cc;
	char	   *stored;
	const char *raw;
	int64	   *idx;
	int			n;
	uint32		nrows = dir->rgs[rg].row_count;

	if (dir->dead == NULL || dir->dead[rg].value_count == 0)
		return 0;
	cd = &dir->dead[rg];
	n = (int) cd->value_count;
	cc.rel = rel;
	cc.stripe_id = s->stripe_id;
	cc.rg = rg;
	cc.attidx = -1;

	stored = palloc((Size) cd->stored_bytes + TESSERA_DECODE_PADDING);
	if (!TesseraReadStripeBytes(rel, s, cd->offset, cd->stored_bytes, stored, NULL))
		TesseraReportCorrupt(rel, s->stripe_id, rg, -1, "dead row list pages are invalid");
	memset(stored + cd->stored_bytes, 0, TESSERA_DECODE_PADDING);
	if (TesseraChunkChecksum(dir->hdr.format_version, stored, cd->stored_bytes) != cd->crc)
		TesseraReportCorrupt(rel, s->stripe_id, rg, -1, "dead row list checksum mismatch");
	raw = TesseraChunkRaw(cd, stored, TesseraChunkCorrupt, &cc);
	idx = palloc(sizeof(int64) * n);
	if (TesseraDecodeInts(raw, raw + cd->raw_bytes, n, idx) == NULL)
		TesseraReportCorrupt(rel, s->stripe_id, rg, -1, "dead row list is malformed");
	for (int i = 0; i < n; i++)
	{
		if (idx[i] < 0 || idx[i] >= (int64) nrows || (i > 0 && idx[i] <= idx[i - 1]))
			TesseraReportCorrupt(rel, s->stripe_id, rg, -1, "dead row list is malformed");
		dead[idx[i]] = true;
	}
	pfree(idx);
	if (raw != stored)
		pfree((char *) raw);
	pfree(stored);
	return n;
}

/*
 * TesseraDirFindRowGroup
 *		The row group of dir holding rownum, and the row's index in it
 *		(*row); -1 if none does.
 */
int
TesseraDirFindRowGroup(const TesseraStripeDir *dir, uint64 rownum, int *row)
{
	int			lo = 0,
				hi = (int) dir->hdr.n_row_groups - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		const TesseraRowGroupDisk *g = &dir->rgs[mid];

		if (rownum < g->first_rownum)
			hi = mid - 1;
		else if (rownum >= g->first_rownum + g->row_count)
			lo = mid + 1;
		else
		{
			*row = (int) (rownum - g->first_rownum);
			return mid;
		}
	}
	return -1;
}

/* Is rownum (in stripe s) a folded row? */
bool
TesseraRowFolded(Relation rel, const TesseraStripe *s, const TesseraStripeDir *dir,
				 uint64 rownum)
{
	int			rg;
	int			row;
	bool	   *dead;
	bool		result;

	if (dir->dead == NULL)
		return false;
	rg = TesseraDirFindRowGroup(dir, rownum, &row);
	if (rg < 0 || dir->dead[rg].value_count == 0)
		return false;
	dead = palloc0(sizeof(bool) * dir->rgs[rg].row_count);
	TesseraDecodeDeadRows(rel, s, dir, rg, dead);
	result = dead[row];
	pfree(dead);
	return result;
}

/*
 * TesseraVisibleRows
 *		How many of a stripe's rows the snapshot sees: all of them, unless
 *		the current transaction wrote the stripe and some rows come from
 *		commands the snapshot must not see yet.
 */
uint64
TesseraVisibleRows(TesseraStripe *s, TesseraStripeDir *dir, Snapshot snapshot)
{
	if (!s->own || snapshot == NULL || snapshot->snapshot_type != SNAPSHOT_MVCC)
		return s->row_count;
	for (uint32 k = 0; k < dir->hdr.n_cid_runs; k++)
		if (dir->cids[k].cid >= snapshot->curcid)
			return dir->cids[k].first_row;
	return s->row_count;
}

/*
 * TesseraRowInsertedVisible
 *		Is row rownum's insertion visible to snapshot: its stripe, the
 *		command that wrote it (own transaction), and not folded away?
 *		(Whether it was deleted since is the row state's business.)
 */
bool
TesseraRowInsertedVisible(Relation rel, uint64 rownum, Snapshot snapshot)
{
	TesseraMeta meta;
	TesseraStripe s;
	TesseraStripeDir *dir;

	TesseraReadMeta(rel, &meta);
	if (!meta.valid || !TesseraFindStripe(meta.storage_id, rownum, snapshot, &s))
		return false;
	dir = TesseraLoadDir(rel, &s, TesseraPhysicalBlocks(rel));
	return rownum - s.first_rownum < TesseraVisibleRows(&s, dir, snapshot) &&
		!TesseraRowFolded(rel, &s, dir, rownum);
}

/*
 * TesseraReadFrameTable
 *		A framed chunk's frame table, read from the stripe's pages (usually
 *		all within its first 2 KB) and checked against the directory's
 *		checksum, in the current memory context; *ft points into it.
 */
char *
TesseraReadFrameTable(Relation rel, const TesseraStripe *stripe, const TesseraChunkDisk *cd,
					  uint32 dir_version, TesseraFrameTable *ft, TesseraCorruptFn corrupt,
					  void *arg)
{
	TesseraFrameHeader hdr;
	Size		table_bytes;
	Size		first = Min((Size) cd->stored_bytes, (Size) 2048);
	char	   *table = palloc(first);

	if (!TesseraReadStripeBytes(rel, stripe, cd->offset, first, table, NULL))
		corrupt(arg, "chunk pages are invalid");
	if (first < sizeof(hdr))
		corrupt(arg, "chunk frame table is malformed");
	memcpy(&hdr, table, sizeof(hdr));
	if ((uint64) hdr.nframes + hdr.index_count > cd->stored_bytes)
		corrupt(arg, "chunk frame table is malformed");
	table_bytes = TesseraFrameTableSize(hdr.nframes, hdr.index_count);
	if (table_bytes > cd->stored_bytes)
		corrupt(arg, "chunk frame table is malformed");
	if (table_bytes > first)
	{
		table = repalloc(table, table_bytes);
		if (!TesseraReadStripeBytes(rel, stripe, cd->offset + first, table_bytes - first,
									table + first, NULL))
			corrupt(arg, "chunk pages are invalid");
	}
	if (TesseraChunkChecksum(dir_version, table, table_bytes) != cd->crc)
		corrupt(arg, "chunk checksum mismatch");
	if (!TesseraFrameTableRead(cd, table, table_bytes, ft))
		corrupt(arg, "chunk frame table is malformed");
	return table;
}
