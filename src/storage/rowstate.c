/*-------------------------------------------------------------------------
 *
 * rowstate.c
 *	  State pages: the xmax of rows that were deleted, updated or locked.
 *
 * NOTES
 *	  Stripes are immutable, so what a heap tuple header keeps in xmax lives
 *	  here: one 16-byte TesseraRowState per row, in state pages of
 *	  TESSERA_STATE_ROWS consecutive row numbers.  A state page is created
 *	  the first time any of its rows changes; a table that is only ever
 *	  inserted into has none, and scans of it never look.
 *
 *	  State pages are found through a three-level map of map pages (root
 *	  block in the metapage).  Map entries go from 0 to a block number once
 *	  and change again only under AccessExclusiveLock (VACUUM giving empty
 *	  pages back, see below), so lookups are cached per backend.  New map and
 *	  state pages are only created, and map entries only set, while holding
 *	  the relation extension lock; new pages are WAL-logged as full images.
 *
 *	  An entry changes under an exclusive lock on its state page, inside a
 *	  critical section, and is WAL-logged as a generic WAL record holding
 *	  just the changed bytes (the record format generic_xlog.c defines and
 *	  replays; building it directly avoids copying and diffing the whole
 *	  page for a 16-byte change).  Readers copy entries under a share lock.
 *
 * IDENTIFICATION
 *	  src/storage/rowstate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "lib/stringinfo.h"
#include "storage/sinval.h"
#include "storage/standby.h"
#include "catalog/pg_control.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "tessera/compat.h"
#include "tessera/rowstate.h"
#include "tessera/storage.h"
#include "tessera/tessera.h"

#define MAP_LEVELS 3
#define STATE_CACHE_SIZE 256

typedef struct StateCacheEntry
{
	RelFileLocator node;
	uint64		index;			/* state page index, rownum / STATE_ROWS */
	BlockNumber blkno;
} StateCacheEntry;

static StateCacheEntry state_cache[STATE_CACHE_SIZE];

void
TesseraForgetRowStateCache(void)
{
	memset(state_cache, 0, sizeof(state_cache));
}

static inline StateCacheEntry *
cache_slot(const RelFileLocator *node, uint64 index)
{
	uint32		h = (uint32) (index * 2654435761U) ^ TesseraLocatorRel(*node);

	return &state_cache[h % STATE_CACHE_SIZE];
}

/* The slot of map level `level` (2 = root) on the path to state page index. */
static inline int
map_slot(uint64 index, int level)
{
	for (int l = 0; l < level; l++)
		index /= TESSERA_MAP_FANOUT;
	return (int) (index % TESSERA_MAP_FANOUT);
}

static void
corrupt_page(Relation rel, BlockNumber blkno, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupt data in tessera table \"%s\", block %u",
					RelationGetRelationName(rel), blkno),
			 errdetail("Expected a %s page.", what)));
}

static void
check_page(Relation rel, Buffer buf, uint16 kind, uint16 level)
{
	Page		page = BufferGetPage(buf);
	TesseraPageOpaqueData *opaque;

	if (PageIsNew(page) ||
		((PageHeader) page)->pd_special != BLCKSZ - MAXALIGN(sizeof(TesseraPageOpaqueData)))
		corrupt_page(rel, BufferGetBlockNumber(buf), kind == TESSERA_PAGE_MAP ? "map" : "row state");
	opaque = (TesseraPageOpaqueData *) PageGetSpecialPointer(page);
	if (opaque->magic != TESSERA_PAGE_MAGIC || opaque->kind != kind || opaque->level != level)
		corrupt_page(rel, BufferGetBlockNumber(buf), kind == TESSERA_PAGE_MAP ? "map" : "row state");
}

static inline BlockNumber *
map_entries(Page page)
{
	return (BlockNumber *) PageGetContents(page);
}

static inline TesseraRowState *
state_entries(Page page)
{
	return (TesseraRowState *) PageGetContents(page);
}

/*
 * WAL-log `len` changed bytes at `offset` of a page as a generic WAL
 * record.  Caller is in a critical section, holds an exclusive lock and
 * has marked the buffer dirty.
 */
static void
log_page_bytes(Relation rel, Buffer buf, Size offset, Size len)
{
	char		frag[sizeof(OffsetNumber) * 2 + sizeof(TesseraRowState) * 2];
	OffsetNumber off = (OffsetNumber) offset;
	OffsetNumber length = (OffsetNumber) len;
	XLogRecPtr	recptr;

	if (!RelationNeedsWAL(rel))
		return;
	Assert(len <= sizeof(TesseraRowState) * 2);
	memcpy(frag, &off, sizeof(off));
	memcpy(frag + sizeof(off), &length, sizeof(length));
	memcpy(frag + 2 * sizeof(OffsetNumber), BufferGetPage(buf) + offset, len);

	XLogBeginInsert();
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
	XLogRegisterBufData(0, frag, 2 * sizeof(OffsetNumber) + len);
	recptr = XLogInsert(RM_GENERIC_ID, 0);
	PageSetLSN(BufferGetPage(buf), recptr);
}

/* Point the metapage at a new map root (0: no state page at all). */
static void
set_state_root(Relation rel, BlockNumber root)
{
	Buffer		mbuf = ReadBufferExtended(rel, MAIN_FORKNUM, TESSERA_METAPAGE_BLKNO,
										  RBM_NORMAL, NULL);
	TesseraMetaPageData *m;

	LockBuffer(mbuf, BUFFER_LOCK_EXCLUSIVE);
	m = (TesseraMetaPageData *) PageGetContents(BufferGetPage(mbuf));
	START_CRIT_SECTION();
	m->state_root = root;
	MarkBufferDirty(mbuf);
	log_page_bytes(rel, mbuf, (char *) &m->state_root - (char *) BufferGetPage(mbuf),
				   sizeof(BlockNumber));
	END_CRIT_SECTION();
	UnlockReleaseBuffer(mbuf);
}

/* Create a map or state page at the end of the relation (extension lock held). */
static BlockNumber
new_page(Relation rel, uint16 kind, uint16 level)
{
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_ZERO_AND_LOCK, NULL);
	Page		page = BufferGetPage(buf);
	TesseraPageOpaqueData *opaque;
	Size		content = (kind == TESSERA_PAGE_MAP)
		? sizeof(BlockNumber) * TESSERA_MAP_FANOUT
		: sizeof(TesseraRowState) * TESSERA_STATE_ROWS;
	BlockNumber blkno = BufferGetBlockNumber(buf);

	StaticAssertStmt(sizeof(TesseraRowState) * TESSERA_STATE_ROWS <=
					 BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(TesseraPageOpaqueData)),
					 "state page overflows");
	StaticAssertStmt(sizeof(BlockNumber) * TESSERA_MAP_FANOUT <=
					 BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(TesseraPageOpaqueData)),
					 "map page overflows");

	START_CRIT_SECTION();
	PageInit(page, BLCKSZ, sizeof(TesseraPageOpaqueData));
	opaque = (TesseraPageOpaqueData *) PageGetSpecialPointer(page);
	opaque->magic = TESSERA_PAGE_MAGIC;
	opaque->kind = kind;
	opaque->level = level;
	((PageHeader) page)->pd_lower = (PageGetContents(page) - (char *) page) + content;
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
		log_newpage_buffer(buf, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buf);
	return blkno;
}

/* Is the state page of index in the lookup cache? */
static inline bool
state_page_cached(Relation rel, uint64 index)
{
	StateCacheEntry *ce = cache_slot(&TesseraRelLocator(rel), index);

	return ce->blkno != InvalidBlockNumber && ce->blkno != 0 &&
		ce->index == index && RelFileLocatorEquals(ce->node, TesseraRelLocator(rel));
}

/*
 * Block of the state page for state page index, or InvalidBlockNumber.
 * With create, missing map and state pages are made.
 */
static BlockNumber
find_state_page(Relation rel, uint64 index, bool create)
{
	StateCacheEntry *ce = cache_slot(&TesseraRelLocator(rel), index);
	TesseraMeta meta;
	BlockNumber blkno;
	bool		locked = false;

	if (ce->blkno != InvalidBlockNumber && ce->blkno != 0 &&
		ce->index == index && RelFileLocatorEquals(ce->node, TesseraRelLocator(rel)))
		return ce->blkno;

	for (;;)
	{
		TesseraReadMeta(rel, &meta);
		blkno = meta.valid ? meta.state_root : InvalidBlockNumber;
		if (blkno == 0)
			blkno = InvalidBlockNumber;

		if (!BlockNumberIsValid(blkno) && create)
		{
			if (!locked)
			{
				LockRelationForExtension(rel, ExclusiveLock);
				locked = true;
				continue;		/* re-read under the lock */
			}
			blkno = new_page(rel, TESSERA_PAGE_MAP, MAP_LEVELS - 1);
			set_state_root(rel, blkno);
		}
		if (!BlockNumberIsValid(blkno))
			break;

		/* walk the map: levels 2, 1, 0 */
		for (int level = MAP_LEVELS - 1; level >= 0 && BlockNumberIsValid(blkno); level--)
		{
			Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);
			int			slot = map_slot(index, level);
			BlockNumber child;

			LockBuffer(buf, locked ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE);
			check_page(rel, buf, TESSERA_PAGE_MAP, level);
			child = map_entries(BufferGetPage(buf))[slot];
			if (child == 0 && create && locked)
			{
				child = new_page(rel, level > 0 ? TESSERA_PAGE_MAP : TESSERA_PAGE_STATE,
								 level > 0 ? level - 1 : 0);
				START_CRIT_SECTION();
				map_entries(BufferGetPage(buf))[slot] = child;
				MarkBufferDirty(buf);
				log_page_bytes(rel, buf,
							   (char *) &map_entries(BufferGetPage(buf))[slot] - (char *) BufferGetPage(buf),
							   sizeof(BlockNumber));
				END_CRIT_SECTION();
			}
			UnlockReleaseBuffer(buf);
			blkno = (child == 0) ? InvalidBlockNumber : child;
		}

		if (BlockNumberIsValid(blkno) || !create || locked)
			break;
		/* missing on the way and we may create: do it under the lock */
		LockRelationForExtension(rel, ExclusiveLock);
		locked = true;
	}
	if (locked)
		UnlockRelationForExtension(rel, ExclusiveLock);

	if (BlockNumberIsValid(blkno))
	{
		ce->node = TesseraRelLocator(rel);
		ce->index = index;
		ce->blkno = blkno;
	}
	return blkno;
}

/*
 * The state pages covering rows [first, end), in order: fn gets each one
 * that exists locked in lockmode, with the rows [from, to) of the range it
 * holds and their entries (entries[0] is row from's); the walk stops when
 * fn returns true, and so do we.
 */
typedef bool (*StateRangeFn) (Relation rel, Buffer buf, TesseraRowState *entries,
							  uint64 from, uint64 to, void *arg);

static bool
walk_state_pages(Relation rel, uint64 first, uint64 end, int lockmode,
				 StateRangeFn fn, void *arg)
{
	for (uint64 r = first; r < end;)
	{
		uint64		index = r / TESSERA_STATE_ROWS;
		uint64		page_end = Min((index + 1) * TESSERA_STATE_ROWS, end);
		BlockNumber blkno = find_state_page(rel, index, false);

		if (BlockNumberIsValid(blkno))
		{
			Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);
			bool		stop;

			LockBuffer(buf, lockmode);
			check_page(rel, buf, TESSERA_PAGE_STATE, 0);
			stop = fn(rel, buf, state_entries(BufferGetPage(buf)) + (r % TESSERA_STATE_ROWS),
					  r, page_end, arg);
			UnlockReleaseBuffer(buf);
			if (stop)
				return true;
		}
		r = page_end;
	}
	return false;
}

typedef struct CopyStates
{
	uint64		first;
	TesseraRowState *out;
	bool		any;
} CopyStates;

static bool
copy_states(Relation rel, Buffer buf, TesseraRowState *e, uint64 from, uint64 to, void *arg)
{
	CopyStates *c = arg;

	memcpy(c->out + (from - c->first), e, sizeof(TesseraRowState) * (to - from));
	for (uint64 i = 0; i < to - from && !c->any; i++)
		if (!TesseraRowStateEmpty(&e[i]))
			c->any = true;
	return false;
}

/*
 * TesseraReadRowStates
 *		Copy the states of rows [first, first + n) into out; rows without a
 *		state page get zeroed entries.  Returns false if no row in the range
 *		has any state.
 */
bool
TesseraReadRowStates(Relation rel, uint64 first, int n, TesseraRowState *out)
{
	TesseraMeta meta;
	CopyStates	c;

	/*
	 * Without any state page the answer is quick, but the metapage says so
	 * only at the price of a buffer access: skip it when the first page is
	 * in the lookup cache (repeated reads of the same rows, as an UPDATE's
	 * checks do).
	 */
	if (!state_page_cached(rel, first / TESSERA_STATE_ROWS))
	{
		TesseraReadMeta(rel, &meta);
		if (!meta.valid || meta.state_root == 0)
			return false;
	}
	memset(out, 0, sizeof(TesseraRowState) * n);
	c.first = first;
	c.out = out;
	c.any = false;
	walk_state_pages(rel, first, first + n, BUFFER_LOCK_SHARE, copy_states, &c);
	return c.any;
}

static bool
has_state(Relation rel, Buffer buf, TesseraRowState *e, uint64 from, uint64 to, void *arg)
{
	for (uint64 i = 0; i < to - from; i++)
		if (!TesseraRowStateEmpty(&e[i]))
			return true;
	return false;
}

/*
 * TesseraAnyRowState
 *		Has any row of [first, first + n) a state?  Like TesseraReadRowStates
 *		without copying: quick where no state page exists.
 */
bool
TesseraAnyRowState(Relation rel, uint64 first, uint64 n)
{
	TesseraMeta meta;

	TesseraReadMeta(rel, &meta);
	if (!meta.valid || meta.state_root == 0)
		return false;
	return walk_state_pages(rel, first, first + n, BUFFER_LOCK_SHARE, has_state, NULL);
}

/* The state of one row; false if it has none. */
bool
TesseraGetRowState(Relation rel, uint64 rownum, TesseraRowState *out)
{
	return TesseraReadRowStates(rel, rownum, 1, out);
}

/*
 * TesseraLockRowState
 *		Exclusively lock the state entry of rownum, creating its page if
 *		needed.  Release with TesseraUnlockRowState.
 */
void
TesseraLockRowState(Relation rel, uint64 rownum, TesseraStateRef *ref)
{
	BlockNumber blkno = find_state_page(rel, rownum / TESSERA_STATE_ROWS, true);

	ref->rownum = rownum;
	ref->buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);
	LockBuffer(ref->buf, BUFFER_LOCK_EXCLUSIVE);
	check_page(rel, ref->buf, TESSERA_PAGE_STATE, 0);
	ref->entry = state_entries(BufferGetPage(ref->buf)) + (rownum % TESSERA_STATE_ROWS);
}

/*
 * TesseraLogRowState
 *		Mark the locked entry's page dirty and WAL-log the entry.  Call in a
 *		critical section, right after changing the entry.
 */
void
TesseraLogRowState(Relation rel, TesseraStateRef *ref)
{
	MarkBufferDirty(ref->buf);
	log_page_bytes(rel, ref->buf, (char *) ref->entry - (char *) BufferGetPage(ref->buf),
				   sizeof(TesseraRowState));
}

/*
 * TesseraBuryRow
 *		Mark rownum deleted before every snapshot, with no transaction id: a
 *		row that lost an ON CONFLICT insertion, or a row number no row was
 *		written under (compaction).  VACUUM removes its index entries.
 */
void
TesseraBuryRow(Relation rel, uint64 rownum)
{
	TesseraStateRef ref;

	TesseraLockRowState(rel, rownum, &ref);
	START_CRIT_SECTION();
	memset(ref.entry, 0, sizeof(TesseraRowState));
	ref.entry->infomask = TESSERA_RS_FROZEN_DELETED;
	TesseraLogRowState(rel, &ref);
	END_CRIT_SECTION();
	TesseraUnlockRowState(&ref);
}

void
TesseraUnlockRowState(TesseraStateRef *ref)
{
	if (BufferIsValid(ref->buf))
		UnlockReleaseBuffer(ref->buf);
	ref->buf = InvalidBuffer;
	ref->entry = NULL;
}

/*
 * TesseraForEachStatePage
 *		Call fn for every state page, in row number order, with the row
 *		number of its first entry.  No lock is held during the call.
 */
void
TesseraForEachStatePage(Relation rel, TesseraStatePageFn fn, void *arg)
{
	TesseraMeta meta;
	BlockNumber *level_blocks[MAP_LEVELS];

	TesseraReadMeta(rel, &meta);
	if (!meta.valid || meta.state_root == 0)
		return;

	/* copy each map page's entries, then descend: no lock across callbacks */
	for (int l = 0; l < MAP_LEVELS; l++)
		level_blocks[l] = palloc(sizeof(BlockNumber) * TESSERA_MAP_FANOUT);

	{
		int			idx[MAP_LEVELS];
		BlockNumber blk[MAP_LEVELS];
		int			level = MAP_LEVELS - 1;

		blk[level] = meta.state_root;
		idx[level] = -1;
		/* load the root */
		{
			Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk[level], RBM_NORMAL, NULL);

			LockBuffer(buf, BUFFER_LOCK_SHARE);
			check_page(rel, buf, TESSERA_PAGE_MAP, level);
			memcpy(level_blocks[level], map_entries(BufferGetPage(buf)),
				   sizeof(BlockNumber) * TESSERA_MAP_FANOUT);
			UnlockReleaseBuffer(buf);
		}
		while (level < MAP_LEVELS)
		{
			BlockNumber child;

			idx[level]++;
			if (idx[level] >= TESSERA_MAP_FANOUT)
			{
				level++;
				continue;
			}
			child = level_blocks[level][idx[level]];
			if (child == 0)
				continue;
			if (level == 0)
			{
				uint64		index = 0;

				for (int l = MAP_LEVELS - 1; l >= 0; l--)
					index = index * TESSERA_MAP_FANOUT + idx[l];
				CHECK_FOR_INTERRUPTS();
				fn(rel, child, index * TESSERA_STATE_ROWS, arg);
				continue;
			}
			/* descend */
			{
				Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, child, RBM_NORMAL, NULL);

				LockBuffer(buf, BUFFER_LOCK_SHARE);
				check_page(rel, buf, TESSERA_PAGE_MAP, level - 1);
				memcpy(level_blocks[level - 1], map_entries(BufferGetPage(buf)),
					   sizeof(BlockNumber) * TESSERA_MAP_FANOUT);
				UnlockReleaseBuffer(buf);
			}
			level--;
			idx[level] = -1;
		}
	}
	for (int l = 0; l < MAP_LEVELS; l++)
		pfree(level_blocks[l]);
}

/*
 * Giving state pages back.
 *
 * VACUUM rewrites stripes whose rows are mostly dead with those rows
 * "folded": the stripe lists them, so their states are no longer needed
 * once no snapshot can read the stripe's older version.  The functions
 * below clear such states and unhook state and map pages left with no
 * entry, so the pages can be reused or truncated.  They break the rule
 * that map entries never change once set, which the per-backend caches of
 * map lookups rely on; the caller holds AccessExclusiveLock (no backend is
 * looking) and sends a relcache invalidation, whose callback forgets those
 * caches before any backend touches the table again.
 */

typedef struct ClearFolded
{
	uint64		first;
	const bool *dead;
	uint64		cleared;
} ClearFolded;

static bool
clear_folded(Relation rel, Buffer buf, TesseraRowState *e, uint64 from, uint64 to, void *arg)
{
	ClearFolded *c = arg;
	const bool *dead = c->dead + (from - c->first);
	GenericXLogState *xlog;
	Page		page;
	bool		any = false;

	for (uint64 i = 0; i < to - from && !any; i++)
		if (dead[i] && (e[i].infomask & TESSERA_RS_FROZEN_DELETED))
			any = true;
	if (!any)
		return false;
	xlog = GenericXLogStart(rel);
	page = GenericXLogRegisterBuffer(xlog, buf, 0);
	e = state_entries(page) + (from % TESSERA_STATE_ROWS);
	for (uint64 i = 0; i < to - from; i++)
		if (dead[i] && (e[i].infomask & TESSERA_RS_FROZEN_DELETED))
		{
			memset(&e[i], 0, sizeof(TesseraRowState));
			c->cleared++;
		}
	GenericXLogFinish(xlog);
	return false;
}

/*
 * TesseraClearFoldedStates
 *		Clear the states of the rows of [first, first + n) marked in dead[]
 *		that are deleted for everyone.  Returns how many were cleared.
 */
uint64
TesseraClearFoldedStates(Relation rel, uint64 first, int n, const bool *dead)
{
	ClearFolded c;

	c.first = first;
	c.dead = dead;
	c.cleared = 0;
	walk_state_pages(rel, first, first + n, BUFFER_LOCK_EXCLUSIVE, clear_folded, &c);
	return c.cleared;
}

/* Has state page blkno no entry at all? */
static bool
state_page_empty(Relation rel, BlockNumber blkno)
{
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);
	TesseraRowState *e;
	bool		empty = true;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	check_page(rel, buf, TESSERA_PAGE_STATE, 0);
	e = state_entries(BufferGetPage(buf));
	for (int k = 0; k < TESSERA_STATE_ROWS && empty; k++)
		if (!TesseraRowStateEmpty(&e[k]))
			empty = false;
	UnlockReleaseBuffer(buf);
	return empty;
}

/* Unhook the empty children of map page blkno; true if it has none left. */
static bool
unhook_empty(Relation rel, BlockNumber blkno, int level, uint64 *freed)
{
	BlockNumber *children = palloc(sizeof(BlockNumber) * TESSERA_MAP_FANOUT);
	Buffer		buf;
	bool		changed = false;
	bool		empty = true;

	buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	check_page(rel, buf, TESSERA_PAGE_MAP, level);
	memcpy(children, map_entries(BufferGetPage(buf)), sizeof(BlockNumber) * TESSERA_MAP_FANOUT);
	UnlockReleaseBuffer(buf);

	for (int i = 0; i < TESSERA_MAP_FANOUT; i++)
	{
		bool		child_empty = true;

		if (children[i] == 0)
			continue;
		if (level > 0)
			child_empty = unhook_empty(rel, children[i], level - 1, freed);
		else
			child_empty = state_page_empty(rel, children[i]);
		if (child_empty)
		{
			children[i] = 0;
			changed = true;
			(*freed)++;
		}
		else
			empty = false;
	}
	if (changed && !empty)
	{
		GenericXLogState *xlog;
		Page		page;

		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		xlog = GenericXLogStart(rel);
		page = GenericXLogRegisterBuffer(xlog, buf, 0);
		memcpy(map_entries(page), children, sizeof(BlockNumber) * TESSERA_MAP_FANOUT);
		GenericXLogFinish(xlog);
		UnlockReleaseBuffer(buf);
	}
	pfree(children);
	return empty;
}

/*
 * TesseraUnhookEmptyStatePages
 *		Take state pages with no entry left, and map pages with no child
 *		left, out of the map.  Returns the number of pages unhooked.
 */
uint64
TesseraUnhookEmptyStatePages(Relation rel)
{
	TesseraMeta meta;
	uint64		freed = 0;

	TesseraReadMeta(rel, &meta);
	if (!meta.valid || meta.state_root == 0)
		return 0;
	if (unhook_empty(rel, meta.state_root, MAP_LEVELS - 1, &freed))
	{
		set_state_root(rel, 0);
		freed++;
	}
	TesseraForgetRowStateCache();
	return freed;
}

static void
note_empty_page(Relation rel, BlockNumber blkno, uint64 first_rownum, void *arg)
{
	if (!*(bool *) arg && state_page_empty(rel, blkno))
		*(bool *) arg = true;
}

/* Is some state page left without any entry?  (TesseraUnhookEmptyStatePages would take it.) */
bool
TesseraAnyEmptyStatePage(Relation rel)
{
	bool		found = false;

	TesseraForEachStatePage(rel, note_empty_page, &found);
	return found;
}

/* A map or state page, and where the block number pointing at it lives. */
typedef struct MapPageRef
{
	BlockNumber blkno;
	BlockNumber parent;			/* map page, or the metapage for the root */
	int			slot;			/* entry in the parent; -1: the metapage's root */
} MapPageRef;

static void
collect_map(Relation rel, BlockNumber blkno, int level, BlockNumber parent, int slot,
			List **refs)
{
	BlockNumber *children = palloc(sizeof(BlockNumber) * TESSERA_MAP_FANOUT);
	MapPageRef *ref = palloc(sizeof(MapPageRef));
	Buffer		buf;

	ref->blkno = blkno;
	ref->parent = parent;
	ref->slot = slot;
	*refs = lappend(*refs, ref);
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	check_page(rel, buf, TESSERA_PAGE_MAP, level);
	memcpy(children, map_entries(BufferGetPage(buf)), sizeof(BlockNumber) * TESSERA_MAP_FANOUT);
	UnlockReleaseBuffer(buf);
	for (int i = 0; i < TESSERA_MAP_FANOUT; i++)
	{
		if (children[i] == 0)
			continue;
		if (level > 0)
			collect_map(rel, children[i], level - 1, blkno, i, refs);
		else
		{
			MapPageRef *leaf = palloc(sizeof(MapPageRef));

			leaf->blkno = children[i];
			leaf->parent = blkno;
			leaf->slot = i;
			*refs = lappend(*refs, leaf);
		}
	}
	pfree(children);
}

static int
ref_blkno_desc(const ListCell *a, const ListCell *b)
{
	BlockNumber x = ((MapPageRef *) lfirst(a))->blkno;
	BlockNumber y = ((MapPageRef *) lfirst(b))->blkno;

	return x > y ? -1 : (x < y ? 1 : 0);
}

/*
 * TesseraMoveStatePages
 *		Copy map and state pages into free blocks (!used[b]) below them,
 *		highest first, and repoint their parents; the old blocks become
 *		free.  Caller holds AccessExclusiveLock (see above).  Returns the
 *		number of pages moved.
 */
int
TesseraMoveStatePages(Relation rel, bool *used, BlockNumber nblocks)
{
	TesseraMeta meta;
	List	   *refs = NIL;
	ListCell   *lc;
	int			moved = 0;
	BlockNumber lowest_free = 1;

	TesseraReadMeta(rel, &meta);
	if (!meta.valid || meta.state_root == 0)
		return 0;
	collect_map(rel, meta.state_root, MAP_LEVELS - 1, TESSERA_METAPAGE_BLKNO, -1, &refs);
	list_sort(refs, ref_blkno_desc);
	foreach(lc, refs)
	{
		MapPageRef *ref = lfirst(lc);
		Buffer		src;
		Buffer		dst;
		Buffer		pbuf;
		BlockNumber target;

		while (lowest_free < nblocks && used[lowest_free])
			lowest_free++;
		if (lowest_free >= ref->blkno)
			break;
		target = lowest_free;

		/* the copy: a full-page image of the new block */
		src = ReadBufferExtended(rel, MAIN_FORKNUM, ref->blkno, RBM_NORMAL, NULL);
		LockBuffer(src, BUFFER_LOCK_SHARE);
		dst = ReadBufferExtended(rel, MAIN_FORKNUM, target, RBM_ZERO_AND_LOCK, NULL);
		START_CRIT_SECTION();
		memcpy(BufferGetPage(dst), BufferGetPage(src), BLCKSZ);
		MarkBufferDirty(dst);
		if (RelationNeedsWAL(rel))
			log_newpage_buffer(dst, true);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(dst);
		UnlockReleaseBuffer(src);

		/* the parent's pointer (a parent moved earlier has the same children) */
		if (ref->slot < 0)
			set_state_root(rel, target);
		else
		{
			pbuf = ReadBufferExtended(rel, MAIN_FORKNUM, ref->parent, RBM_NORMAL, NULL);
			LockBuffer(pbuf, BUFFER_LOCK_EXCLUSIVE);
			START_CRIT_SECTION();
			map_entries(BufferGetPage(pbuf))[ref->slot] = target;
			MarkBufferDirty(pbuf);
			log_page_bytes(rel, pbuf,
						   (char *) &map_entries(BufferGetPage(pbuf))[ref->slot] - (char *) BufferGetPage(pbuf),
						   sizeof(BlockNumber));
			END_CRIT_SECTION();
			UnlockReleaseBuffer(pbuf);
		}

		/* a moved map page is the parent of its children at its new block */
		{
			ListCell   *lc2;

			foreach(lc2, refs)
			{
				MapPageRef *child = lfirst(lc2);

				if (child->parent == ref->blkno && child->slot >= 0)
					child->parent = target;
			}
		}
		used[target] = true;
		used[ref->blkno] = false;
		moved++;
	}
	TesseraForgetRowStateCache();
	return moved;
}

/*
 * TesseraMarkStatePages
 *		Set used[] for the map and state pages (blocks below nblocks) and
 *		return the highest of their blocks (0: none).
 */
BlockNumber
TesseraMarkStatePages(Relation rel, bool *used, BlockNumber nblocks)
{
	TesseraMeta meta;
	BlockNumber highest = 0;
	List	   *refs = NIL;
	ListCell   *lc;

	TesseraReadMeta(rel, &meta);
	if (!meta.valid || meta.state_root == 0)
		return 0;
	collect_map(rel, meta.state_root, MAP_LEVELS - 1, TESSERA_METAPAGE_BLKNO, -1, &refs);
	foreach(lc, refs)
	{
		BlockNumber blkno = ((MapPageRef *) lfirst(lc))->blkno;

		if (blkno < nblocks)
			used[blkno] = true;
		highest = Max(highest, blkno);
	}
	list_free_deep(refs);
	return highest;
}

/* Copy a state page's entries by block number, checking it is one (verify). */
void
TesseraCopyStatePage(Relation rel, BlockNumber blkno, TesseraRowState *entries)
{
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	check_page(rel, buf, TESSERA_PAGE_STATE, 0);
	memcpy(entries, state_entries(BufferGetPage(buf)), sizeof(TesseraRowState) * TESSERA_STATE_ROWS);
	UnlockReleaseBuffer(buf);
}

/* Lock a state page by block number (for VACUUM). */
Buffer
TesseraLockStatePage(Relation rel, BlockNumber blkno, TesseraRowState **entries)
{
	Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	check_page(rel, buf, TESSERA_PAGE_STATE, 0);
	*entries = state_entries(BufferGetPage(buf));
	return buf;
}
