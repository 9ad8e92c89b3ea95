/*-------------------------------------------------------------------------
 *
 * page.c
 *	  The metapage and the stripe byte stream of a tessera relation.
 *
 * NOTES
 *	  All pages go through shared (or, for temporary tables, local)
 *	  buffers, except the metapage of a brand-new relfilenode, which is
 *	  written with smgr before the relation points at it, as heap and btree
 *	  do for their init forks.
 *
 *	  Stripe pages are written once, while the writer holds the relation
 *	  extension lock, and never modified afterwards; they are WAL-logged as
 *	  full-page images (log_newpages), so recovery and standbys need no code
 *	  of ours.  Readers only ever look at pages of stripes that the catalog
 *	  says are visible, so an aborted writer's pages are simply never read.
 *
 *	  The metapage is updated in place under an exclusive buffer lock and
 *	  logged with generic WAL.  It holds the storage id (the key of this
 *	  relfilenode's stripes in the catalog) and the counters from which
 *	  writers reserve row numbers and stripe ids.  Row numbers are never
 *	  handed out twice, even after a crash: the reservation is logged before
 *	  any row that uses it can be committed.
 *
 * IDENTIFICATION
 *	  src/storage/page.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/xloginsert.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "tessera/catalog.h"
#include "tessera/storage.h"
#include "tessera/tessera.h"

#define TESSERA_MAX_PAGES_PER_RECORD 32		/* = XLR_MAX_BLOCK_ID + 1 */

static void
build_metapage(Page page, uint64 storage_id, uint32 flags, uint64 next_rownum,
			   uint64 next_stripe_id)
{
	TesseraMetaPageData *meta;

	PageInit(page, BLCKSZ, 0);
	meta = (TesseraMetaPageData *) PageGetContents(page);
	memset(meta, 0, sizeof(TesseraMetaPageData));
	meta->magic = TESSERA_META_MAGIC;
	meta->format_version = TESSERA_FORMAT_VERSION;
	meta->storage_id = storage_id;
	meta->next_rownum = next_rownum;
	meta->next_stripe_id = Max(next_stripe_id, 1);
	meta->flags = flags;
	((PageHeader) page)->pd_lower = ((char *) meta + sizeof(TesseraMetaPageData)) - (char *) page;
}

static void
write_new_metapage(SMgrRelation srel, const RelFileLocator *rnode, ForkNumber fork,
				   uint64 storage_id, uint32 flags, bool wal)
{
	PGAlignedBlock buf;
	Page		page = (Page) buf.data;

	build_metapage(page, storage_id, flags, 0, 1);
	if (wal)
		log_newpage((RelFileLocator *) rnode, fork, TESSERA_METAPAGE_BLKNO, page, true);
	PageSetChecksumInplace(page, TESSERA_METAPAGE_BLKNO);
	smgrextend(srel, fork, TESSERA_METAPAGE_BLKNO, buf.data, true);

	/*
	 * The write did not go through shared buffers, so a checkpoint that
	 * started after our WAL record could otherwise miss it.
	 */
	if (wal)
		smgrimmedsync(srel, fork);
}

/*
 * TesseraCreateStorage
 *		Create the files of a new relfilenode and write its metapage.
 *
 * Called from relation_set_new_filenode; the relation still points at its
 * old relfilenode, so this works on the smgr level.  Unlogged relations get
 * an init fork holding a metapage flagged TESSERA_META_INIT_FORK.
 */
void
TesseraCreateStorage(const RelFileLocator *rnode, TesseraBackend backend,
					 char persistence, uint64 storage_id)
{
	SMgrRelation srel;
	bool		wal_main;

	srel = RelationCreateStorage(*rnode, persistence, true);
	(void) backend;

	/*
	 * With wal_level = minimal a new relfilenode is synced at commit instead
	 * of being logged (RelationCreateStorage registered that).
	 */
	wal_main = (persistence == RELPERSISTENCE_PERMANENT && XLogIsNeeded());
	write_new_metapage(srel, rnode, MAIN_FORKNUM, storage_id, 0, wal_main);

	if (persistence == RELPERSISTENCE_UNLOGGED)
	{
		smgrcreate(srel, INIT_FORKNUM, false);
		log_smgrcreate(rnode, INIT_FORKNUM);
		write_new_metapage(srel, rnode, INIT_FORKNUM, storage_id,
						   TESSERA_META_INIT_FORK, true);
	}
	smgrclose(srel);
}

/*
 * TesseraInitMetapage
 *		Write a fresh metapage into an empty main fork (after a
 *		non-transactional truncate), keeping the counters so that no row
 *		number is ever reused.  Caller holds AccessExclusiveLock.
 */
void
TesseraInitMetapage(Relation rel, uint64 storage_id, uint64 next_rownum, uint64 next_stripe_id)
{
	Buffer		buf;
	Page		page;

	buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_ZERO_AND_LOCK, NULL);
	if (BufferGetBlockNumber(buf) != TESSERA_METAPAGE_BLKNO)
		elog(ERROR, "tessera metapage of \"%s\" written to block %u",
			 RelationGetRelationName(rel), BufferGetBlockNumber(buf));
	page = BufferGetPage(buf);

	START_CRIT_SECTION();
	build_metapage(page, storage_id, 0, next_rownum, next_stripe_id);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
		log_newpage_buffer(buf, true);
	END_CRIT_SECTION();

	UnlockReleaseBuffer(buf);
}

static TesseraMetaPageData *
check_metapage(Relation rel, Page page)
{
	TesseraMetaPageData *meta = (TesseraMetaPageData *) PageGetContents(page);

	if (PageIsNew(page) || meta->magic != TESSERA_META_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("tessera table \"%s\" has an invalid metapage",
						RelationGetRelationName(rel))));
	if (meta->format_version != TESSERA_FORMAT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("tessera table \"%s\" has storage format version %u, but this build reads version %d",
						RelationGetRelationName(rel), meta->format_version,
						TESSERA_FORMAT_VERSION),
				 meta->format_version > TESSERA_FORMAT_VERSION ?
				 errhint("The table was written by a newer tessera: install that version's library.") :
				 errhint("Install the tessera version that wrote the table, or rewrite it with VACUUM FULL there.")));
	return meta;
}

/*
 * TesseraReadMeta
 *		Read the metapage.  meta->valid is false when the relation has no
 *		storage id yet (an unlogged table reset after a crash): it is empty.
 */
void
TesseraReadMeta(Relation rel, TesseraMeta *result)
{
	Buffer		buf;
	TesseraMetaPageData *meta;

	memset(result, 0, sizeof(TesseraMeta));

	/*
	 * A relfilenode gets its metapage when it is created and keeps one, so
	 * once seen it need not be looked for again (rd_amcache goes away with
	 * the relcache entry, which a new relfilenode invalidates).  This saves
	 * an lseek per row on paths that read the metapage per row.
	 */
	if (rel->rd_amcache == NULL)
	{
		if (TesseraPhysicalBlocks(rel) == 0)
			return;
		rel->rd_amcache = MemoryContextAllocZero(CacheMemoryContext, sizeof(bool));
		*(bool *) rel->rd_amcache = true;
	}

	buf = ReadBufferExtended(rel, MAIN_FORKNUM, TESSERA_METAPAGE_BLKNO, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	meta = check_metapage(rel, BufferGetPage(buf));
	if ((meta->flags & TESSERA_META_INIT_FORK) == 0)
	{
		result->valid = true;
		result->storage_id = meta->storage_id;
		result->next_rownum = meta->next_rownum;
		result->next_stripe_id = meta->next_stripe_id;
		result->state_root = meta->state_root;
	}
	UnlockReleaseBuffer(buf);
}

/*
 * TesseraReadStorageIdForDrop
 *		The storage id of a table being dropped or given new storage
 *		(TRUNCATE, rewrites), if its metapage can tell.
 *
 * DROP and TRUNCATE must work whatever state the storage is in, as they do
 * for heap: a
 * temporary table whose files the crash restart removed (the next session
 * of that temp namespace drops it), a file lost or damaged.  Then the
 * storage's catalog rows cannot be found and are left behind, with a
 * WARNING for a damaged metapage; a missing file is silent, since a crash
 * always leaves temporary tables so.
 */
bool
TesseraReadStorageIdForDrop(Relation rel, uint64 *storage_id)
{
	SMgrRelation smgr = RelationGetSmgr(rel);
	Buffer		buf;
	TesseraMetaPageData *meta;
	bool		found = false;

	if (!smgrexists(smgr, MAIN_FORKNUM) || smgrnblocks(smgr, MAIN_FORKNUM) == 0)
		return false;

	/* a page failing PostgreSQL's own checks reads as zeroes: not ours */
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, TESSERA_METAPAGE_BLKNO, RBM_ZERO_ON_ERROR, NULL);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	meta = (TesseraMetaPageData *) PageGetContents(BufferGetPage(buf));
	if (!PageIsNew(BufferGetPage(buf)) && meta->magic == TESSERA_META_MAGIC &&
		meta->format_version == TESSERA_FORMAT_VERSION)
	{
		found = (meta->flags & TESSERA_META_INIT_FORK) == 0;
		*storage_id = meta->storage_id;
	}
	else
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("tessera table \"%s\" has an invalid metapage: its stripe catalog rows are left in place",
						RelationGetRelationName(rel))));
	UnlockReleaseBuffer(buf);
	return found;
}

/*
 * TesseraReserve
 *		Reserve nrows row numbers and one stripe id for a writer.
 *
 * If the relation was reset from its init fork, it first gets a new storage
 * id, so that catalog rows of the storage before the reset are never seen.
 */
void
TesseraReserve(Relation rel, uint64 nrows, uint64 *storage_id,
			   uint64 *first_rownum, uint64 *stripe_id)
{
	Buffer		buf;
	GenericXLogState *state;
	Page		page;
	TesseraMetaPageData *meta;
	uint64		new_storage_id = 0;
	bool		need_id;

	buf = ReadBufferExtended(rel, MAIN_FORKNUM, TESSERA_METAPAGE_BLKNO, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	meta = check_metapage(rel, BufferGetPage(buf));
	need_id = (meta->flags & TESSERA_META_INIT_FORK) != 0;
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);

	/* allocate outside the buffer lock: nextval does I/O and locking */
	if (need_id)
		new_storage_id = TesseraNextStorageId();

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(rel);
	page = GenericXLogRegisterBuffer(state, buf, 0);
	meta = check_metapage(rel, page);

	if (meta->flags & TESSERA_META_INIT_FORK)
	{
		if (!need_id)
			elog(ERROR, "tessera metapage of \"%s\" changed under us",
				 RelationGetRelationName(rel));
		meta->flags &= ~TESSERA_META_INIT_FORK;
		meta->storage_id = new_storage_id;
	}
	if (meta->next_rownum + nrows > TESSERA_MAX_ROWNUM)
	{
		GenericXLogAbort(state);
		UnlockReleaseBuffer(buf);
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tessera table \"%s\" has run out of row numbers",
						RelationGetRelationName(rel)),
				 errhint("Rewrite the table with VACUUM FULL.")));
	}

	*storage_id = meta->storage_id;
	*first_rownum = meta->next_rownum;
	*stripe_id = meta->next_stripe_id;
	meta->next_rownum += nrows;
	meta->next_stripe_id += 1;

	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
}

/*
 * Write len bytes as stripe pages at blocks start.. (InvalidBlockNumber:
 * new blocks at the end of the relation, under the extension lock, which
 * the caller holds).  Each batch of pages is logged as full-page images.
 */
static BlockNumber
write_stripe_pages(Relation rel, const char *data, Size len, BlockNumber start,
				   BlockNumber npages, BufferAccessStrategy strategy)
{
	BlockNumber done = 0;
	Size		pos = 0;
	bool		extend = !BlockNumberIsValid(start);
	bool		wal = RelationNeedsWAL(rel);

	while (done < npages)
	{
		Buffer		bufs[TESSERA_MAX_PAGES_PER_RECORD];
		Page		pages[TESSERA_MAX_PAGES_PER_RECORD];
		BlockNumber blknos[TESSERA_MAX_PAGES_PER_RECORD];
		int			n = Min(npages - done, TESSERA_MAX_PAGES_PER_RECORD);

		for (int i = 0; i < n; i++)
		{
			Size		chunk = Min(len - pos, (Size) TESSERA_PAGE_DATA_SIZE);
			TesseraPageOpaqueData *opaque;

			CHECK_FOR_INTERRUPTS();
			bufs[i] = ReadBufferExtended(rel, MAIN_FORKNUM,
										 extend ? P_NEW : start + done + i,
										 RBM_ZERO_AND_LOCK, strategy);
			blknos[i] = BufferGetBlockNumber(bufs[i]);
			if (!BlockNumberIsValid(start))
				start = blknos[i];
			if (blknos[i] != start + done + i || blknos[i] == TESSERA_METAPAGE_BLKNO)
				elog(ERROR, "tessera relation \"%s\" was extended to block %u, expected %u",
					 RelationGetRelationName(rel), blknos[i], start + done + i);

			pages[i] = BufferGetPage(bufs[i]);
			PageInit(pages[i], BLCKSZ, sizeof(TesseraPageOpaqueData));
			opaque = (TesseraPageOpaqueData *) PageGetSpecialPointer(pages[i]);
			opaque->magic = TESSERA_PAGE_MAGIC;
			opaque->kind = TESSERA_PAGE_STRIPE;
			opaque->level = 0;
			memcpy((char *) pages[i] + TESSERA_PAGE_DATA_START, data + pos, chunk);
			((PageHeader) pages[i])->pd_lower = TESSERA_PAGE_DATA_START + chunk;
			pos += chunk;
		}

		START_CRIT_SECTION();
		for (int i = 0; i < n; i++)
			MarkBufferDirty(bufs[i]);
		if (wal)
			log_newpages(&TesseraRelLocator(rel), MAIN_FORKNUM, n, blknos, pages, true);
		END_CRIT_SECTION();

		for (int i = 0; i < n; i++)
			UnlockReleaseBuffer(bufs[i]);
		done += n;
	}
	return start;
}

/*
 * TesseraWriteStripePages
 *		Append len bytes as new pages at the end of the relation.
 *
 * Returns the first block; *nblocks gets the number of pages.  The pages
 * are consecutive: the relation extension lock is held while they are
 * allocated.
 */
BlockNumber
TesseraWriteStripePages(Relation rel, const char *data, Size len, BlockNumber *nblocks)
{
	BlockNumber npages = Max(TesseraBlocksForBytes(len), 1);
	BlockNumber start;
	BufferAccessStrategy strategy = NULL;

	if (npages > 64)
		strategy = GetAccessStrategy(BAS_BULKWRITE);
	LockRelationForExtension(rel, ExclusiveLock);
	start = write_stripe_pages(rel, data, len, InvalidBlockNumber, npages, strategy);
	UnlockRelationForExtension(rel, ExclusiveLock);
	if (strategy)
		FreeAccessStrategy(strategy);
	*nblocks = npages;
	return start;
}

/*
 * TesseraWriteStripePagesAt
 *		Write len bytes as a stripe's pages over existing blocks start.. of
 *		the relation, which nothing references (VACUUM reusing free pages
 *		under AccessExclusiveLock).
 */
void
TesseraWriteStripePagesAt(Relation rel, const char *data, Size len, BlockNumber start)
{
	BlockNumber npages = Max(TesseraBlocksForBytes(len), 1);

	if (start == TESSERA_METAPAGE_BLKNO || start + npages > TesseraPhysicalBlocks(rel))
		elog(ERROR, "tessera relation \"%s\" has no blocks %u..%u to reuse",
			 RelationGetRelationName(rel), start, start + npages - 1);
	(void) write_stripe_pages(rel, data, len, start, npages, NULL);
}

/*
 * Does stripe page `page` hold data bytes [off, off + n)?  (Its kind, magic
 * and special space, and a pd_lower past those bytes.)
 */
static inline bool
stripe_page_holds(Page page, Size off, Size n)
{
	TesseraPageOpaqueData *opaque = (TesseraPageOpaqueData *)
		((char *) page + BLCKSZ - MAXALIGN(sizeof(TesseraPageOpaqueData)));

	return !PageIsNew(page) &&
		((PageHeader) page)->pd_special == BLCKSZ - MAXALIGN(sizeof(TesseraPageOpaqueData)) &&
		opaque->magic == TESSERA_PAGE_MAGIC &&
		opaque->kind == TESSERA_PAGE_STRIPE &&
		((PageHeader) page)->pd_lower >= TESSERA_PAGE_DATA_START + off + n;
}

/*
 * Is `page` a stripe page?  Its special space's magic and kind only, read
 * without a content lock (they never change once the page is initialized):
 * one cache line at the page's end.  A page of anything else (zeroed,
 * another relation's) is refused here; damage to the bytes read is left
 * to their checksum.
 */
static inline bool
stripe_page_ours(Page page)
{
	TesseraPageOpaqueData *opaque = (TesseraPageOpaqueData *)
		((char *) page + BLCKSZ - MAXALIGN(sizeof(TesseraPageOpaqueData)));

	return opaque->magic == TESSERA_PAGE_MAGIC && opaque->kind == TESSERA_PAGE_STRIPE;
}

/*
 * Pin block idx of a stripe: the buffer recent[idx] names if it still holds
 * the block, else through the buffer mapping table (and remembered there).
 */
static Buffer
pin_stripe_block(Relation rel, BlockNumber start_block, uint64 idx, Buffer *recent,
				 BufferAccessStrategy strategy)
{
	BlockNumber block = start_block + (BlockNumber) idx;
	Buffer		buf;

	if (recent != NULL && BufferIsValid(recent[idx]) &&
		ReadRecentBuffer(TesseraRelLocator(rel), MAIN_FORKNUM, block, recent[idx]))
	{
		/* counted as ReadBufferExtended counts a hit */
		pgstat_count_buffer_read(rel);
		pgstat_count_buffer_hit(rel);
		return recent[idx];
	}
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, block, RBM_NORMAL, strategy);
	if (recent != NULL)
		recent[idx] = buf;
	return buf;
}

/*
 * Copy len bytes at logical offset of the stripe starting at start_block
 * (nblocks long) into dst, a page at a time under a pin.  Without recent
 * buffers, each page under a share lock and checked to hold the bytes
 * (stripe_page_holds); with them, as TesseraPinStripeBytes reads a page.
 * False if the pages do not hold the bytes.
 */
static bool
copy_stripe_pages(Relation rel, BlockNumber start_block, BlockNumber nblocks, uint64 offset,
				  Size len, char *dst, BufferAccessStrategy strategy, Buffer *recent)
{
	uint64		idx = offset / TESSERA_PAGE_DATA_SIZE;
	Size		off = offset % TESSERA_PAGE_DATA_SIZE;

	while (len > 0)
	{
		Size		n = Min(len, (Size) TESSERA_PAGE_DATA_SIZE - off);
		Buffer		buf;
		Page		page;
		bool		ok;

		if (idx >= nblocks)
			return false;
		buf = pin_stripe_block(rel, start_block, idx, recent, strategy);
		page = BufferGetPage(buf);
		if (recent == NULL)
		{
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			ok = stripe_page_holds(page, off, n);
		}
		else
			ok = stripe_page_ours(page);
		if (ok)
			memcpy(dst, (char *) page + TESSERA_PAGE_DATA_START + off, n);
		if (recent == NULL)
			UnlockReleaseBuffer(buf);
		else
			ReleaseBuffer(buf);
		if (!ok)
			return false;
		dst += n;
		len -= n;
		off = 0;
		idx++;
	}
	return true;
}

/*
 * TesseraReadBytes
 *		Copy len bytes at logical offset of the stripe starting at
 *		start_block (nblocks long) into dst.
 *
 * Returns false if the pages do not hold those bytes (the caller reports
 * corruption with the names it knows).  Only a pin and a share lock are
 * held, one page at a time.
 */
bool
TesseraReadBytes(Relation rel, BlockNumber start_block, BlockNumber nblocks,
				 uint64 offset, Size len, char *dst, BufferAccessStrategy strategy)
{
	return copy_stripe_pages(rel, start_block, nblocks, offset, len, dst, strategy, NULL);
}

/*
 * TesseraPinStripeBytes
 *		Bytes [offset, offset + len) of a stripe where they lie: in the one
 *		page that holds them all, left pinned (*buf; the caller releases it
 *		with ReleaseBuffer once done with them), or in a delta stripe's
 *		catalog row (*buf InvalidBuffer).  NULL if they span pages or the
 *		stripe does not hold them: TesseraReadStripeBytes reads the former
 *		and reports the latter.  recent, if given, has an entry per block of
 *		the stripe: the buffer the block was found in last, tried first
 *		(ReadRecentBuffer), and set.
 *
 * A point read decodes a frame straight from shared buffers, without a
 * copy: a stripe's pages never change while a reader holds a lock on its
 * table (they are written once; VACUUM reuses freed ones only under
 * AccessExclusiveLock), so the pin alone keeps the bytes in place, as it
 * keeps a heap tuple's.  Nor is a content lock taken or the page header
 * read (pd_lower past the bytes, as TesseraReadBytes checks): the caller
 * checks the bytes against their checksum, and the header and special
 * space were two cache misses per page, a tenth of a point read's time;
 * only the special space's magic is looked at (stripe_page_ours), so that
 * a page that is not ours is reported as such.  For the same reason the
 * caller's recent buffers spare the buffer mapping table's lookup, which
 * was another tenth (a point read pins a page per column it returns,
 * where heap pins one).
 */
const char *
TesseraPinStripeBytes(Relation rel, const TesseraStripe *stripe, uint64 offset, Size len,
					  Buffer *buf, Buffer *recent)
{
	uint64		idx = offset / TESSERA_PAGE_DATA_SIZE;
	Size		off = offset % TESSERA_PAGE_DATA_SIZE;
	Page		page;

	*buf = InvalidBuffer;
	if (stripe->flags & TESSERA_STRIPE_DELTA)
	{
		if (stripe->delta == NULL || offset > VARSIZE_ANY_EXHDR(stripe->delta) ||
			len > VARSIZE_ANY_EXHDR(stripe->delta) - offset)
			return NULL;
		return VARDATA_ANY(stripe->delta) + offset;
	}
	if (len == 0 || off + len > TESSERA_PAGE_DATA_SIZE || idx >= stripe->nblocks)
		return NULL;
	*buf = pin_stripe_block(rel, stripe->start_block, idx, recent, NULL);
	page = BufferGetPage(*buf);
	if (!stripe_page_ours(page))
	{
		ReleaseBuffer(*buf);
		*buf = InvalidBuffer;
		return NULL;
	}
	return (char *) page + TESSERA_PAGE_DATA_START + off;
}

/*
 * TesseraCopyStripeBytes
 *		Copy bytes [offset, offset + len) of a stripe into dst as
 *		TesseraPinStripeBytes reads them (recent buffers, no content lock,
 *		only stripe_page_ours: the caller checks a checksum).  False if the
 *		stripe does not hold them or a page is not a stripe page.
 */
bool
TesseraCopyStripeBytes(Relation rel, const TesseraStripe *stripe, uint64 offset, Size len,
					   char *dst, Buffer *recent)
{
	if (stripe->flags & TESSERA_STRIPE_DELTA)
		return TesseraReadStripeBytes(rel, stripe, offset, len, dst, NULL);
	return copy_stripe_pages(rel, stripe->start_block, stripe->nblocks, offset, len, dst, NULL,
							 recent);
}

/*
 * TesseraReadStripeBytes
 *		Copy len bytes at offset of a stripe into dst, from its pages or, for
 *		a delta stripe, from the bytes its catalog row carries.  False if the
 *		stripe does not hold them.
 */
bool
TesseraReadStripeBytes(Relation rel, const TesseraStripe *stripe, uint64 offset, Size len,
					   char *dst, BufferAccessStrategy strategy)
{
	if (stripe->flags & TESSERA_STRIPE_DELTA)
	{
		if (stripe->delta == NULL || offset > VARSIZE_ANY_EXHDR(stripe->delta) ||
			len > VARSIZE_ANY_EXHDR(stripe->delta) - offset)
			return false;
		memcpy(dst, VARDATA_ANY(stripe->delta) + offset, len);
		return true;
	}
	return TesseraReadBytes(rel, stripe->start_block, stripe->nblocks, offset, len, dst,
							strategy);
}

/*
 * TesseraReleaseReservation
 *		Give back the row numbers [used_end, reserved_end) of a finished
 *		stripe if nobody reserved any after them, so that consecutive small
 *		writes get consecutive row numbers (compaction merges runs of them).
 *		Those row numbers were never handed out, so reusing them is safe.
 */
bool
TesseraReleaseReservation(Relation rel, uint64 storage_id, uint64 reserved_end, uint64 used_end)
{
	Buffer		buf;
	GenericXLogState *state;
	Page		page;
	TesseraMetaPageData *meta;

	Assert(used_end <= reserved_end);
	if (used_end == reserved_end)
		return true;
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, TESSERA_METAPAGE_BLKNO, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	meta = check_metapage(rel, BufferGetPage(buf));
	if (meta->storage_id != storage_id || meta->next_rownum != reserved_end)
	{
		UnlockReleaseBuffer(buf);
		return false;
	}
	state = GenericXLogStart(rel);
	page = GenericXLogRegisterBuffer(state, buf, 0);
	meta = (TesseraMetaPageData *) PageGetContents(page);
	meta->next_rownum = used_end;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
	return true;
}

/*
 * TesseraExtendReservation
 *		Reserve nrows more row numbers right after reserved_end, if nobody
 *		reserved any since.  Returns false (and changes nothing) otherwise.
 */
bool
TesseraExtendReservation(Relation rel, uint64 storage_id, uint64 reserved_end, uint64 nrows)
{
	Buffer		buf;
	GenericXLogState *state;
	Page		page;
	TesseraMetaPageData *meta;

	buf = ReadBufferExtended(rel, MAIN_FORKNUM, TESSERA_METAPAGE_BLKNO, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	meta = check_metapage(rel, BufferGetPage(buf));
	if (meta->storage_id != storage_id || meta->next_rownum != reserved_end ||
		meta->next_rownum + nrows > TESSERA_MAX_ROWNUM)
	{
		UnlockReleaseBuffer(buf);
		return false;
	}
	state = GenericXLogStart(rel);
	page = GenericXLogRegisterBuffer(state, buf, 0);
	meta = (TesseraMetaPageData *) PageGetContents(page);
	meta->next_rownum += nrows;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
	return true;
}
