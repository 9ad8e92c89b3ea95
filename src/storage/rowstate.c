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
 *	  and never change, so lookups are cached per backend.  New map and
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
#include "storage/standby.h"
#include "catalog/pg_control.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "tessera/rowstate.h"
#include "tessera/storage.h"
#include "tessera/tessera.h"

#define MAP_LEVELS 3
#define STATE_CACHE_SIZE 256

typedef struct StateCacheEntry
{
	RelFileNode node;
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
cache_slot(const RelFileNode *node, uint64 index)
{
	uint32		h = (uint32) (index * 2654435761U) ^ node->relNode;

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

/*
 * Block of the state page for state page index, or InvalidBlockNumber.
 * With create, missing map and state pages are made.
 */
static BlockNumber
find_state_page(Relation rel, uint64 index, bool create)
{
	StateCacheEntry *ce = cache_slot(&rel->rd_node, index);
	TesseraMeta meta;
	BlockNumber blkno;
	bool		locked = false;

	if (ce->blkno != InvalidBlockNumber && ce->blkno != 0 &&
		ce->index == index && RelFileNodeEquals(ce->node, rel->rd_node))
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
			{
				Buffer		mbuf = ReadBufferExtended(rel, MAIN_FORKNUM, TESSERA_METAPAGE_BLKNO,
													  RBM_NORMAL, NULL);
				TesseraMetaPageData *m;

				LockBuffer(mbuf, BUFFER_LOCK_EXCLUSIVE);
				m = (TesseraMetaPageData *) PageGetContents(BufferGetPage(mbuf));
				START_CRIT_SECTION();
				m->state_root = blkno;
				MarkBufferDirty(mbuf);
				log_page_bytes(rel, mbuf, (char *) &m->state_root - (char *) BufferGetPage(mbuf),
							   sizeof(BlockNumber));
				END_CRIT_SECTION();
				UnlockReleaseBuffer(mbuf);
			}
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
		ce->node = rel->rd_node;
		ce->index = index;
		ce->blkno = blkno;
	}
	return blkno;
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
	bool		any = false;
	uint64		r = first;
	uint64		end = first + n;

	TesseraReadMeta(rel, &meta);
	if (!meta.valid || meta.state_root == 0)
		return false;

	while (r < end)
	{
		uint64		index = r / TESSERA_STATE_ROWS;
		uint64		page_end = Min((index + 1) * TESSERA_STATE_ROWS, end);
		int			count = (int) (page_end - r);
		BlockNumber blkno = find_state_page(rel, index, false);

		if (!BlockNumberIsValid(blkno))
			memset(out + (r - first), 0, sizeof(TesseraRowState) * count);
		else
		{
			Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);
			TesseraRowState *src;

			LockBuffer(buf, BUFFER_LOCK_SHARE);
			check_page(rel, buf, TESSERA_PAGE_STATE, 0);
			src = state_entries(BufferGetPage(buf)) + (r % TESSERA_STATE_ROWS);
			memcpy(out + (r - first), src, sizeof(TesseraRowState) * count);
			UnlockReleaseBuffer(buf);
			for (int i = 0; i < count && !any; i++)
				if (!TesseraRowStateEmpty(&out[r - first + i]))
					any = true;
		}
		r = page_end;
	}
	return any;
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

/*
 * Recovery conflicts.
 *
 * Generic WAL records carry no snapshot horizon, so freezing a row dead
 * would not cancel standby queries that still see it.  A record of our own
 * resource manager names the horizon; its redo resolves the conflict the
 * way heap's prune records do.  A custom resource manager must be loaded
 * through shared_preload_libraries; without that no record is written and
 * standbys get no conflicts (the README says to preload tessera).
 */
#define TESSERA_RMGR_ID RM_EXPERIMENTAL_ID
#define XLOG_TESSERA_CONFLICT 0x00

typedef struct xl_tessera_conflict
{
	RelFileNode node;
	TransactionId horizon;
} xl_tessera_conflict;

static bool tessera_rmgr_registered = false;

static void
tessera_rm_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_tessera_conflict *xlrec = (xl_tessera_conflict *) XLogRecGetData(record);

	if (info != XLOG_TESSERA_CONFLICT)
		elog(PANIC, "tessera redo: unknown record type %u", info);
	if (InHotStandby)
		ResolveRecoveryConflictWithSnapshot(xlrec->horizon, xlrec->node);
}

static void
tessera_rm_desc(StringInfo buf, XLogReaderState *record)
{
	xl_tessera_conflict *xlrec = (xl_tessera_conflict *) XLogRecGetData(record);

	appendStringInfo(buf, "rel %u/%u/%u; horizon %u", xlrec->node.spcNode,
					 xlrec->node.dbNode, xlrec->node.relNode, xlrec->horizon);
}

static const char *
tessera_rm_identify(uint8 info)
{
	return (info & ~XLR_INFO_MASK) == XLOG_TESSERA_CONFLICT ? "CONFLICT" : NULL;
}

static RmgrData tessera_rmgr = {
	.rm_name = "tessera",
	.rm_redo = tessera_rm_redo,
	.rm_desc = tessera_rm_desc,
	.rm_identify = tessera_rm_identify,
};

void
TesseraRegisterRmgr(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	RegisterCustomRmgr(TESSERA_RMGR_ID, &tessera_rmgr);
	tessera_rmgr_registered = true;
}

void
TesseraLogConflictHorizon(Relation rel, TransactionId horizon)
{
	xl_tessera_conflict xlrec;

	if (!tessera_rmgr_registered || !RelationNeedsWAL(rel) || !XLogStandbyInfoActive() ||
		!TransactionIdIsValid(horizon))
		return;
	xlrec.node = rel->rd_node;
	xlrec.horizon = horizon;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	(void) XLogInsert(TESSERA_RMGR_ID, XLOG_TESSERA_CONFLICT);
}
