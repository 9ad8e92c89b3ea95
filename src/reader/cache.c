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
 *	  wholesale if their context grows past the same limit.  With the
 *	  shared cache on (shared_cache.c), compressed frames and small
 *	  compressed unframed payloads are looked up there before they are
 *	  read and decompressed, and put there after; such frames are not also
 *	  kept here.
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
#include "tessera/shared_cache.h"
#include "tessera/storage.h"
#include "tessera/tessera.h"

int			tessera_fetch_cache_size = 64; /* MB */

typedef struct StorageCache
{
	uint64		storage_id;		/* hash key */
	Oid			relid;			/* the table (relcache invalidation) */
	int			n;
	int			cap;
	int			hint;			/* the entry search found last */
	TesseraCachedStripe *stripes;	/* sorted by first_rownum */
} StorageCache;

/*
 * A cached chunk.  Unframed: its whole payload.  Framed: its frame table and
 * the frames read so far, decompressed, one allocation each; a read copies
 * the frames it needs into a scratch payload (the view).
 */
typedef struct ChunkEntry
{
	struct ChunkEntry **home;	/* its slot in the stripe's array of entries */
	TesseraChunkView view;
	TesseraValueIndex *index;	/* unframed: built on the first single-value read */
	Size		size;			/* bytes counted against the budget */
	dlist_node	lru;
	bool		used;			/* used since the eviction sweep last passed */
	char	   *table;			/* framed: the frame table (view.ft points into it) */
	struct FrameSlot **frames;	/* framed: frame k, or NULL */
	/* where a framed chunk's frames are read from, during one fetch */
	Relation	rel;
	const TesseraStripe *stripe;
	Buffer	   *recent;			/* the stripe's recent buffers */
	uint64		chunk_offset;
	TesseraCorruptFn corrupt;
	void	   *corrupt_arg;
} ChunkEntry;

/*
 * A frame of a framed chunk, decompressed.  Frames are evicted on their own
 * (frame_lru), before any entry: a point read wants one frame of a chunk, and
 * keeping the chunk's small table saves reading it again for the next one.
 * The bytes are an allocation of their own: a frame is 1 or 4 KB, and with
 * this header in front it took the allocator's next size up, twice that.
 */
typedef struct FrameSlot
{
	dlist_node	lru;
	ChunkEntry *owner;
	uint32		k;
	uint32		len;
	bool		used;			/* used since the eviction sweep last passed */
	char	   *data;
} FrameSlot;

static MemoryContext cache_cxt = NULL;	/* stripes and directories */
static MemoryContext chunk_cxt = NULL;	/* payloads */
static HTAB *storages = NULL;

/*
 * The storage looked up last: a nested loop's probes and a lazily decoded
 * row's columns look up the same one again and again (a dynahash probe
 * each was ~5% of an index nested loop).  Cleared with the cache.
 */
static StorageCache *last_storage = NULL;
static dlist_head chunk_lru = DLIST_STATIC_INIT(chunk_lru);
static dlist_head frame_lru = DLIST_STATIC_INIT(frame_lru);
static Size chunk_bytes = 0;

/* the payload framed chunks' views are read through, one chunk at a time */
static char *scratch = NULL;
static Size scratch_size = 0;
static bool *scratch_have = NULL;
static Size scratch_frames = 0;
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
	dlist_init(&chunk_lru);
	dlist_init(&frame_lru);
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
	last_storage = NULL;
	dlist_init(&chunk_lru);
	dlist_init(&frame_lru);
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

	/* probes come in runs within one stripe: the last one found first */
	if (sc->hint < sc->n)
	{
		TesseraCachedStripe *cs = &sc->stripes[sc->hint];

		if (rownum >= cs->s.first_rownum && rownum < cs->s.first_rownum + cs->span)
			return cs;
	}
	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		TesseraCachedStripe *cs = &sc->stripes[mid];

		if (rownum < cs->s.first_rownum)
			hi = mid - 1;
		else if (rownum >= cs->s.first_rownum + cs->span)
			lo = mid + 1;
		else
		{
			sc->hint = mid;
			return cs;
		}
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
	if (last_storage != NULL && last_storage->storage_id == storage_id)
		sc = last_storage;
	else
	{
		sc = hash_search(storages, &storage_id, HASH_ENTER, &found);
		if (!found)
		{
			sc->relid = RelationGetRelid(rel);
			sc->n = 0;
			sc->cap = 16;
			sc->hint = 0;
			sc->stripes = MemoryContextAlloc(cache_cxt, sizeof(TesseraCachedStripe) * sc->cap);
		}
		last_storage = sc;
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

		/* (a version 5 directory's columns are read as lookups need them) */
		cs->dir = TesseraLoadDirHead(rel, &cs->s, TesseraPhysicalBlocks(rel));
		MemoryContextSwitchTo(old);
	}
	return cs->dir;
}

static void
free_frame(FrameSlot *slot)
{
	dlist_delete(&slot->lru);
	slot->owner->frames[slot->k] = NULL;
	slot->owner->size -= slot->len;
	chunk_bytes -= slot->len;
	pfree(slot->data);
	pfree(slot);
}

/* Free what an entry holds (not the entry; its frames leave the budget). */
static void
free_entry(ChunkEntry *e)
{
	if (e->frames)
	{
		for (uint32 k = 0; k < e->view.ft.hdr.nframes; k++)
			if (e->frames[k])
				free_frame(e->frames[k]);
		pfree(e->frames);
	}
	else if (e->view.raw && !e->view.framed)
		pfree(e->view.raw);
	if (e->table)
		pfree(e->table);
	TesseraFreeValueIndex(e->index);
}

/*
 * Drop what was used least recently until the budget holds: frames first,
 * then entries (payloads, frame tables), never keep.  A hit marks what it
 * used rather than moving it to the head (its list neighbours are cold
 * memory: a point read's lookups went to cache misses); the sweep moves a
 * marked one to the head, unmarked, and drops the first one it finds
 * unmarked.
 */
static void
evict(ChunkEntry *keep)
{
	while (chunk_bytes > cache_limit() && !dlist_is_empty(&frame_lru))
	{
		FrameSlot  *slot = dlist_tail_element(FrameSlot, lru, &frame_lru);

		if (slot->used)
		{
			slot->used = false;
			dlist_move_head(&frame_lru, &slot->lru);
			continue;
		}
		free_frame(slot);
	}
	while (chunk_bytes > cache_limit() && !dlist_is_empty(&chunk_lru))
	{
		ChunkEntry *victim = dlist_tail_element(ChunkEntry, lru, &chunk_lru);

		if (victim == keep)
			break;
		if (victim->used)
		{
			victim->used = false;
			dlist_move_head(&chunk_lru, &victim->lru);
			continue;
		}
		dlist_delete(&victim->lru);
		free_entry(victim);
		chunk_bytes -= victim->size;
		*victim->home = NULL;
		pfree(victim);
	}
}

/*
 * A framed chunk's view asks for bytes [off, off + count) of frame k: from
 * this backend's frames or the shared cache (just those bytes), else read
 * from the stripe, checked and decompressed whole, and kept.  True if the
 * whole frame was put in place.
 */
static bool
load_frame(void *arg, uint32 k, char *frame, uint32 off, uint32 count)
{
	ChunkEntry *e = (ChunkEntry *) arg;
	const TesseraFrameTable *ft = &e->view.ft;
	uint32		raw_len = TesseraFrameRawBytes(e->view.chunk, ft, k);
	FrameSlot  *slot = e->frames[k];
	uint32		from;
	uint32		len;
	char	   *stored = NULL;
	const char *src;
	char	   *dst;
	Buffer		buf;
	bool		shared;
	bool		keep;
	TesseraSharedKey key;

	if (slot != NULL)
	{
		slot->used = true;
		memcpy(frame + off, slot->data + off, count);
		return false;
	}
	from = k == 0 ? 0 : ft->ends[k - 1];
	len = ft->ends[k] - from;

	/* a compressed frame: the shared cache's, if it has it */
	shared = len < raw_len && TesseraSharedCacheEnabled();
	if (shared)
	{
		TesseraSharedKeyInit(&key, e->stripe->storage_id, e->stripe->stripe_id,
							 e->chunk_offset, k);
		if (TesseraSharedCacheGetRange(&key, ft->sums[k], raw_len, off, count, frame + off))
			return false;
	}

	/*
	 * A frame kept here is decoded into its slot, and only the asked-for
	 * bytes copied to the view's payload: the payload is as large as the
	 * chunk (330 KB of md5 text), and a whole frame copied to a cold place
	 * in it was a fifth of the frame's cost.  A frame stored raw is kept
	 * only while the budget has room for it, or if it is the chunk's first
	 * (section headers: every read of the chunk wants them).  Reading one
	 * again costs a pinned page and a checksum; keeping one, once random
	 * reads over a table larger than the budget churn it, cost a copy and
	 * an eviction of a cold frame (0.6x heap's rate of point lookups on
	 * random values).  Compressed frames are kept: decompressing one again
	 * costs more than the churn.
	 */
	keep = !shared && !(len == raw_len && k != 0 && chunk_bytes + raw_len > cache_limit());

	/* decoded from the buffer where the frame lies on one page */
	src = TesseraPinStripeBytes(e->rel, e->stripe, e->chunk_offset + ft->table_bytes + from,
								len, &buf, e->recent);
	if (src == NULL)
	{
		stored = palloc(len);
		if (!TesseraCopyStripeBytes(e->rel, e->stripe, e->chunk_offset + ft->table_bytes + from,
									len, stored, e->recent))
			e->corrupt(e->corrupt_arg, "chunk pages are invalid");
		src = stored;
	}
	if (keep)
	{
		slot = MemoryContextAlloc(chunk_cxt, sizeof(FrameSlot));
		slot->data = MemoryContextAlloc(chunk_cxt, raw_len);
		slot->owner = e;
		slot->k = k;
		slot->len = raw_len;
		slot->used = false;
		dst = slot->data;
	}
	else
		dst = frame;
	PG_TRY();
	{
		TesseraFrameDecode(e->view.chunk, ft, k, src, len, dst, e->corrupt, e->corrupt_arg);
	}
	PG_CATCH();
	{
		if (keep)
		{
			pfree(slot->data);
			pfree(slot);
		}
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (BufferIsValid(buf))
		ReleaseBuffer(buf);
	if (stored)
		pfree(stored);
	if (shared)
	{
		TesseraSharedCachePut(&key, ft->sums[k], raw_len, frame, true);
		return true;
	}
	if (!keep)
		return true;
	memcpy(frame + off, slot->data + off, count);
	e->frames[k] = slot;
	e->size += raw_len;
	chunk_bytes += raw_len;
	dlist_push_head(&frame_lru, &slot->lru);
	evict(e);
	return false;
}

/*
 * Fill entry e for chunk cd: an unframed chunk read, checksummed and
 * decompressed whole; a framed one's table read and checksummed, its frames
 * left for load_frame.
 */
static void
load_entry(ChunkEntry *e, Relation rel, TesseraCachedStripe *cs, TesseraStripeDir *dir,
		   TesseraChunkDisk *cd, TesseraCorruptFn corrupt, void *arg)
{
	MemoryContext old = MemoryContextSwitchTo(chunk_cxt);

	if (cd->flags & TESSERA_CHUNK_FRAMED)
	{
		TesseraFrameTable ft;

		e->table = TesseraReadFrameTable(rel, &cs->s, cd, dir->hdr.format_version, &ft,
										 corrupt, arg);
		e->frames = palloc0(sizeof(FrameSlot *) * ft.hdr.nframes);
		e->view.framed = true;
		e->view.ft = ft;
		e->size = ft.table_bytes + sizeof(FrameSlot *) * ft.hdr.nframes;
	}
	else
	{
		char	   *stored;
		const char *raw;
		TesseraSharedKey key;
		bool		shared = cd->codec != TESSERA_CODEC_NONE &&
			cd->raw_bytes <= TESSERA_SHARED_MAX_BYTES && TesseraSharedCacheEnabled();

		/* a small compressed chunk: the shared cache's payload, if it has it */
		if (shared)
		{
			char	   *payload = MemoryContextAllocHuge(chunk_cxt, (Size) cd->raw_bytes +
														 TESSERA_DECODE_PADDING);

			TesseraSharedKeyInit(&key, cs->s.storage_id, cs->s.stripe_id, cd->offset,
								 TESSERA_SHARED_WHOLE_CHUNK);
			if (TesseraSharedCacheGet(&key, cd->crc, cd->raw_bytes, payload))
			{
				memset(payload + cd->raw_bytes, 0, TESSERA_DECODE_PADDING);
				TesseraViewInitRaw(&e->view, cd, payload);
				e->size = (Size) cd->raw_bytes + TESSERA_DECODE_PADDING;
				MemoryContextSwitchTo(old);
				return;
			}
			pfree(payload);
		}
		stored = MemoryContextAllocHuge(chunk_cxt, (Size) cd->stored_bytes + TESSERA_DECODE_PADDING);
		if (cd->stored_bytes > 0 &&
			!TesseraReadStripeBytes(rel, &cs->s, cd->offset, cd->stored_bytes, stored, NULL))
			corrupt(arg, "chunk pages are invalid");
		memset(stored + cd->stored_bytes, 0, TESSERA_DECODE_PADDING);
		if (TesseraChunkStoredChecksum(dir->hdr.format_version, cd, stored) != cd->crc)
			corrupt(arg, "chunk checksum mismatch");
		raw = TesseraChunkRaw(cd, stored, corrupt, arg);
		if (raw != stored)
			pfree(stored);
		if (shared && raw != stored)
			TesseraSharedCachePut(&key, cd->crc, cd->raw_bytes, raw, true);
		TesseraViewInitRaw(&e->view, cd, raw);
		e->size = (Size) cd->raw_bytes + TESSERA_DECODE_PADDING;
	}
	MemoryContextSwitchTo(old);
}

/* Point the scratch payload at framed entry e, with none of its frames in it. */
static void
bind_scratch(ChunkEntry *e, TesseraChunkDisk *cd)
{
	Size		need = (Size) cd->raw_bytes + TESSERA_DECODE_PADDING;
	uint32		nframes = e->view.ft.hdr.nframes;
	TesseraFrameTable ft;

	if (scratch_size < need)
	{
		if (scratch)
			pfree(scratch);
		scratch = MemoryContextAllocHuge(TopMemoryContext, need);
		scratch_size = need;
	}
	if (scratch_frames < nframes)
	{
		if (scratch_have)
			pfree(scratch_have);
		scratch_have = MemoryContextAlloc(TopMemoryContext, nframes);
		scratch_frames = nframes;
	}
	ft = e->view.ft;
	memset(scratch_have, 0, nframes);
	TesseraViewInit(&e->view, cd, &ft, scratch, scratch_have, load_frame, e);
}

/*
 * TesseraCacheChunkView
 *		The payload of chunk att of row group rg, as a view: unframed chunks
 *		read, checksummed and decompressed whole on a miss (with the index
 *		single-value reads build, *index), framed ones read frame by frame
 *		as values are asked for, through a scratch payload shared by all
 *		framed chunks.  Valid until the next call.
 */
TesseraChunkView *
TesseraCacheChunkView(Relation rel, TesseraCachedStripe *cs, int rg, int att,
					  TesseraCorruptFn corrupt, void *arg, TesseraValueIndex ***index,
					  MemoryContext *index_cxt)
{
	TesseraStripeDir *dir = TesseraCacheDir(rel, cs);
	TesseraChunkDisk *cd;
	ChunkEntry **home;
	ChunkEntry *e;

	TesseraDirNeedColumn(rel, &cs->s, dir, att);
	cd = TesseraDirChunk(dir, rg, att);

	init_caches();
	*index_cxt = chunk_cxt;

	/*
	 * Entries hang off the stripe (an array per row group and column, in
	 * the stripes' context: both go at a reset), so a lookup is one step
	 * from the directory the caller just used, not a hash probe into cold
	 * memory.
	 */
	if (cs->chunks == NULL)
		cs->chunks = MemoryContextAllocZero(cache_cxt, sizeof(ChunkEntry *) *
											dir->hdr.n_row_groups * dir->hdr.natts);
	home = (ChunkEntry **) &cs->chunks[rg * dir->hdr.natts + att];
	e = *home;
	if (e != NULL)
		e->used = true;
	else
	{
		e = MemoryContextAllocZero(chunk_cxt, sizeof(ChunkEntry));
		e->home = home;
		dlist_push_head(&chunk_lru, &e->lru);
		PG_TRY();
		{
			load_entry(e, rel, cs, dir, cd, corrupt, arg);
		}
		PG_CATCH();
		{
			dlist_delete(&e->lru);
			free_entry(e);
			pfree(e);
			PG_RE_THROW();
		}
		PG_END_TRY();
		*home = e;

		/* stay within budget, never evicting what we just made */
		chunk_bytes += e->size;
		evict(e);
	}
	/* the directory entry may have been reloaded since: point at today's */
	e->view.chunk = cd;
	e->rel = rel;
	e->stripe = &cs->s;
	if (cs->recent == NULL && !(cs->s.flags & TESSERA_STRIPE_DELTA) && cs->s.nblocks > 0)
		cs->recent = MemoryContextAllocZero(cache_cxt, sizeof(Buffer) * cs->s.nblocks);
	e->recent = cs->recent;
	e->chunk_offset = cd->offset;
	e->corrupt = corrupt;
	e->corrupt_arg = arg;
	if (e->view.framed)
		bind_scratch(e, cd);
	*index = &e->index;
	return &e->view;
}
