/*-------------------------------------------------------------------------
 *
 * encoder.h
 *	  A background worker that encodes a bulk load's row groups while the
 *	  backend parses the next one (writer/encoder.c).
 *
 * IDENTIFICATION
 *	  include/tessera/encoder.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_ENCODER_H
#define TESSERA_ENCODER_H

#include "access/tupdesc.h"
#include "tessera/encoding.h"

/* settings (tessera.c defines them) */
extern PGDLLIMPORT bool tessera_encoder_worker;
extern PGDLLIMPORT int tessera_debug_encoder_exit_after;

/* One encoded chunk as the worker sends it back; pointers valid in the callback only. */
typedef struct TesseraEncoderResult
{
	int			col;
	const char *stored;			/* the chunk's bytes */
	Size		stored_len;
	bool		framed;
	uint32		crc;			/* of the chunk (framed: of its frame table) */
	uint32		raw_bytes;
	uint64		logical_bytes;
	uint32		value_count;
	uint8		encoding;
	uint8		codec;
	bool		has_stats;		/* min and max below (serialized) */
	const char *min;
	uint32		min_len;
	const char *max;
	uint32		max_len;
} TesseraEncoderResult;

typedef void (*TesseraEncoderDeliver) (void *arg, const TesseraEncoderResult *result);

/* take a column not sent yet and encode it in the backend; false if none is left */
typedef bool (*TesseraEncoderHelp) (void *arg);

typedef struct TesseraEncoder TesseraEncoder;

extern bool TesseraEncoderEligible(TupleDesc desc);
extern TesseraEncoder *TesseraEncoderStart(const TesseraColumnType *types, int natts,
										   int codec, int level, Size row_group_bytes,
										   const char *relname,
										   TesseraEncoderDeliver deliver,
										   TesseraEncoderHelp help, void *arg);
extern bool TesseraEncoderSend(TesseraEncoder *encoder, int col, int nrows, bool first,
							   bool last, const bool *isnull, const Datum *values,
							   const char *bytes, Size nbytes);
extern bool TesseraEncoderClaim(TesseraEncoder *encoder, int col);
extern bool TesseraEncoderReceive(TesseraEncoder *encoder);
extern void TesseraEncoderStop(TesseraEncoder *encoder);

#endif							/* TESSERA_ENCODER_H */
