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

/*
 * TesseraLoadDir
 *		Read, checksum and validate a stripe's directory; palloc'd in the
 *		current memory context.
 */
TesseraStripeDir *
TesseraLoadDir(Relation rel, const TesseraStripe *s, BlockNumber rel_nblocks)
{
	TesseraStripeDir *dir = palloc0(sizeof(TesseraStripeDir));
	char	   *buf;
	TesseraDirHeader *hdr;
	pg_crc32c	crc;
	uint32		stored_crc;
	char	   *p;
	uint64		rows = 0;

	/* a delta stripe listed without its bytes: fetch them now */
	if ((s->flags & TESSERA_STRIPE_DELTA) && s->delta == NULL)
		TesseraFetchDeltaBytes(NULL, (TesseraStripe *) s);
	TesseraCheckStripeRow(rel, s, rel_nblocks);
	if (s->dir_bytes < sizeof(TesseraDirHeader))
		TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "directory too small");
	buf = palloc(MAXALIGN(s->dir_bytes));
	if (!TesseraReadStripeBytes(rel, s, s->dir_offset, s->dir_bytes, buf, NULL))
		TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "directory pages are invalid");

	hdr = (TesseraDirHeader *) buf;

	/*
	 * A directory a newer tessera wrote: its layout, and how it is
	 * checksummed, are unknown here.  Not corruption: say what to do.
	 */
	if (hdr->magic == TESSERA_DIR_MAGIC && hdr->format_version > TESSERA_DIR_VERSION_NEWEST)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("stripe " UINT64_FORMAT " of tessera table \"%s\" has directory format version %u, but this build reads versions up to %d",
						s->stripe_id, RelationGetRelationName(rel), hdr->format_version,
						TESSERA_DIR_VERSION_NEWEST),
				 errhint("The table was written by a newer tessera: install that version's library.")));
	stored_crc = hdr->crc;
	hdr->crc = 0;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, buf, s->dir_bytes);
	FIN_CRC32C(crc);
	hdr->crc = stored_crc;
	if (crc != stored_crc)
		TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "directory checksum mismatch");
	if (hdr->magic != TESSERA_DIR_MAGIC ||
		!((hdr->format_version == TESSERA_FORMAT_VERSION && hdr->flags == 0) ||
		  (hdr->format_version == TESSERA_DIR_VERSION_DEAD && hdr->flags == TESSERA_DIR_DEAD_ROWS) ||
		  ((hdr->format_version == TESSERA_DIR_VERSION_XXH3 ||
			hdr->format_version == TESSERA_DIR_VERSION_FRAMES) &&
		   (hdr->flags & ~TESSERA_DIR_DEAD_ROWS) == 0)) ||
		hdr->stripe_id != s->stripe_id || hdr->first_rownum != s->first_rownum ||
		hdr->row_count != s->row_count || hdr->n_row_groups != s->n_row_groups ||
		hdr->natts != s->natts ||
		TesseraDirSize(hdr->natts, hdr->n_row_groups, hdr->n_cid_runs, hdr->stats_bytes,
					   hdr->flags) != s->dir_bytes)
		TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "directory does not match the catalog");

	dir->hdr = *hdr;
	p = buf + sizeof(TesseraDirHeader);
	dir->rgs = (TesseraRowGroupDisk *) p;
	p += sizeof(TesseraRowGroupDisk) * hdr->n_row_groups;
	dir->chunks = (TesseraChunkDisk *) p;
	p += sizeof(TesseraChunkDisk) * hdr->n_row_groups * hdr->natts;
	dir->cids = (TesseraCidRun *) p;
	p += sizeof(TesseraCidRun) * hdr->n_cid_runs;
	dir->dead = NULL;
	if (hdr->flags & TESSERA_DIR_DEAD_ROWS)
	{
		dir->dead = (TesseraChunkDisk *) p;
		p += sizeof(TesseraChunkDisk) * hdr->n_row_groups;
	}
	dir->stats = p;

	for (uint32 g = 0; g < hdr->n_row_groups; g++)
	{
		TesseraRowGroupDisk *rg = &dir->rgs[g];

		if (rg->first_rownum != s->first_rownum + rows || rg->row_count == 0 ||
			(rg->flags & TESSERA_RG_DENSE) == 0)
			TesseraReportCorrupt(rel, s->stripe_id, g, -1, "row group bounds are inconsistent");
		rows += rg->row_count;
		for (uint32 a = 0; a < hdr->natts; a++)
		{
			TesseraChunkDisk *c = &dir->chunks[g * hdr->natts + a];

			if (c->offset + c->stored_bytes > s->dir_offset ||
				c->encoding >= TESSERA_ENC_COUNT || c->codec >= TESSERA_CODEC_COUNT ||
				c->value_count > rg->row_count || (c->flags & ~TESSERA_CHUNK_FLAGS) ||
				((c->flags & TESSERA_CHUNK_FRAMED) &&
				 hdr->format_version < TESSERA_DIR_VERSION_FRAMES) ||
				((c->flags & TESSERA_CHUNK_HAS_STATS) &&
				 ((uint64) c->min_off + c->min_len > hdr->stats_bytes ||
				  (uint64) c->max_off + c->max_len > hdr->stats_bytes)))
				TesseraReportCorrupt(rel, s->stripe_id, g, (int) a, "chunk entry is invalid");
		}
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
	return dir;
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
