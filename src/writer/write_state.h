/*-------------------------------------------------------------------------
 *
 * write_state.h
 *	  A backend's buffered rows of one relation and subtransaction, shared
 *	  by the writer's files.
 *
 * IDENTIFICATION
 *	  src/writer/write_state.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_WRITE_STATE_H
#define TESSERA_WRITE_STATE_H

#include "tessera/catalog.h"
#include "tessera/encoder.h"
#include "tessera/encoding.h"
#include "tessera/format.h"
#include "tessera/options.h"

/* a column's by-reference values, each at a MAXALIGNed offset */
typedef struct ColBytes
{
	char	   *data;
	Size		len;
	Size		cap;
} ColBytes;

/*
 * The values of a row group, a column at a time.  By-reference values are
 * kept in their column's bytes and their Datums are offsets into them until
 * the row group is encoded: the bytes can then go to the encoder worker as
 * they are, and grow without moving what points into them.
 */
typedef struct RowGroupBuf
{
	int			cap;			/* rows the arrays hold */
	Datum	  **values;
	bool	  **isnull;
	ColBytes   *bytes;
} RowGroupBuf;

typedef struct WriteState
{
	struct WriteState *below;	/* state of an outer subtransaction */
	RelFileLocator node;
	Oid			relid;
	SubTransactionId subxid;
	MemoryContext cxt;			/* everything below */
	MemoryContext enc_cxt;		/* scratch space while encoding */

	int			natts;
	TupleDesc	tupdesc;		/* the columns buffered rows have */
	TupleDesc	seen_desc;		/* the relcache's descriptor checked against it */
	TesseraColumnType *types;
	uint8	   *kinds;			/* how each column's values are kept: WK_* */
	TesseraOptions opts;
	int			rg_limit;

	/* current stripe */
	bool		has_stripe;
	TesseraStripe stripe;
	uint64		stripe_rows;
	uint64		next_rownum;
	uint64		reserved_end;
	uint64		reserve_size;
	TesseraBuf	data;			/* chunks, then the directory */
	TesseraBuf	stats;			/* min/max values */
	TesseraRowGroupDisk *rgs;
	TesseraChunkDisk *chunks;	/* rgs_cap * natts */
	int			nrgs;
	int			rgs_cap;
	TesseraCidRun *cids;
	int			ncids;
	int			cids_cap;
	TesseraChunkDisk *dead;		/* builders: rgs_cap dead row lists */
	bool		any_dead;		/* some row group has folded rows */
	bool		mark_dead;		/* the row being appended is folded */
	int64	   *rg_dead;		/* indexes of the row group's folded rows */
	int			rg_ndead;
	int			rg_dead_cap;
	Datum	   *null_values;	/* an all-NULL row, for folded rows */
	bool	   *null_isnull;

	List	   *replaces;		/* builders: catalog rows the stripe replaces */
	int		   *early_deltas;	/* its WriteEntry's count; NULL for builders */

	/* current row group */
	int			rg_rows;
	Size		rg_bytes;
	RowGroupBuf cur;
	int			full_rgs;		/* row groups finished at their row limit */

	/* the encoder worker (encoder.c) and the row group it has */
	bool		eligible;		/* TesseraEncoderEligible */
	bool		encoder_tried;	/* do not start one (again) */
	TesseraEncoder *encoder;
	RowGroupBuf sent;			/* the row group in flight */
	int			sent_rg;		/* its index in the stripe; -1 if none */
	int			sent_rows;
	int			sent_pending;	/* chunks not back yet */
	int			send_col;		/* the column being sent */
	int			send_end;		/* columns from here are not to be sent */
	bool	   *sent_done;		/* which are back */
} WriteState;

/* how a column's values are kept in the row group (WriteState.kinds) */
#define WK_DROPPED	0
#define WK_BYVAL	1
#define WK_VARLENA	2
#define WK_FIXED	3			/* by reference, attlen bytes */
#define WK_CSTRING	4

extern void TesseraInitRowGroupBuf(RowGroupBuf *buf, int natts);
extern void TesseraResetRowGroupBuf(WriteState *ws, RowGroupBuf *buf);
extern void TesseraFinishRowGroup(WriteState *ws);
extern void TesseraDrainEncoder(WriteState *ws);
extern void TesseraStopEncoder(WriteState *ws);

#endif							/* TESSERA_WRITE_STATE_H */
