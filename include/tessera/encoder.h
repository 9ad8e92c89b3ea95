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

/* A column whose text COPY has the worker convert: its type's input function. */
typedef struct TesseraConvertColumn
{
	bool		reads_now;		/* a date or time that may say 'now' */
	Oid			infunc;
	Oid			ioparam;
	int32		typmod;
	int16		typlen;
	bool		typbyval;
} TesseraConvertColumn;

/*
 * One converted column of a batch as the worker sends it back (nothing but
 * failed if its input function raised an error): by-reference values as
 * offsets into bytes.  Pointers valid in the callback only.
 */
typedef struct TesseraConvertResult
{
	int			col;
	uint32		seq;			/* the batch's number, from 1 */
	int			nrows;
	bool		failed;
	const bool *isnull;
	const Datum *values;
	const char *bytes;
	Size		nbytes;
} TesseraConvertResult;

typedef void (*TesseraConvertDeliver) (void *arg, const TesseraConvertResult *result);

/* the column number of a batch's text, sent before its columns' offsets into it */
#define TESSERA_CONVERT_TEXT	(-1)

extern bool TesseraEncoderEligible(TupleDesc desc);
extern TesseraEncoder *TesseraEncoderStart(const TesseraColumnType *types, int natts,
										   int codec, int level, Size row_group_bytes,
										   const char *relname,
										   TesseraEncoderDeliver deliver,
										   TesseraEncoderHelp help, void *arg);
extern bool TesseraEncoderSend(TesseraEncoder *encoder, int col, int nrows, bool first,
							   bool last, const bool *isnull, const Datum *values,
							   const char *bytes, Size nbytes);
extern bool TesseraConvertEligible(Oid typid);
extern bool TesseraConvertReadsNow(Oid typid);
extern TesseraEncoder *TesseraConverterStart(const TesseraConvertColumn *cols, int ncols,
											 Size batch_bytes, const char *relname,
											 TesseraConvertDeliver deliver, void *arg);
extern bool TesseraEncoderClaim(TesseraEncoder *encoder, int col);
extern bool TesseraEncoderReceive(TesseraEncoder *encoder);
extern void TesseraEncoderStop(TesseraEncoder *encoder);

#endif							/* TESSERA_ENCODER_H */
