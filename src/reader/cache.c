/*-------------------------------------------------------------------------
 *
 * cache.c
 *	  Per-backend caches for single-row fetches: stripe catalog rows,
 *	  stripe directories and decompressed chunk payloads.
 *
 * NOTES
 *	  Index scans, TID scans and trigger fetches read one row at a time, at
 *	  random.  Going to the catalog, re-reading and checksumming a stripe
 *	  directory and decompressing chunks for every row would cost far more
 *	  than heap's buffer lookup, so these are cached for the life of the
 *	  backend.  Everything cached is immutable: a stripe's catalog row is
 *	  final once written (placeholders are never cached), its directory and
 *	  chunks never change, and storage ids are never reused.  Visibility is
 *	  decided per fetch from the cached xmin, as heap decides it from a
 *	  tuple header.
 *
 *	  Payloads are kept in least-recently-used order within
 *	  tessera.fetch_cache_size; stripes and directories are dropped
 *	  wholesale if their context grows past the same limit.
 *
 * IDENTIFICATION
 *	  src/reader/cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "lib/ilist.h"
#include "storage/procarray.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "tessera/cache.h"
#include "tessera/reader.h"
#include "tessera/rowstate.h"
#include "tessera/storage.h"
#include "tessera/tessera.h"

int			tessera_fetch_cache_size = 64; /* MB */

typedef struct StorageCache
{
	uint64		storage_id;		/* hash key */
	Oid			relid;			/* the table (relcache invalidation) */
	int			n;
	int			cap;
	TesseraCachedStripe *stripes;	/* sorted by first_rownum */
} StorageCache;

typedef struct ChunkKey
{
	uint64		storage_id;
	uint64		stripe_id;
	uint32		rg;
	uint32		att;
} ChunkKey;

typedef struct ChunkEntry
{
	ChunkKey	key;
	char	   *raw;
	TesseraValueIndex *index;	/* built on the first single-value read */
	Size		size;
	dlist_node	lru;
} ChunkEntry;

static MemoryContext cache_cxt = NULL;	/* stripes and directories */
static MemoryContext chunk_cxt = NULL;	/* payloads */
static HTAB *storages = NULL;
static HTAB *chunks = NULL;
static dlist_head chunk_lru = DLIST_STATIC_INIT(chunk_lru);
static Size chunk_bytes = 0;
static bool cache_stale = false;	/* reset at the next lookup */
static uint64 cache_generation = 0; /* resets so far */

static Size
cache_limit(void)
{
	return (Size) tessera_fetch_cache_size * 1024 * 1024;
}

static void
init_caches(void)
{
	HASHCTL		ctl;

	if (storages != NULL)
		return;
	if (cache_cxt == NULL)
	{
		cache_cxt = AllocSetContextCreate(TopMemoryContext, "tessera stripe cache",
										  ALLOCSET_DEFAULT_SIZES);
		chunk_cxt = AllocSetContextCreate(TopMemoryContext, "tessera chunk cache",
										  ALLOCSET_DEFAULT_SIZES);
	}
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(StorageCache);
	ctl.hcxt = cache_cxt;
	storages = hash_create("tessera stripe cache", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(ChunkKey);
	ctl.entrysize = sizeof(ChunkEntry);
	ctl.hcxt = chunk_cxt;
	chunks = hash_create("tessera chunk cache", 1024, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	dlist_init(&chunk_lru);
	chunk_bytes = 0;
}

/* Forget everything (memory limit, or storage gone). */
void
TesseraResetFetchCache(void)
{
	if (cache_cxt != NULL)
	{
		MemoryContextReset(cache_cxt);
		MemoryContextReset(chunk_cxt);
	}
	storages = NULL;
	chunks = NULL;
	dlist_init(&chunk_lru);
	chunk_bytes = 0;
	cache_stale = false;
	cache_generation++;
}

/*
 * TesseraFetchCacheGeneration
 *		Changes whenever the cache is reset: whoever keeps a pointer into it
 *		(a directory) across lookups checks this first.
 */
uint64
TesseraFetchCacheGeneration(void)
{
	return cache_generation;
}

static TesseraCachedStripe *
search(StorageCache *sc, uint64 rownum)
{
	int			lo = 0,
				hi = sc->n - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		TesseraCachedStripe *cs = &sc->stripes[mid];

		if (rownum < cs->s.first_rownum)
			hi = mid - 1;
		else if (rownum >= cs->s.first_rownum + cs->span)
			lo = mid + 1;
		else
			return cs;
	}
	return NULL;
}

/*
 * TesseraCacheStripe
 *		The complete stripe holding rownum, whatever its visibility, or the
 *		reservation of an aborted transaction that holds it (aborted set),
 *		or NULL if neither does (yet).  Aborted reservations are cached too:
 *		index entries left by a rolled-back insert or update are probed by
 *		every later unique check on their key.
 */
TesseraCachedStripe *
TesseraCacheStripe(Relation rel, uint64 storage_id, uint64 rownum)
{
	StorageCache *sc;
	TesseraCachedStripe *cs;
	TesseraStripe s;
	bool		found;
	bool		aborted = false;
	int			pos;

	if (storages != NULL &&
		(cache_stale || MemoryContextMemAllocated(cache_cxt, true) > cache_limit()))
		TesseraResetFetchCache();
	init_caches();
	sc = hash_search(storages, &storage_id, HASH_ENTER, &found);
	if (!found)
	{
		sc->relid = RelationGetRelid(rel);
		sc->n = 0;
		sc->cap = 16;
		sc->stripes = MemoryContextAlloc(cache_cxt, sizeof(TesseraCachedStripe) * sc->cap);
	}
	cs = search(sc, rownum);
	if (cs != NULL)
		return cs;

	/* one catalog probe; any snapshot: row numbers are unique */
	if (!TesseraFindReservation(storage_id, rownum, &s))
	{
		uint64		lo,
					hi;

		/* reserved by a transaction that aborted and left no trace */
		if (!TesseraFindHole(storage_id, rownum, &lo, &hi))
			return NULL;
		memset(&s, 0, sizeof(s));
		s.storage_id = storage_id;
		s.first_rownum = lo;
		s.reserved_rows = hi - lo;
		s.xmin = FrozenTransactionId;
		aborted = true;
	}
	else if (s.row_count == 0)
	{
		/* not written yet, or never will be */
		if (s.own || TransactionIdIsInProgress(s.xmin) || !TransactionIdDidAbort(s.xmin))
			return NULL;
		aborted = true;
	}
	Assert(!aborted || search(sc, rownum) == NULL);

	/*
	 * Compaction merges delta stripes into one that holds the same row
	 * numbers; entries the new one covers are dropped, so that the cached
	 * ranges never overlap (their rows are the same either way).
	 */
	{
		uint64		lo = s.first_rownum;
		uint64		hi = s.first_rownum + (aborted ? s.reserved_rows : s.row_count);
		int			keep = 0;

		for (int k = 0; k < sc->n; k++)
		{
			TesseraCachedStripe *e = &sc->stripes[k];

			if (e->s.first_rownum < hi && e->s.first_rownum + e->span > lo)
				continue;		/* its delta bytes stay in cache_cxt until reset */
			sc->stripes[keep++] = *e;
		}
		sc->n = keep;
	}
	if (sc->n == sc->cap)
	{
		sc->cap *= 2;
		sc->stripes = repalloc(sc->stripes, sizeof(TesseraCachedStripe) * sc->cap);
	}
	pos = 0;
	while (pos < sc->n && sc->stripes[pos].s.first_rownum < s.first_rownum)
		pos++;
	memmove(&sc->stripes[pos + 1], &sc->stripes[pos], sizeof(TesseraCachedStripe) * (sc->n - pos));
	memset(&sc->stripes[pos], 0, sizeof(TesseraCachedStripe));
	sc->stripes[pos].s = s;
	if ((s.flags & TESSERA_STRIPE_DELTA) && !aborted)
	{
		if (!s.own && !TransactionIdIsInProgress(s.xmin) && TransactionIdDidAbort(s.xmin))
		{
			/* rows of a rolled-back small write: dead, and its bytes may be gone */
			sc->stripes[pos].aborted = true;
		}
		else
		{
			/* a delta stripe's bytes, kept with it (they never change) */
			MemoryContext old = MemoryContextSwitchTo(cache_cxt);

			TesseraFetchDeltaBytes(NULL, &sc->stripes[pos].s);
			MemoryContextSwitchTo(old);
		}
	}
	sc->stripes[pos].aborted = aborted;
	sc->stripes[pos].span = aborted ? s.reserved_rows : s.row_count;
	sc->n++;
	return &sc->stripes[pos];
}

/* Did the transaction that wrote the stripe abort? (Cached once known.) */
bool
TesseraCachedStripeAborted(TesseraCachedStripe *cs)
{
	if (cs->aborted || cs->committed || cs->s.own ||
		TransactionIdIsCurrentTransactionId(cs->s.xmin))
		return cs->aborted;
	/* the cheap clog test first: most stripes committed long ago */
	if (TransactionIdDidCommit(cs->s.xmin))
		cs->committed = true;
	else if (!TransactionIdIsInProgress(cs->s.xmin) && TransactionIdDidAbort(cs->s.xmin))
		cs->aborted = true;
	return cs->aborted;
}

/*
 * TesseraCacheStripeLookup
 *		Like TesseraCacheStripe, but only what the cache already holds: no
 *		catalog probe.
 */
TesseraCachedStripe *
TesseraCacheStripeLookup(uint64 storage_id, uint64 rownum)
{
	StorageCache *sc;

	if (cache_stale)
		TesseraResetFetchCache();
	if (storages == NULL)
		return NULL;
	sc = hash_search(storages, &storage_id, HASH_FIND, NULL);
	return sc ? search(sc, rownum) : NULL;
}

/*
 * TesseraCacheStripeVisible
 *		Does snapshot see the stripe (its insertion)?  *own tells whether the
 *		current transaction wrote it (the caller then checks command ids).
 *		A dirty snapshot gets a running inserter in snapshot->xmin.
 */
bool
TesseraCacheStripeVisible(TesseraCachedStripe *cs, Snapshot snapshot, bool *own)
{
	TransactionId xmin = cs->s.xmin;

	*own = TransactionIdIsCurrentTransactionId(xmin);
	cs->s.own = *own;
	if (*own || snapshot->snapshot_type == SNAPSHOT_ANY)
		return true;

	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_MVCC:
			if (XidInMVCCSnapshot(xmin, snapshot))
				return false;
			break;
		case SNAPSHOT_DIRTY:
			if (!cs->committed && TransactionIdIsInProgress(xmin))
			{
				snapshot->xmin = xmin;
				return true;
			}
			break;
		case SNAPSHOT_NON_VACUUMABLE:
			if (!cs->committed && TransactionIdIsInProgress(xmin))
				return true;
			break;
		default:
			if (!cs->committed && TransactionIdIsInProgress(xmin))
				return false;
			break;
	}
	if (cs->committed)
		return true;
	if (TransactionIdDidCommit(xmin))
	{
		cs->committed = true;
		return true;
	}
	return false;
}

/* row groups without folded rows point here */
static bool no_folded_rows = false;

/*
 * TesseraCacheRowFolded
 *		Is row `row` of row group rg folded (gone for every snapshot)?  The
 *		row group's list is decoded once and kept with the stripe.
 */
bool
TesseraCacheRowFolded(Relation rel, TesseraCachedStripe *cs, int rg, int row)
{
	TesseraStripeDir *dir = TesseraCacheDir(rel, cs);

	if (dir->dead == NULL)
		return false;
	if (cs->folded == NULL)
		cs->folded = MemoryContextAllocZero(cache_cxt, sizeof(bool *) * dir->hdr.n_row_groups);
	if (cs->folded[rg] == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(cache_cxt);
		bool	   *dead = palloc0(sizeof(bool) * dir->rgs[rg].row_count);

		if (TesseraDecodeDeadRows(rel, &cs->s, dir, rg, dead) == 0)
		{
			pfree(dead);
			dead = &no_folded_rows;
		}
		MemoryContextSwitchTo(old);
		cs->folded[rg] = dead;
	}
	return cs->folded[rg] != &no_folded_rows && cs->folded[rg][row];
}

/*
 * TesseraForgetRelationCaches
 *		Relcache invalidation callback: VACUUM moved the table's stripes or
 *		cleared row states it folded (under AccessExclusiveLock, so every
 *		backend takes this before it touches the table again); forget what
 *		this backend remembers of the table's layout.
 */
void
TesseraForgetRelationCaches(Oid relid)
{
	HASH_SEQ_STATUS seq;
	StorageCache *sc;
	bool		any = false;

	TesseraForgetRowStateCache();
	if (storages == NULL)
		return;
	hash_seq_init(&seq, storages);
	while ((sc = hash_seq_search(&seq)) != NULL)
		if (!OidIsValid(relid) || sc->relid == relid)
			any = true;

	/*
	 * Stripes, directories and payloads go together (rare, and cheap), at
	 * the next lookup: a caller may be using an entry right now.
	 */
	if (any)
		cache_stale = true;
}

TesseraStripeDir *
TesseraCacheDir(Relation rel, TesseraCachedStripe *cs)
{
	if (cs->dir == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(cache_cxt);

		cs->dir = TesseraLoadDir(rel, &cs->s, TesseraPhysicalBlocks(rel));
		MemoryContextSwitchTo(old);
	}
	return cs->dir;
}

/*
 * TesseraCacheChunkRaw
 *		The decompressed payload of chunk att of row group rg, read,
 *		checksummed and decompressed on a miss.  Valid until the next call.
 */
const char *
TesseraCacheChunkRaw(Relation rel, TesseraCachedStripe *cs, int rg, int att,
					 TesseraCorruptFn corrupt, void *arg, TesseraValueIndex ***index,
					 MemoryContext *index_cxt)
{
	TesseraStripeDir *dir = TesseraCacheDir(rel, cs);
	TesseraChunkDisk *cd = &dir->chunks[rg * dir->hdr.natts + att];
	ChunkKey	key;
	ChunkEntry *e;
	bool		found;

	init_caches();
	memset(&key, 0, sizeof(key));
	key.storage_id = cs->s.storage_id;
	key.stripe_id = cs->s.stripe_id;
	key.rg = rg;
	key.att = att;
	e = hash_search(chunks, &key, HASH_ENTER, &found);
	*index_cxt = chunk_cxt;
	if (found)
	{
		dlist_move_head(&chunk_lru, &e->lru);
		*index = &e->index;
		return e->raw;
	}
	e->raw = NULL;
	e->index = NULL;
	e->size = 0;
	dlist_push_head(&chunk_lru, &e->lru);

	PG_TRY();
	{
		MemoryContext old = MemoryContextSwitchTo(chunk_cxt);
		char	   *stored = MemoryContextAllocHuge(chunk_cxt,
													(Size) cd->stored_bytes + TESSERA_DECODE_PADDING);
		const char *raw;

		if (cd->stored_bytes > 0 &&
			!TesseraReadStripeBytes(rel, &cs->s, cd->offset, cd->stored_bytes, stored, NULL))
			corrupt(arg, "chunk pages are invalid");
		memset(stored + cd->stored_bytes, 0, TESSERA_DECODE_PADDING);
		if (TesseraChunkChecksum(dir->hdr.format_version, stored, cd->stored_bytes) != cd->crc)
			corrupt(arg, "chunk checksum mismatch");
		raw = TesseraChunkRaw(cd, stored, corrupt, arg);
		if (raw != stored)
			pfree(stored);
		e->raw = (char *) raw;
		e->size = (Size) cd->raw_bytes + TESSERA_DECODE_PADDING;
		MemoryContextSwitchTo(old);
	}
	PG_CATCH();
	{
		dlist_delete(&e->lru);
		hash_search(chunks, &key, HASH_REMOVE, NULL);
		PG_RE_THROW();
	}
	PG_END_TRY();

	/* stay within budget, never evicting what we just made */
	chunk_bytes += e->size;
	while (chunk_bytes > cache_limit() && !dlist_is_empty(&chunk_lru))
	{
		ChunkEntry *victim = dlist_tail_element(ChunkEntry, lru, &chunk_lru);

		if (victim == e)
			break;
		dlist_delete(&victim->lru);
		chunk_bytes -= victim->size;
		if (victim->raw)
			pfree(victim->raw);
		TesseraFreeValueIndex(victim->index);
		hash_search(chunks, &victim->key, HASH_REMOVE, NULL);
	}
	*index = &e->index;
	return e->raw;
}
