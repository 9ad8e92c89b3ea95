/*-------------------------------------------------------------------------
 *
 * xlog.h
 *	  tessera's WAL resource manager (storage/xlog.c).
 *
 * IDENTIFICATION
 *	  include/tessera/xlog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_XLOG_H
#define TESSERA_XLOG_H

#include "executor/tuptable.h"
#include "storage/itemptr.h"
#include "utils/relcache.h"

#include "tessera/compat.h"

/* record types of tessera's resource manager (the high bits of xl_info) */
#define XLOG_TESSERA_CONFLICT	0x00	/* standby conflict horizon */
#define XLOG_TESSERA_FORGET		0x10	/* drop cached layouts of a relation */
#define XLOG_TESSERA_INSERT		0x20	/* rows inserted (logical decoding) */
#define XLOG_TESSERA_UPDATE		0x30	/* a row updated (logical decoding) */
#define XLOG_TESSERA_DELETE		0x40	/* a row deleted (logical decoding) */
#define XLOG_TESSERA_INSERT_ONE	0x50	/* one small row inserted (logical decoding) */

/*
 * The rows of an INSERT, UPDATE or DELETE record (tableam/logical.c):
 * this header, then rawlen bytes of rows, compressed with codec unless
 * that is TESSERA_CODEC_NONE.  An UPDATE has the old row's replica
 * identity (XLTS_HAS_OLD) and the new row; a DELETE the old identity.
 */
typedef struct xl_tessera_rows
{
	RelFileLocator node;
	uint32		nrows;
	uint32		rawlen;
	uint8		codec;
	uint8		flags;
} xl_tessera_rows;

#define SizeOfTesseraRows	(offsetof(xl_tessera_rows, flags) + sizeof(uint8))

/*
 * INSERT_ONE, for a single row too small to compress (an INSERT ... SELECT
 * logs one per row, as heap does): the relation, then the row's header
 * fields (infomask2, infomask, hoff) and its bytes to the record's end.
 */
#define SizeOfTesseraOne	sizeof(RelFileLocator)
#define XLTS_HAS_OLD		0x01
#define XLTS_HAS_NEW		0x02

struct LogicalDecodingContext;
struct XLogRecordBuffer;
typedef void (*TesseraDecodeFn) (struct LogicalDecodingContext *ctx,
								 struct XLogRecordBuffer *buf);

/* storage/xlog.c */
extern void TesseraRegisterRmgr(TesseraDecodeFn decode);
extern bool TesseraRmgrRegistered(void);
extern void TesseraLogConflictHorizon(Relation rel, TransactionId horizon);
extern void TesseraForgetLayoutEverywhere(Relation rel);

/* tableam/logical.c */
extern bool TesseraLogicalWanted(Relation rel, int options);
extern void TesseraLogicalInsert(Relation rel, TupleTableSlot **slots, int nslots);
extern void TesseraLogicalUpdate(Relation rel, ItemPointer otid, TupleTableSlot *newslot);
extern void TesseraLogicalDelete(Relation rel, ItemPointer otid);
extern void TesseraLogicalDecode(struct LogicalDecodingContext *ctx,
								 struct XLogRecordBuffer *buf);

#endif							/* TESSERA_XLOG_H */
