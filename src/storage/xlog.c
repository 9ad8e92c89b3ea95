/*-------------------------------------------------------------------------
 *
 * xlog.c
 *	  tessera's WAL resource manager: its records, their redo and their
 *	  description.
 *
 * NOTES
 *	  Pages (stripe pages, the metapage, map and state pages) are logged
 *	  with PostgreSQL's own records: full page images and generic WAL.
 *	  Two things have no generic record and need one of ours:
 *
 *	  - CONFLICT: freezing a row dead cannot cancel standby queries that
 *		still see it (generic records carry no snapshot horizon).  The
 *		record names the horizon; redo resolves the conflict the way
 *		heap's prune records do.
 *	  - FORGET: map entries, moved state pages and truncation change what
 *		every backend caches of a relation's layout, without waiting for
 *		commit.  Redo sends the relcache invalidation on the standby.
 *
 *	  - INSERT, UPDATE, DELETE: the rows a change writes, for logical
 *		decoding only (tableam/logical.c writes and decodes them); redo
 *		has nothing to do for them.
 *
 *	  A custom resource manager must be loaded through
 *	  shared_preload_libraries (id TESSERA_RMGR_ID, format.h); without that
 *	  no record is written, standbys get no conflicts, and the layout
 *	  invalidation reaches them only with the commit record (the README says
 *	  to preload tessera).
 *
 * IDENTIFICATION
 *	  src/storage/xlog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/sinval.h"
#include "storage/standby.h"
#include "utils/rel.h"

#include "tessera/compat.h"
#include "tessera/format.h"
#include "tessera/xlog.h"

typedef struct xl_tessera_forget
{
	Oid			dbid;
	Oid			relid;
} xl_tessera_forget;

typedef struct xl_tessera_conflict
{
	RelFileLocator node;
	TransactionId horizon;
} xl_tessera_conflict;

static bool tessera_rmgr_registered = false;

/* A relcache invalidation of relid, sent now (not at commit). */
static void
send_forget(Oid dbid, Oid relid)
{
	SharedInvalidationMessage msg;

	memset(&msg, 0, sizeof(msg));
	msg.rc.id = SHAREDINVALRELCACHE_ID;
	msg.rc.dbId = dbid;
	msg.rc.relId = relid;
	SendSharedInvalidMessages(&msg, 1);
}

static void
tessera_rm_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_TESSERA_FORGET)
	{
		xl_tessera_forget *xlrec = (xl_tessera_forget *) XLogRecGetData(record);

		if (InHotStandby)
			send_forget(xlrec->dbid, xlrec->relid);
		return;
	}
	if (info == XLOG_TESSERA_INSERT || info == XLOG_TESSERA_UPDATE ||
		info == XLOG_TESSERA_DELETE || info == XLOG_TESSERA_INSERT_ONE)
		return;
	if (info != XLOG_TESSERA_CONFLICT)
		elog(PANIC, "tessera redo: unknown record type %u", info);
	if (InHotStandby)
	{
		xl_tessera_conflict *xlrec = (xl_tessera_conflict *) XLogRecGetData(record);

		TesseraResolveSnapshotConflict(xlrec->horizon, xlrec->node);
	}
}

static void
tessera_rm_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_TESSERA_INSERT_ONE)
	{
		RelFileLocator node;

		memcpy(&node, XLogRecGetData(record), SizeOfTesseraOne);
		appendStringInfo(buf, "rel %u/%u/%u; one row of %u bytes", TesseraLocatorSpc(node),
						 TesseraLocatorDb(node), TesseraLocatorRel(node),
						 (uint32) XLogRecGetDataLen(record));
	}
	else if (info == XLOG_TESSERA_INSERT || info == XLOG_TESSERA_UPDATE ||
		info == XLOG_TESSERA_DELETE)
	{
		xl_tessera_rows xlrec;

		memcpy(&xlrec, XLogRecGetData(record), SizeOfTesseraRows);
		appendStringInfo(buf, "rel %u/%u/%u; rows %u; bytes %u, codec %d%s%s",
						 TesseraLocatorSpc(xlrec.node), TesseraLocatorDb(xlrec.node),
						 TesseraLocatorRel(xlrec.node), xlrec.nrows, xlrec.rawlen, xlrec.codec,
						 (xlrec.flags & XLTS_HAS_OLD) ? ", old" : "",
						 (xlrec.flags & XLTS_HAS_NEW) ? ", new" : "");
	}
	else if (info == XLOG_TESSERA_FORGET)
	{
		xl_tessera_forget *xlrec = (xl_tessera_forget *) XLogRecGetData(record);

		appendStringInfo(buf, "db %u rel %u", xlrec->dbid, xlrec->relid);
	}
	else
	{
		xl_tessera_conflict *xlrec = (xl_tessera_conflict *) XLogRecGetData(record);

		appendStringInfo(buf, "rel %u/%u/%u; horizon %u", TesseraLocatorSpc(xlrec->node),
						 TesseraLocatorDb(xlrec->node), TesseraLocatorRel(xlrec->node),
						 xlrec->horizon);
	}
}

static const char *
tessera_rm_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_TESSERA_CONFLICT:
			return "CONFLICT";
		case XLOG_TESSERA_FORGET:
			return "FORGET";
		case XLOG_TESSERA_INSERT:
			return "INSERT";
		case XLOG_TESSERA_UPDATE:
			return "UPDATE";
		case XLOG_TESSERA_DELETE:
			return "DELETE";
		case XLOG_TESSERA_INSERT_ONE:
			return "INSERT_ONE";
	}
	return NULL;
}

static RmgrData tessera_rmgr = {
	.rm_name = TESSERA_RMGR_NAME,
	.rm_redo = tessera_rm_redo,
	.rm_desc = tessera_rm_desc,
	.rm_identify = tessera_rm_identify,
};

/*
 * Register the resource manager (from shared_preload_libraries only);
 * decode is its rm_decode (tableam/logical.c, passed in from above).
 */
void
TesseraRegisterRmgr(TesseraDecodeFn decode)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	tessera_rmgr.rm_decode = decode;
	RegisterCustomRmgr(TESSERA_RMGR_ID, &tessera_rmgr);
	tessera_rmgr_registered = true;
}

/* Are tessera's records written (is the resource manager there)? */
bool
TesseraRmgrRegistered(void)
{
	return tessera_rmgr_registered;
}

void
TesseraLogConflictHorizon(Relation rel, TransactionId horizon)
{
	xl_tessera_conflict xlrec;

	if (!tessera_rmgr_registered || !RelationNeedsWAL(rel) || !XLogStandbyInfoActive() ||
		!TransactionIdIsValid(horizon))
		return;
	xlrec.node = TesseraRelLocator(rel);
	xlrec.horizon = horizon;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	(void) XLogInsert(TESSERA_RMGR_ID, XLOG_TESSERA_CONFLICT);
}

/*
 * TesseraForgetLayoutEverywhere
 *		Make every backend, and every standby's, forget what it caches of
 *		rel's layout (map lookups, stripe locations) before it next locks
 *		rel.  For changes that do not wait for commit -- map entries, moved
 *		state pages, truncation -- so the message must not either: it goes
 *		out now, and to standbys as a record of our resource manager (where
 *		that is loaded; otherwise with the commit record, as a transactional
 *		invalidation, which the caller also sends).  The caller holds
 *		AccessExclusiveLock: nobody can cache anything of rel meanwhile.
 */
void
TesseraForgetLayoutEverywhere(Relation rel)
{
	Oid			dbid = rel->rd_rel->relisshared ? InvalidOid : MyDatabaseId;

	send_forget(dbid, RelationGetRelid(rel));
	if (tessera_rmgr_registered && RelationNeedsWAL(rel) && XLogStandbyInfoActive())
	{
		xl_tessera_forget xlrec;

		xlrec.dbid = dbid;
		xlrec.relid = RelationGetRelid(rel);
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		(void) XLogInsert(TESSERA_RMGR_ID, XLOG_TESSERA_FORGET);
	}
}
