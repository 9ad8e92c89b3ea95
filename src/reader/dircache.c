/*-------------------------------------------------------------------------
 *
 * dircache.c
 *	  Per-backend cache of the stripe directories scans read.
 *
 * NOTES
 *	  Every scan reads the directory of each stripe it visits: its row
 *	  groups and the chunk offsets and summaries of the columns it reads
 *	  (of every column before directory version 5), checked against
 *	  their checksum.  For ClickBench's 105 columns that is 95 KB a stripe,
 *	  6.4 MB over the 67 stripes of 10M rows, read from shared buffers,
 *	  copied into fresh memory (a page fault per 4 KB) and checksummed by
 *	  every query (`SELECT count(*)` took 4.3 ms, all of it there).  A
 *	  directory never changes once its stripe is complete -- row numbers
 *	  and storage ids are never reused, and a stripe rewritten is a new
 *	  stripe -- so a verified copy is kept here, keyed by what the catalog
 *	  row says of it, and the next scan uses it as it is.  Not cached: delta
 *	  stripes (their bytes live in the catalog, small), and the current
 *	  transaction's own stripes.
 *
 *	  The copies are held within half of tessera.fetch_cache_size, least
 *	  recently used first out; a copy used by the current transaction is
 *	  never dropped (a scan holds pointers into it until it ends), so the
 *	  cache may exceed that while one transaction reads more.  A copy
 *	  holds the head of a version 5 directory and the columns read so far;
 *	  its size is counted again when it is next used.
 *
 * IDENTIFICATION
 *	  src/reader/dircache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/ilist.h"
#include "storage/proc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "tessera/cache.h"
#include "tessera/catalog.h"
#include "tessera/compat.h"
#include "tessera/reader.h"

/* what the catalog row says of a directory: equal keys, the same bytes */
typedef struct DirKey
{
	uint64		storage_id;
	uint64		first_rownum;
	uint64		stripe_id;
	uint64		row_count;
	uint64		dir_offset;
	uint32		dir_bytes;
	uint32		flags;
} DirKey;

typedef struct DirEntry
{
	DirKey		key;			/* hash key */
	TesseraStripeDir *dir;
	MemoryContext cxt;			/* the copy's own memory */
	Size		size;
	LocalTransactionId lxid;	/* the transaction that used it last */
	dlist_node	lru;
} DirEntry;

static HTAB *dir_hash = NULL;
static MemoryContext dir_root = NULL;
static dlist_head dir_lru = DLIST_STATIC_INIT(dir_lru);
static Size dir_total = 0;

/* Drop copies no scan of this transaction holds until `incoming` more fit. */
static void
dir_evict(Size incoming)
{
	Size		limit = (Size) tessera_fetch_cache_size * 1024 * 1024 / 2;
	dlist_node *cur = dlist_is_empty(&dir_lru) ? NULL : dlist_tail_node(&dir_lru);

	while (cur != NULL && dir_total + incoming > limit)
	{
		dlist_node *prev = dlist_has_prev(&dir_lru, cur) ? dlist_prev_node(&dir_lru, cur) : NULL;
		DirEntry   *e = dlist_container(DirEntry, lru, cur);

		if (e->lxid != TesseraMyLxid())
		{
			dlist_delete(&e->lru);
			dir_total -= e->size;
			MemoryContextDelete(e->cxt);
			hash_search(dir_hash, &e->key, HASH_REMOVE, NULL);
		}
		cur = prev;
	}
}

/*
 * TesseraCachedDir
 *		Stripe s's directory, checked (TesseraLoadDir): a copy kept from an
 *		earlier read if there is one.  Valid until the end of the current
 *		transaction; the caller must not change or free it.
 */
TesseraStripeDir *
TesseraCachedDir(Relation rel, const TesseraStripe *s, BlockNumber rel_nblocks)
{
	DirKey		key;
	DirEntry   *e;
	TesseraStripeDir *dir;
	MemoryContext cxt;
	MemoryContext old;
	bool		found;

	if ((s->flags & TESSERA_STRIPE_DELTA) || s->own || s->row_count == 0)
		return TesseraLoadDir(rel, s, rel_nblocks);
	if (dir_hash == NULL)
	{
		HASHCTL		ctl;

		dir_root = AllocSetContextCreate(TopMemoryContext, "tessera directory cache",
										 ALLOCSET_SMALL_SIZES);
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(DirKey);
		ctl.entrysize = sizeof(DirEntry);
		ctl.hcxt = dir_root;
		dir_hash = hash_create("tessera directory cache", 256, &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		dlist_init(&dir_lru);
		dir_total = 0;
	}
	memset(&key, 0, sizeof(key));
	key.storage_id = s->storage_id;
	key.first_rownum = s->first_rownum;
	key.stripe_id = s->stripe_id;
	key.row_count = s->row_count;
	key.dir_offset = s->dir_offset;
	key.dir_bytes = s->dir_bytes;
	key.flags = s->flags;
	e = hash_search(dir_hash, &key, HASH_FIND, NULL);
	if (e != NULL)
	{
		Size		size = MemoryContextMemAllocated(e->cxt, true);

		/* (columns read since it was counted) */
		dir_total += size - e->size;
		e->size = size;
		dlist_move_head(&dir_lru, &e->lru);
		e->lxid = TesseraMyLxid();
		return e->dir;
	}

	/* read and checked into memory of its own, dropped if that fails */
	cxt = AllocSetContextCreate(dir_root, "tessera directory", ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		dir = TesseraLoadDirHead(rel, s, rel_nblocks);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);

	dir_evict(s->dir_bytes);
	e = hash_search(dir_hash, &key, HASH_ENTER, &found);
	Assert(!found);
	e->dir = dir;
	e->cxt = cxt;
	e->size = MemoryContextMemAllocated(cxt, true);
	e->lxid = TesseraMyLxid();
	dlist_push_head(&dir_lru, &e->lru);
	dir_total += e->size;
	return dir;
}
