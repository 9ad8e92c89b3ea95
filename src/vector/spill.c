/*-------------------------------------------------------------------------
 *
 * spill.c
 *	  Groups past memory: written to hash partitions, merged back one
 *	  partition at a time.
 *
 * NOTES
 *	  Once the groups take more than hash_mem (planned so, or an estimate
 *	  that was wrong), each is written as a row -- its keys, then its
 *	  states serialized as for the parallel merge -- to one of a set of
 *	  partitions (lists of blocks of one temporary file, below) chosen by
 *	  a hash of its keys' values, and the table starts empty.
 *	  After the input, the groups left are written too, and each partition
 *	  is read back into the emptied table, rows of equal keys merging as a
 *	  parallel plan's final node merges its workers' groups; its groups
 *	  are returned, then the next partition's.  A group's rows all land in
 *	  one partition, so no group is returned twice.
 *
 *	  The partitions are sized from the planner's estimate of the groups
 *	  and what fitted before the first spill.  A partition that still does
 *	  not fit (the estimate was wrong: count(DISTINCT)'s groups of keys and
 *	  values are estimated as the keys' groups) is split again, as
 *	  PostgreSQL's hash aggregation does: what is in the table and the rest
 *	  of the partition are written to new partitions by another hash of the
 *	  same values, which are merged back in their turn.  Past SPILL_MAX_DEPTH
 *	  splits (values that do not spread), the table and the rest of the
 *	  partition go into a sort by key (each key's default btree order, whose
 *	  equality is the grouping's) and sorted runs of equal keys are merged
 *	  one group at a time.  Memory stays bounded either way, and there is no
 *	  second aggregation path.
 *
 *	  (Until 2026-11 every spill went to the sort: ClickBench's WatchID,
 *	  ClientIP grouping of a million rows spent most of its time comparing
 *	  keys.)
 *
 * IDENTIFICATION
 *	  src/vector/spill.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "tessera/vector.h"

#define SPILL_MIN_PARTS		4
#define SPILL_MAX_PARTS		256
#define SPILL_MAX_DEPTH		3
/*
 * at most this many groups a partition, where the partitions allow: a
 * partition read back into a table of a few MB merges in cache (ClickBench's
 * WatchID, ClientIP grouping of 1M rows: 4 partitions of 250,000 groups
 * 548 ms, 64 of them 345 ms)
 */
#define SPILL_PART_GROUPS	65536

/*
 * The partition (of nsub) a group of value hash h goes to, at this depth:
 * the first set takes bits 40.. of the hash; each split below it a hash
 * of the hash, so that the groups of one partition spread.
 */
static inline int
spill_part_of(uint64 h, int depth, int nsub)
{
	if (depth > 0)
	{
		h ^= (uint64) depth * UINT64CONST(0x9e3779b97f4a7c15);
		h ^= h >> 33;
		h *= UINT64CONST(0xff51afd7ed558ccd);
		h ^= h >> 33;
		h *= UINT64CONST(0xc4ceb9fe1a85ec53);
		h ^= h >> 33;
	}
	return (int) (h >> 40) & (nsub - 1);
}

/*
 * The partitions share one temporary file of BLCKSZ blocks: a partition
 * fills a block in memory and appends it to the file (or writes it over a
 * block already read back), keeping the list of its blocks; the block it
 * is filling when the input ends is read from memory, last.
 *
 * (Until 2026-11-30 the partitions were logical tapes, as PostgreSQL's
 * hash aggregation spills.  A tape takes its next block's number when it
 * fills one, so of 256 tapes filling in turn most write a block past the
 * file's end, whose gap logtape.c first fills with zeros: ClickBench's
 * q32 (WatchID, ClientIP) wrote each spilled byte three times, twice
 * without the tapes' preallocation.  A temporary file per partition was
 * written once but made q32 slower: creating and removing 512 files.)
 */
typedef struct TesseraSpillPart
{
	char	   *buf;			/* BLCKSZ: the block being filled, or NULL */
	int			pos;			/* bytes of buf filled */
	int			nblocks;		/* blocks of the file holding it, in order */
	int			cap;
	int64	   *blocks;
	int			next;			/* reading back: the next of blocks */
	bool		tail_read;		/* ... buf too */
} TesseraSpillPart;

/* nsub new partitions at depth; returns the first's index. */
static int
spill_add_parts(TesseraSpill *s, int nsub, int depth)
{
	MemoryContext old = MemoryContextSwitchTo(s->longcxt);
	int			base = s->npart;

	if (s->npart + nsub > s->part_cap)
	{
		int			cap = Max(s->part_cap * 2, s->npart + nsub);

		if (s->parts == NULL)
		{
			s->parts = palloc(sizeof(TesseraSpillPart) * cap);
			s->depth = palloc(sizeof(int) * cap);
			s->rows = palloc(sizeof(uint64) * cap);
		}
		else
		{
			s->parts = repalloc(s->parts, sizeof(TesseraSpillPart) * cap);
			s->depth = repalloc(s->depth, sizeof(int) * cap);
			s->rows = repalloc(s->rows, sizeof(uint64) * cap);
		}
		s->part_cap = cap;
	}
	for (int p = base; p < base + nsub; p++)
	{
		memset(&s->parts[p], 0, sizeof(TesseraSpillPart));
		s->depth[p] = depth;
		s->rows[p] = 0;
	}
	s->npart += nsub;
	MemoryContextSwitchTo(old);
	return base;
}

/* Block blk onto a list of blocks (in longcxt), grown by doubling. */
static void
spill_push_block(TesseraSpill *s, int64 **list, int *n, int *cap, int64 blk)
{
	if (*n == *cap)
	{
		*cap = Max(*cap * 2, 16);
		*list = *list == NULL ?
			MemoryContextAlloc(s->longcxt, sizeof(int64) * *cap) :
			repalloc(*list, sizeof(int64) * *cap);
	}
	(*list)[(*n)++] = blk;
}

/* Partition p's full block, to a free block of the file or its end. */
static void
spill_flush(TesseraSpill *s, TesseraSpillPart *part)
{
	int64		blk;

	if (s->file == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(s->longcxt);

		s->file = BufFileCreateTemp(false);
		MemoryContextSwitchTo(old);
	}
	blk = s->nfree > 0 ? s->free_blocks[--s->nfree] : s->file_blocks++;
	if (BufFileSeekBlock(s->file, blk) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek to block " INT64_FORMAT " of a TesseraAgg spill file: %m",
						blk)));
	BufFileWrite(s->file, part->buf, BLCKSZ);
	spill_push_block(s, &part->blocks, &part->nblocks, &part->cap, blk);
	part->pos = 0;
}

/* n bytes onto partition p. */
static inline void
spill_put(TesseraSpill *s, int p, const char *src, Size n)
{
	TesseraSpillPart *part = &s->parts[p];

	if (part->buf == NULL)
		part->buf = MemoryContextAlloc(s->longcxt, BLCKSZ);
	while (n > 0)
	{
		Size		take = Min(n, (Size) (BLCKSZ - part->pos));

		memcpy(part->buf + part->pos, src, take);
		part->pos += take;
		src += take;
		n -= take;
		if (part->pos == BLCKSZ)
			spill_flush(s, part);
	}
}

/*
 * A spilled record (len bytes) onto partition p, after its length: one
 * byte below 128, else four, big-endian, with the top bit set.
 */
static inline void
spill_write(TesseraSpill *s, int p, const char *rec, uint32 len)
{
	unsigned char head[4];

	Assert(len <= MaxAllocSize);
	if (len < 0x80)
	{
		head[0] = (unsigned char) len;
		spill_put(s, p, (char *) head, 1);
	}
	else
	{
		head[0] = (unsigned char) (0x80 | (len >> 24));
		head[1] = (unsigned char) (len >> 16);
		head[2] = (unsigned char) (len >> 8);
		head[3] = (unsigned char) len;
		spill_put(s, p, (char *) head, 4);
	}
	spill_put(s, p, rec, len);
	s->rows[p]++;
}

/*
 * Up to n bytes of partition p, read on from where its last read stopped
 * (partitions are read back one at a time, each once, from its start);
 * returns the bytes read, fewer only at its end.  A block read back is
 * free to be written again.
 */
static Size
spill_take(TesseraSpill *s, int p, char *dst, Size n)
{
	TesseraSpillPart *part = &s->parts[p];
	Size		done = 0;

	if (s->rpart != p)
	{
		s->rpart = p;
		s->rpos = s->ravail = 0;
	}
	if (s->rblock == NULL)
		s->rblock = MemoryContextAlloc(s->longcxt, BLCKSZ);
	while (done < n)
	{
		Size		take;

		if (s->rpos == s->ravail)
		{
			if (part->next < part->nblocks)
			{
				int64		blk = part->blocks[part->next++];

				if (BufFileSeekBlock(s->file, blk) != 0 ||
					BufFileRead(s->file, s->rblock, BLCKSZ) != BLCKSZ)
					ereport(ERROR,
							(errcode_for_file_access(),
							 errmsg("could not read block " INT64_FORMAT " of a TesseraAgg spill file: %m",
									blk)));
				spill_push_block(s, &s->free_blocks, &s->nfree, &s->free_cap, blk);
				s->ravail = BLCKSZ;
			}
			else if (!part->tail_read && part->pos > 0)
			{
				part->tail_read = true;
				memcpy(s->rblock, part->buf, part->pos);
				s->ravail = part->pos;
			}
			else
				break;
			s->rpos = 0;
		}
		take = Min(n - done, (Size) (s->ravail - s->rpos));
		memcpy(dst + done, s->rblock + s->rpos, take);
		s->rpos += take;
		done += take;
	}
	return done;
}

/* Partition p is done with: its memory is freed (its blocks were, as read). */
static void
spill_close(TesseraSpill *s, int p)
{
	TesseraSpillPart *part = &s->parts[p];

	if (part->buf != NULL)
		pfree(part->buf);
	if (part->blocks != NULL)
		pfree(part->blocks);
	memset(part, 0, sizeof(TesseraSpillPart));
	if (s->rpart == p)
		s->rpart = -1;
}

/* Room for a record of len bytes in *buf (MAXALIGNed, in longcxt). */
static char *
spill_buffer(TesseraSpill *s, char **buf, Size *cap, Size len)
{
	if (*cap < len)
	{
		*cap = Max(len, Max(*cap * 2, 1024));
		if (*buf != NULL)
			pfree(*buf);
		*buf = MemoryContextAlloc(s->longcxt, *cap);
	}
	return *buf;
}

/*
 * The header of a varlena of n data bytes at rec + off: one byte where it
 * is short (no alignment), else four at the record's next 4-byte boundary,
 * the padding zeroed (a zero byte is no one-byte header, so the reader
 * knows to align).  The offset of its data.
 */
static Size
spill_put_header(char *rec, Size off, Size n)
{
	if (n + VARHDRSZ_SHORT <= VARATT_SHORT_MAX)
	{
		SET_VARSIZE_SHORT(rec + off, n + VARHDRSZ_SHORT);
		return off + VARHDRSZ_SHORT;
	}
	while (off != INTALIGN(off))
		rec[off++] = 0;
	SET_VARSIZE(rec + off, n + VARHDRSZ);
	return off + VARHDRSZ;
}

/* Varlena v at rec + off so (spill_put_header); the offset after it. */
static Size
spill_put_varlena(char *rec, Size off, const char *v)
{
	Size		n = VARSIZE_ANY_EXHDR(v);

	/* (interned strings: never compressed or external) */
	Assert(!VARATT_IS_EXTERNAL(v) && !VARATT_IS_COMPRESSED(v));
	off = spill_put_header(rec, off, n);
	memcpy(rec + off, VARDATA_ANY(v), n);
	return off + n;
}

/* The varlena at rec + off (the record len bytes long) as spill_put_header headed it. */
static Size
spill_get_varlena(const char *rec, Size off, Size len, Datum *d)
{
	Size		n;

	if (off < len && VARATT_IS_1B(rec + off) && !VARATT_IS_1B_E(rec + off))
		n = VARSIZE_1B(rec + off);
	else
	{
		off = INTALIGN(off);
		if (off + VARHDRSZ > len || !VARATT_IS_4B_U(rec + off))
			n = len + 1;		/* damaged, below */
		else
			n = VARSIZE_4B(rec + off);
	}
	if (n > len - off)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("a TesseraAgg spill record is damaged")));
	*d = PointerGetDatum(rec + off);
	return off + n;
}

/*
 * Group g's record: a NULL bit per key, then per key not NULL an integer
 * kind's value (an integral numeric's id) as a zigzag varint or its
 * string's varlena, then the serialized states' bytea, both varlenas with
 * spill_put_header's headers.  Built in a buffer kept from group to group:
 * a MinimalTuple made and freed per group was a fifth of a spill's time
 * (ClickBench 10M `UserID, minute, SearchPhrase`).  Returns its length.
 *
 * Spilled bytes go through the kernel twice (written, read back), which
 * was a quarter of a spilling grouping's time: ClickBench 10M `WatchID,
 * ClientIP`'s groups (nearly all of one row) took 68 bytes each with 64-bit
 * keys and counts and aligned varlenas, 26 now.
 */
static uint32
spill_record(TesseraSpill *s, TesseraGroups *g, int group, TAggSpec *specs)
{
	int			k = g->nkeys;
	const int64 *keys = &g->keys[(Size) group * k];
	const bool *nulls = &g->keynull[(Size) group * k];
	TAggState  *states = TesseraGroupState(g, group, 0);
	Size		nstates = TesseraAggSerialSize(specs, g->nspecs, states);
	Size		len = (k + 7) / 8;
	Size		off;
	char	   *rec;

	/* at most this long: varints of 10 bytes, varlenas aligned */
	for (int j = 0; j < k; j++)
	{
		if (nulls[j])
			continue;
		if (g->gkeys[j].kind == TAGG_KEY_INT || g->gkeys[j].kind == TAGG_KEY_NUMINT)
			len += TESSERA_VARINT_MAX;
		else
			len += 3 + VARSIZE_ANY(DatumGetPointer(g->gkeys[j].strs[keys[j]]));
	}
	len += 3 + VARHDRSZ + nstates;
	if (len > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a TesseraAgg group's keys and states take more than 1 GB")));
	rec = spill_buffer(s, &s->wbuf, &s->wcap, len);
	off = (k + 7) / 8;
	memset(rec, 0, off);
	for (int j = 0; j < k; j++)
	{
		if (nulls[j])
			rec[j / 8] |= 1 << (j % 8);
		else if (g->gkeys[j].kind == TAGG_KEY_INT || g->gkeys[j].kind == TAGG_KEY_NUMINT)
			off = TesseraVarintPut(rec + off, TesseraZigzag(keys[j])) - rec;
		else
			off = spill_put_varlena(rec, off, DatumGetPointer(g->gkeys[j].strs[keys[j]]));
	}
	/* the states' bytea, serialized in place */
	off = spill_put_header(rec, off, nstates);
	off = TesseraAggSerialWrite(specs, g->nspecs, states, rec + off) - rec;
	Assert(off <= len);
	return (uint32) off;
}

/*
 * The record read into s->rbuf (s->rlen bytes), as Datums into it:
 * s->rvalues[j] per key (an integer kind's int64 as an int8 Datum, which
 * every integer type's DatumGet reads right; an integral numeric's id),
 * then the states.
 */
static void
spill_parse(TesseraSpill *s, TesseraGroups *g)
{
	int			k = g->nkeys;
	const char *rec = s->rbuf;
	Size		off = (k + 7) / 8;

	if (off >= s->rlen)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("a TesseraAgg spill record is damaged")));
	for (int j = 0; j < k; j++)
	{
		s->risnull[j] = (rec[j / 8] & (1 << (j % 8))) != 0;
		if (s->risnull[j])
			s->rvalues[j] = (Datum) 0;
		else if (g->gkeys[j].kind == TAGG_KEY_INT || g->gkeys[j].kind == TAGG_KEY_NUMINT)
		{
			uint64		v;
			const char *next = TesseraVarintGet(rec + off, rec + s->rlen, &v);

			if (next == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("a TesseraAgg spill record is damaged")));
			s->rvalues[j] = Int64GetDatum(TesseraUnzigzag(v));
			off = next - rec;
		}
		else
			off = spill_get_varlena(rec, off, s->rlen, &s->rvalues[j]);
	}
	off = spill_get_varlena(rec, off, s->rlen, &s->rvalues[k]);
	s->risnull[k] = false;
	if (off != s->rlen)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("a TesseraAgg spill record is damaged")));
}

/*
 * The row a group is spilled as: the keys in their order (an integral
 * numeric's as its int8 id), then the states.
 */
static void
spill_desc(TesseraSpill *s, TesseraGroups *g)
{
	MemoryContext old = MemoryContextSwitchTo(s->longcxt);
	int			k = g->nkeys;

	s->desc = CreateTemplateTupleDesc(k + 1);
	for (int j = 0; j < k; j++)
	{
		TAggKey    *key = &g->gkeys[j];

		/* (an integral numeric as its id: int8, in the same order) */
		if (key->kind == TAGG_KEY_NUMINT)
			TupleDescInitEntry(s->desc, j + 1, NULL, INT8OID, -1, 0);
		else
		{
			TupleDescInitEntry(s->desc, j + 1, NULL, key->typid, -1, 0);
			TupleDescInitEntryCollation(s->desc, j + 1, key->collation);
		}
	}
	TupleDescInitEntry(s->desc, k + 1, NULL, BYTEAOID, -1, 0);
	s->next = MakeSingleTupleTableSlot(s->desc, &TTSOpsMinimalTuple);
	s->rvalues = palloc(sizeof(Datum) * (k + 1));
	s->risnull = palloc(sizeof(bool) * (k + 1));
	s->wbuf = s->rbuf = NULL;
	s->wcap = s->rcap = 0;
	MemoryContextSwitchTo(old);
}

/*
 * The partitions, on the first spill: enough that each holds about half
 * of what fitted in memory (g's groups now), if the planner's estimate of
 * all the groups is right.
 */
static void
spill_begin(TesseraSpill *s, TesseraGroups *g, MemoryContext longcxt, MemoryContext tmpcxt)
{
	double		fit = Max(g->ngroups, 1);
	double		total = Max(s->est_groups, 2 * fit);
	int			npart = SPILL_MIN_PARTS;

	s->longcxt = longcxt;
	s->tmpcxt = tmpcxt;
	spill_desc(s, g);
	while (npart < SPILL_MAX_PARTS &&
		   (npart * fit / 2 < total || total / npart > SPILL_PART_GROUPS))
		npart *= 2;
	s->parts = NULL;
	s->part_cap = 0;
	s->rpart = -1;
	spill_add_parts(s, npart, 0);
	s->cur = -1;
	s->loaded = false;
}

/* Group g's row (keys, serialized states) in the slot, in the current memory. */
static void
spill_row(TupleTableSlot *slot, TesseraGroups *g, int group, TAggSpec *specs)
{
	ExecClearTuple(slot);
	TesseraGroupsKeyDatums(g, group, slot->tts_values, slot->tts_isnull, true);
	slot->tts_values[g->nkeys] = TesseraAggSerialize(specs, g->nspecs,
													 TesseraGroupState(g, group, 0));
	slot->tts_isnull[g->nkeys] = false;
	ExecStoreVirtualTuple(slot);
}

/*
 * Write every group of g to its partition (made in longcxt the first time;
 * tmpcxt is reset per group) and empty the table.
 */
/*
 * Write every group of g to its partition among the nsub from base, at
 * depth (tmpcxt is reset per group).
 */
static void
spill_table(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs, int base, int nsub, int depth)
{
	for (int group = 0; group < g->ngroups; group++)
	{
		MemoryContext old = MemoryContextSwitchTo(s->tmpcxt);
		int			p = base + spill_part_of(TesseraGroupsValueHash(g, group), depth, nsub);
		uint32		len = spill_record(s, g, group, specs);

		spill_write(s, p, s->wbuf, len);
		MemoryContextSwitchTo(old);
		if ((group & 255) == 255)
			MemoryContextReset(s->tmpcxt);
	}
	MemoryContextReset(s->tmpcxt);
}

/*
 * Write every group of g to its partition (made in longcxt the first time;
 * tmpcxt is reset per group) and empty the table.
 */
void
TesseraSpillGroups(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs,
				   MemoryContext longcxt, MemoryContext tmpcxt)
{
	int			nfirst;
	int			fit;

	if (s->npart == 0)
		spill_begin(s, g, longcxt, tmpcxt);
	/* (the first set: those at depth 0, made together) */
	for (nfirst = 0; nfirst < s->npart && s->depth[nfirst] == 0; nfirst++)
		;
	spill_table(s, g, specs, 0, nfirst, 0);
	s->spilled_groups += g->ngroups;
	s->rows_since = 0;
	s->rounds++;
	/*
	 * (as many slots as fitted: the table does not rehash its way up
	 * again; a window's table fills to the window again, so its keys and
	 * states get that room now: grown by doubling, each step past 4 MB was
	 * a copy, every round of ClickBench's 10M WatchID, ClientIP spill)
	 */
	fit = g->ngroups;
	TesseraGroupsReset(g, s->window ? Min(fit, TESSERA_SPILL_WINDOW) : 256);
	TesseraGroupsPresize(g, fit);
}

/* After the input: if anything spilled, the rest follows; partitions are read next. */
void
TesseraSpillFinish(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs,
				   MemoryContext longcxt, MemoryContext tmpcxt)
{
	if (s->npart == 0)
		return;
	TesseraSpillGroups(s, g, specs, longcxt, tmpcxt);
	s->cur = -1;
	s->loaded = false;
}

/*
 * The next record of partition p into s->rbuf, parsed (s->rvalues, valid
 * until the next read); false at its end.
 */
static bool
spill_read(TesseraSpill *s, TesseraGroups *g, int p)
{
	unsigned char head[4];
	uint32		len;
	size_t		n;
	char	   *rec;

	n = spill_take(s, p, (char *) head, 1);
	if (n == 0)
		return false;
	if (head[0] < 0x80)
		len = head[0];
	else if (spill_take(s, p, (char *) head + 1, 3) == 3)
		len = (uint32) (head[0] & 0x7F) << 24 | (uint32) head[1] << 16 |
			(uint32) head[2] << 8 | head[3];
	else
		len = 0;				/* truncated, below */
	if (len < (g->nkeys + 7) / 8 + VARHDRSZ_SHORT || len > MaxAllocSize)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("unexpected end of a TesseraAgg spill file")));
	rec = spill_buffer(s, &s->rbuf, &s->rcap, len);
	s->rlen = len;
	if (spill_take(s, p, rec, len) != len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("unexpected end of a TesseraAgg spill file")));
	spill_parse(s, g);
	return true;
}

/*
 * Partition p did not fit: the table's groups and the partition's rows
 * not read yet go into a sort by key, to be merged one group at a time.
 */
static void
spill_sort_rest(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs, int p)
{
	int			k = g->nkeys;
	AttrNumber *cols = palloc(sizeof(AttrNumber) * k);
	Oid		   *ops = palloc(sizeof(Oid) * k);
	Oid		   *colls = palloc(sizeof(Oid) * k);
	bool	   *nullsfirst = palloc0(sizeof(bool) * k);
	TupleTableSlot *slot;
	MemoryContext old;

	for (int j = 0; j < k; j++)
	{
		TAggKey    *key = &g->gkeys[j];

		cols[j] = j + 1;
		ops[j] = lookup_type_cache(TupleDescAttr(s->desc, j)->atttypid, TYPECACHE_LT_OPR)->lt_opr;
		colls[j] = key->collation;
		if (!OidIsValid(ops[j]))
			elog(ERROR, "TesseraAgg: no ordering for type %u", key->typid);
	}
	old = MemoryContextSwitchTo(s->longcxt);
	s->sort = tuplesort_begin_heap(s->desc, k, cols, ops, colls, nullsfirst,
								   work_mem, NULL, TUPLESORT_NONE);
	MemoryContextSwitchTo(old);
	slot = MakeSingleTupleTableSlot(s->desc, &TTSOpsVirtual);
	for (int group = 0; group < g->ngroups; group++)
	{
		old = MemoryContextSwitchTo(s->tmpcxt);
		spill_row(slot, g, group, specs);
		tuplesort_puttupleslot(s->sort, slot);
		MemoryContextSwitchTo(old);
		MemoryContextReset(s->tmpcxt);
	}
	while (spill_read(s, g, p))
	{
		CHECK_FOR_INTERRUPTS();
		ExecClearTuple(slot);
		memcpy(slot->tts_values, s->rvalues, sizeof(Datum) * (k + 1));
		memcpy(slot->tts_isnull, s->risnull, sizeof(bool) * (k + 1));
		ExecStoreVirtualTuple(slot);
		tuplesort_puttupleslot(s->sort, slot);
	}
	spill_close(s, p);
	ExecDropSingleTupleTableSlot(slot);
	tuplesort_performsort(s->sort);
	s->pending = tuplesort_gettupleslot(s->sort, true, false, s->next, NULL);
	s->sorted_parts++;
}

/*
 * Partition p did not fit: the table's groups and the partition's rows not
 * read yet go to new partitions one level down, by another hash of their
 * keys' values, to be merged back after the others.  The table is emptied.
 */
static void
spill_split(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs, int p)
{
	int			depth = s->depth[p] + 1;
	double		fit = Max(g->ngroups, 1);
	int			nsub = SPILL_MIN_PARTS;
	int			base;

	/* enough that each holds about half of what fitted, if p's rows were all groups */
	while (nsub < SPILL_MAX_PARTS && nsub * fit / 2 < (double) s->rows[p])
		nsub *= 2;
	base = spill_add_parts(s, nsub, depth);
	spill_table(s, g, specs, base, nsub, depth);
	while (spill_read(s, g, p))
	{
		int			q;

		CHECK_FOR_INTERRUPTS();
		q = base + spill_part_of(TesseraGroupsDatumsValueHash(g, s->rvalues, s->risnull, true),
								 depth, nsub);
		spill_write(s, q, s->rbuf, s->rlen);
	}
	spill_close(s, p);
	s->split_parts++;
	TesseraGroupsReset(g, 256);
}

/*
 * Read partition p into the emptied table, merging rows of equal keys;
 * sorted instead if it outgrows hash_mem.
 */
static void
spill_load(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs, int p)
{
	int64		keys[INDEX_MAX_KEYS];
	bool		nulls[INDEX_MAX_KEYS];
	uint64		n = 0;
	double		expect = (double) s->rows[p];
	double		fits = (double) get_hash_memory_limit() / 2 /
		(Max(g->group_bytes, sizeof(TAggState)) + (sizeof(int64) + 1) * g->nkeys);

	/* room for the groups a partition should hold: no doubling on the way */
	TesseraGroupsReset(g, (int) Max(Min(expect, fits), 256));
	TesseraGroupsPresize(g, Min(expect, fits));
	while (spill_read(s, g, p))
	{
		MemoryContext old = MemoryContextSwitchTo(s->tmpcxt);
		int			group;

		TesseraGroupsKeysOfDatums(g, s->rvalues, s->risnull, keys, nulls, true);
		group = TesseraGroupsLookup(g, keys, nulls);
		TesseraAggMergeRow(specs, g->nspecs, TesseraGroupState(g, group, 0),
						   s->rvalues[g->nkeys], g->cxt);
		MemoryContextSwitchTo(old);
		if ((++n & 1023) == 0)
		{
			MemoryContextReset(s->tmpcxt);
			CHECK_FOR_INTERRUPTS();
			if (g->ngroups > 1 &&
				MemoryContextMemAllocated(g->cxt, true) > get_hash_memory_limit())
			{
				if (s->depth[p] < SPILL_MAX_DEPTH)
					spill_split(s, g, specs, p);
				else
					spill_sort_rest(s, g, specs, p);
				return;
			}
		}
	}
	spill_close(s, p);
	s->loaded = true;
	s->next_group = 0;
}

/*
 * The next group of a sorted partition: its rows of equal keys merged into
 * group 0 of an emptied table.  False when none is left.
 */
static bool
spill_sorted_group(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs)
{
	int64		keys[INDEX_MAX_KEYS];
	bool		nulls[INDEX_MAX_KEYS];
	bool		first = true;

	if (!s->pending)
		return false;
	TesseraGroupsReset(g, 1);
	while (s->pending)
	{
		int			group;

		TesseraGroupsKeysOf(g, s->next, keys, nulls, true);
		if (!first)
		{
			bool		same = true;

			for (int j = 0; j < g->nkeys; j++)
				same &= g->keynull[j] == nulls[j] && g->keys[j] == keys[j];
			if (!same)
				break;			/* the next group's first row stays pending */
		}
		/* the table holds this group alone: no hashing */
		group = first ? TesseraGroupsAdd(g, keys, nulls) : 0;
		slot_getallattrs(s->next);
		TesseraAggMergeRow(specs, g->nspecs, TesseraGroupState(g, group, 0),
						   s->next->tts_values[g->nkeys], g->cxt);
		first = false;
		s->pending = tuplesort_gettupleslot(s->sort, true, false, s->next, NULL);
	}
	return true;
}

/*
 * The next spilled group: *group is its index in g (valid until the next
 * call).  False when none is left.
 */
bool
TesseraSpillNextGroup(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs, int *group)
{
	for (;;)
	{
		if (s->sort != NULL)
		{
			if (spill_sorted_group(s, g, specs))
			{
				*group = 0;
				return true;
			}
			tuplesort_end(s->sort);
			s->sort = NULL;
		}
		else if (s->loaded && s->next_group < g->ngroups)
		{
			*group = s->next_group++;
			return true;
		}
		s->loaded = false;
		if (s->cur + 1 >= s->npart)
			return false;
		s->cur++;
		spill_load(s, g, specs, s->cur);
	}
}

void
TesseraSpillEnd(TesseraSpill *s)
{
	if (s->sort != NULL)
	{
		tuplesort_end(s->sort);
		s->sort = NULL;
		s->pending = false;
	}
	for (int p = 0; p < s->npart; p++)
		spill_close(s, p);
	if (s->file != NULL)
		BufFileClose(s->file);
	s->file = NULL;
	s->file_blocks = 0;
	if (s->free_blocks != NULL)
		pfree(s->free_blocks);
	if (s->rblock != NULL)
		pfree(s->rblock);
	s->free_blocks = NULL;
	s->rblock = NULL;
	s->nfree = s->free_cap = 0;
	s->rpart = -1;
	if (s->wbuf != NULL)
		pfree(s->wbuf);
	if (s->rbuf != NULL)
		pfree(s->rbuf);
	s->wbuf = s->rbuf = NULL;
	s->wcap = s->rcap = 0;
	s->npart = 0;
	s->rows_since = 0;
	s->window = false;
	s->cur = -1;
	s->loaded = false;
}
