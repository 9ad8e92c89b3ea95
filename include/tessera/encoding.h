/*-------------------------------------------------------------------------
 *
 * encoding.h
 *	  Column chunk encoding and decoding: null bitmaps, lightweight
 *	  encodings (frame of reference, delta, run length, dictionary, scaled
 *	  decimals) and general-purpose codecs (zstd, lz4, pglz).
 *
 * IDENTIFICATION
 *	  include/tessera/encoding.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_ENCODING_H
#define TESSERA_ENCODING_H

#include "tessera/compat.h"

#include "access/tupdesc.h"
#include "access/tupmacs.h"
#include "fmgr.h"
#include "utils/palloc.h"

#include "tessera/format.h"

/*
 * A function that does not return.  PostgreSQL 18 replaced the
 * TESSERA_NORETURN suffix by a pg_noreturn prefix that cannot mark
 * function pointers; tessera's own suffix works with every version.
 */
#if defined(__GNUC__) || defined(__clang__)
#define TESSERA_NORETURN __attribute__((noreturn))
#else
#define TESSERA_NORETURN
#endif

/* A growable byte buffer that may exceed MaxAllocSize. */
typedef struct TesseraBuf
{
	char	   *data;
	Size		len;
	Size		cap;
} TesseraBuf;

extern void TesseraBufInit(TesseraBuf *buf, Size cap);
extern void TesseraBufReserve(TesseraBuf *buf, Size extra);
extern void TesseraBufAppend(TesseraBuf *buf, const void *data, Size len);
extern void TesseraBufAlign(TesseraBuf *buf);
extern void TesseraBufFree(TesseraBuf *buf);

static inline char *
TesseraBufAppendSpace(TesseraBuf *buf, Size len)
{
	char	   *p;

	if (buf->len + len > buf->cap)
		TesseraBufReserve(buf, len);
	p = buf->data + buf->len;
	buf->len += len;
	return p;
}

/* A pass-by-value integer Datum of typlen 1, 2, 4 or 8, widened. */
static inline int64
TesseraByvalToInt(Datum d, int typlen)
{
	switch (typlen)
	{
		case 1:
			return (int64) (int8) DatumGetChar(d);
		case 2:
			return (int64) DatumGetInt16(d);
		case 4:
			return (int64) DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

/* An integer as a pass-by-value Datum of typlen 1, 2, 4 or 8. */
static inline Datum
TesseraIntToByval(int64 v, int typlen)
{
	switch (typlen)
	{
		case 1:
			return CharGetDatum((char) (int8) v);
		case 2:
			return Int16GetDatum((int16) v);
		case 4:
			return Int32GetDatum((int32) v);
		default:
			return Int64GetDatum(v);
	}
}

/* How a column's values are handled, decided once per column. */
typedef enum TesseraColumnKind
{
	TESSERA_KIND_BYVAL,			/* pass-by-value, typlen 1/2/4/8 */
	TESSERA_KIND_FIXED,			/* pass-by-reference, fixed length */
	TESSERA_KIND_VARLENA,		/* typlen -1 */
	TESSERA_KIND_CSTRING,		/* typlen -2 */
	TESSERA_KIND_NUMERIC		/* numeric: varlena with a decimal encoding */
} TesseraColumnKind;

/* How min/max are computed for a column. */
typedef enum TesseraStatsKind
{
	TESSERA_STATS_NONE,
	TESSERA_STATS_SIGNED,		/* signed integers, date, time, timestamps */
	TESSERA_STATS_FLOAT4,
	TESSERA_STATS_FLOAT8,
	TESSERA_STATS_CMP			/* the type's default btree comparison */
} TesseraStatsKind;

typedef struct TesseraColumnType
{
	Oid			typid;
	Oid			collation;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	bool		packable;		/* varlena may have a 1-byte header (storage != plain) */
	TesseraColumnKind kind;
	TesseraStatsKind stats;
	FmgrInfo	cmp;			/* valid if stats == TESSERA_STATS_CMP */
} TesseraColumnType;

extern void TesseraColumnTypeInit(TesseraColumnType *type, Form_pg_attribute attr);

/* Bytes a fixed-length value takes in a plain stream (aligned). */
static inline Size
TesseraFixedStride(const TesseraColumnType *type)
{
	return att_align_nominal(type->typlen, type->typalign);
}

/* single values (access.c) */
extern bool TesseraPlainValue(const TesseraColumnType *type, const char *stream, Size nbytes,
							  Size *off, Size *len);

/* An encoded chunk, ready to be placed in a stripe. */
typedef struct TesseraEncodedChunk
{
	TesseraBuf	stored;			/* bytes to write */
	bool		framed;			/* TESSERA_CHUNK_FRAMED */
	uint32		crc;			/* framed: the checksum of its table */
	uint32		raw_bytes;
	uint64		logical_bytes;
	uint32		value_count;
	uint8		encoding;
	uint8		codec;
	bool		has_stats;
	Datum		min;			/* valid if has_stats; may point into caller's values */
	Datum		max;
} TesseraEncodedChunk;

extern void TesseraEncodeChunk(const TesseraColumnType *type, const Datum *values,
							   const bool *isnull, int nrows, int codec, int level,
							   TesseraEncodedChunk *out);

/*
 * Decoding reports problems through this callback so that the message can
 * name the table, stripe and column; it must not return.
 */
typedef void (*TesseraCorruptFn) (void *arg, const char *detail) TESSERA_NORETURN;

/* Make raw bytes [p, p + len) of a payload present (a framed chunk's view). */
typedef void (*TesseraEnsureFn) (void *arg, const char *p, Size len);

extern void TesseraDecodeChunkRaw(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
								  const char *raw, int nrows, Datum *values, bool *isnull,
								  TesseraCorruptFn corrupt, void *arg);
#ifdef HAVE_INT128
extern bool TesseraChunkIntSum(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
							   const char *raw, int nrows, bool unpack, int128 *sum,
							   int64 *count, TesseraCorruptFn corrupt, void *arg);
#endif
extern bool TesseraChunkDictCodes(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
								  const char *raw, int nrows, int64 *codes, Datum **entries,
								  int *ndict, TesseraCorruptFn corrupt, void *arg);
extern const char *TesseraChunkRaw(const TesseraChunkDisk *chunk, const char *stored,
								   TesseraCorruptFn corrupt, void *arg);

/*
 * Somewhere decoded frames are kept (the shared cache): get copies frame
 * k's raw bytes (len, stored with checksum sum) to dst if it has them; put
 * offers a frame just decoded.
 */
typedef struct TesseraFrameSource
{
	bool		(*get) (void *arg, uint32 k, uint32 sum, uint32 len, char *dst);
	void		(*put) (void *arg, uint32 k, uint32 sum, uint32 len, const char *src);
	void	   *arg;
} TesseraFrameSource;

extern const char *TesseraChunkRawFrom(const TesseraChunkDisk *chunk, const char *stored,
									   const TesseraFrameSource *source,
									   TesseraCorruptFn corrupt, void *arg);
/*
 * Where each value of a chunk's variable-length section starts, built on
 * the first single-value read of the payload so that later ones are O(1).
 * It belongs to the payload: whoever frees one frees the other.
 */
typedef struct TesseraValueIndex
{
	MemoryContext cxt;			/* where its arrays live */
	int			n;
	uint32	   *offsets;		/* variable-length values of a plain section */
	void	   *delta_cps;		/* checkpoints of the delta-encoded integer section */
	uint32	   *rle_ends;		/* where each run of a run-length section ends */
	uint32		rle_hint;		/* ... the run the last read found */
	uint32	   *null_ranks;		/* non-NULL values before each 512-row block */
} TesseraValueIndex;

extern void TesseraFreeValueIndex(TesseraValueIndex *index);
extern bool TesseraEncodePacked(const TesseraColumnType *type, const Datum *vals, int n,
								TesseraBuf *out, TesseraEncodedChunk *chunk);
extern const char *TesseraDecodePacked(const TesseraColumnType *type, const char *p,
									   const char *end, int n, Datum *out);
extern bool TesseraPackedHeader(const char *p, const char *end, int n, const uint8 **sym,
								const uint32 **starts, const char **lens);
extern bool TesseraPackedValue(const TesseraColumnType *type, const uint8 *sym, int nsym,
							   const uint8 *src, uint32 len, char *dst);
extern Datum TesseraPackedDatum(const TesseraColumnType *type, const uint8 *sym, int nsym,
								const uint8 *src, uint32 len);
extern bool TesseraPackedAt(const TesseraColumnType *type, const char *p, const char *end, int n,
							int idx, Datum *out, TesseraEnsureFn ensure, void *arg,
							TesseraValueIndex *index);
extern bool TesseraDecodeValuesAt(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
								  const char *raw, int nrows, const int *rows, int m,
								  Datum *values, bool *isnull, TesseraValueIndex **index,
								  MemoryContext index_cxt);
extern Datum TesseraDecodeValue(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
								const char *raw, int nrows, int row, bool *isnull,
								TesseraCorruptFn corrupt, void *arg, TesseraValueIndex **index,
								MemoryContext index_cxt);

/* Min/max serialization into a stripe directory's stats area. */
/* chunk summaries (stats.c) */
extern void TesseraMinMaxDatums(const TesseraColumnType *type, const Datum *vals, int n,
								TesseraEncodedChunk *out);
extern void TesseraMinMaxInts(const TesseraColumnType *type, const Datum *vals,
							  const int64 *ints, int n, TesseraEncodedChunk *out);
extern bool TesseraStatSerialize(const TesseraColumnType *type, Datum value, TesseraBuf *out,
								 uint32 *off, uint32 *len);
extern Datum TesseraStatDeserialize(const TesseraColumnType *type, const char *data, uint32 len);

/* codecs (encoding/codec.c) */
extern Size TesseraCompress(int codec, int level, const char *src, Size srclen,
							TesseraBuf *dst);
extern bool TesseraCodecPays(int codec, Size raw_len, Size comp_len);
extern int	TesseraCompressIfPays(int codec, int level, const TesseraBuf *raw, TesseraBuf *out);
extern bool TesseraDecompress(int codec, const char *src, Size srclen, char *dst,
							  Size rawlen);
extern bool TesseraCodecAvailable(int codec);
extern int	TesseraCodecChoose(int codec, int level, const char *data, Size len);

/* integers (encoding/intcodec.c) */
typedef enum TesseraFilterResult
{
	TESSERA_FILTER_DONE,		/* sel updated */
	TESSERA_FILTER_CANNOT,		/* not for this encoding: decode and compare */
	TESSERA_FILTER_CORRUPT		/* the section is malformed */
} TesseraFilterResult;

extern void TesseraEncodeInts(const int64 *values, int n, TesseraBuf *out);
extern const char *TesseraDecodeInts(const char *p, const char *end, int n, int64 *out);
extern const char *TesseraSkipInts(const char *p, const char *end, int n);
extern bool TesseraIntsConstant(const char *p, const char *end, int n, int64 *value);
extern bool TesseraIntAt(const char *p, const char *end, int n, int idx, int64 *out);
extern Size TesseraIntPrepare(const char *p, const char *end, int n, int idx,
							  TesseraEnsureFn ensure, void *arg);
extern bool TesseraIntAtIndexed(const char *p, const char *end, int n, int idx, int64 *out,
								TesseraValueIndex *index);
extern bool TesseraGatherInts(const char *p, const char *end, int n, const int *rows, int m,
							  int64 *out, struct TesseraValueIndex *index);

#ifdef HAVE_INT128
extern void TesseraEncodeWide(const int128 *values, int n, TesseraBuf *out);
extern const char *TesseraDecodeWide(const char *p, const char *end, int n, int128 *out);
extern const char *TesseraDecodeWideBound(const char *p, const char *end, int n, int128 *out,
										  uint128 *absor);
extern const char *TesseraSkipWide(const char *p, const char *end, int n);
extern bool TesseraWideAt(const char *p, const char *end, int n, int idx, int128 *out);
extern Size TesseraWidePrepare(const char *p, const char *end, int n, int idx,
							   TesseraEnsureFn ensure, void *arg);
extern bool TesseraWideAtIndexed(const char *p, const char *end, int n, int idx, int128 *out,
								 TesseraValueIndex *index);
extern void TesseraSelectNone(bool *sel, int nsel, const int *idx, int nidx);
extern bool TesseraIntsSum(const char *p, const char *end, int n, int128 *sum);
extern bool TesseraIntsSumPacked(const char *p, const char *end, int n, int128 *sum);
extern TesseraFilterResult TesseraFilterInts(const char *p, const char *end, int n, int64 lo,
											 int64 hi, bool outside, bool *sel, int nsel,
											 const int *idx, int nidx);
#endif

/* numerics (encoding/decimal.c) */
extern bool TesseraEncodeDecimal(const Datum *values, int n, TesseraBuf *out,
								 int *min_idx, int *max_idx);
extern const char *TesseraDecodeDecimal(const char *p, const char *end, int n,
										Datum *out);
extern bool TesseraDecimalAt(const char *p, const char *end, int n, int idx, Datum *out,
							 TesseraValueIndex *index);
#ifdef HAVE_INT128
extern bool TesseraNumericScaled(Datum d, int128 *value, int *dscale);
extern void TesseraNumericsFromScaled(const int128 *values, const bool *isnull, int n,
									  int dscale, Datum *out);
extern bool TesseraDecimalMaxScale(const char *p, const char *end, int n, int *max_scale);
extern bool TesseraDecimalPrepare(const char *p, const char *end, int n, int idx,
								  TesseraEnsureFn ensure, void *arg);
extern TesseraFilterResult TesseraDecimalFilter(const char *p, const char *end, int n,
												int128 lo, int128 hi, bool outside, bool *sel,
												int nsel, const int *idx, int nidx);
extern bool TesseraDecimalScaledAt(const char *p, const char *end, int n, int idx,
								   int128 *value, int64 *dscale, TesseraValueIndex *index);
extern bool TesseraDecimalGather(const char *p, const char *end, int n, const int *rows, int m,
								 int128 *values, int64 *dscales, int *max_scale);
extern const char *TesseraDecodeDecimalScaled(const char *p, const char *end, int n,
											  int128 *scaled, int64 *scales, int *max_scale,
											  int64 *dsc_all, int *bits);
extern bool TesseraDecodeChunkScaled(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
									 const char *raw, int nrows, int128 *values, int64 *scales,
									 bool *isnull, int *max_scale, int64 *dsc_all, int *vbits,
									 TesseraCorruptFn corrupt, void *arg);
extern TesseraFilterResult TesseraChunkFilter(const TesseraColumnType *type,
											  const TesseraChunkDisk *chunk, const char *raw,
											  int nrows, int128 lo, int128 hi, bool outside,
											  bool *sel, int nsel, const int *idx, int nidx,
											  TesseraCorruptFn corrupt, void *arg);
extern bool TesseraChunkDecimalScale(const TesseraChunkDisk *chunk, const char *raw, int nrows,
									 int *max_scale, TesseraCorruptFn corrupt, void *arg);
extern bool TesseraChunkScaledGather(const TesseraChunkDisk *chunk, const char *raw, int nrows,
									 const int *rows, int m, int128 *values, int64 *dscales,
									 bool *isnull, int *max_scale, TesseraCorruptFn corrupt,
									 void *arg);
#endif

/* Bytes of padding the decoder may read past the end of a raw payload. */
#define TESSERA_DECODE_PADDING 16

/*
 * Framed chunks (frame.c): payloads of more than TESSERA_FRAME_MIN raw
 * bytes are cut into frames of TESSERA_FRAME_BYTES (TESSERA_FRAME_WIDE_BYTES
 * for text that compresses much better in larger pieces,
 * TESSERA_FRAME_RAW_BYTES when stored raw), compressed and checksummed one
 * by one; the offsets of
 * every TESSERA_FRAME_INDEX_EVERY-th value of a variable-length plain
 * stream are kept in the frame table.
 */
#define TESSERA_FRAME_BYTES			4096
#define TESSERA_FRAME_RAW_BYTES		1024
#define TESSERA_FRAME_WIDE_BYTES	16384
#define TESSERA_FRAME_MIN			(2 * TESSERA_FRAME_BYTES)
#define TESSERA_FRAME_INDEX_EVERY	32

typedef struct TesseraFrameTable
{
	TesseraFrameHeader hdr;
	Size		table_bytes;
	const uint32 *ends;
	const uint32 *sums;
	const uint32 *index;
} TesseraFrameTable;

/*
 * What a single-value read sees of a chunk's payload: complete, or, for a
 * framed chunk, filled frame by frame as TesseraViewEnsure is asked for
 * bytes (load puts at least the asked-for bytes of one frame in place,
 * and says whether it put the whole frame there).
 */
typedef struct TesseraChunkView
{
	const TesseraChunkDisk *chunk;
	char	   *raw;			/* raw_bytes + TESSERA_DECODE_PADDING */
	bool		framed;
	TesseraFrameTable ft;
	bool	   *have;			/* framed: which frames raw holds */
	/* framed: put frame k's raw bytes at dst */
	bool		(*load) (void *arg, uint32 k, char *frame, uint32 off, uint32 len);
	void	   *load_arg;
} TesseraChunkView;

extern int	TesseraFrameChunk(int codec, int level, const TesseraBuf *raw, uint32 index_every,
							  uint32 index_base, const uint32 *index, uint32 index_count,
							  TesseraBuf *out, uint32 *crc);
extern bool TesseraFrameTableRead(const TesseraChunkDisk *chunk, const char *stored, Size have,
								  TesseraFrameTable *ft);
extern uint32 TesseraFrameRawBytes(const TesseraChunkDisk *chunk, const TesseraFrameTable *ft,
								   uint32 k);
extern char *TesseraFramesDecode(const TesseraChunkDisk *chunk, const char *stored,
								 const TesseraFrameSource *source,
								 TesseraCorruptFn corrupt, void *arg);
extern void TesseraFrameDecode(const TesseraChunkDisk *chunk, const TesseraFrameTable *ft,
							   uint32 k, const char *src, Size len, char *dst,
							   TesseraCorruptFn corrupt, void *arg);
extern void TesseraViewInit(TesseraChunkView *v, const TesseraChunkDisk *chunk,
							const TesseraFrameTable *ft, char *raw, bool *have,
							bool (*load) (void *arg, uint32 k, char *frame, uint32 off,
										  uint32 len), void *load_arg);
extern void TesseraViewInitRaw(TesseraChunkView *v, const TesseraChunkDisk *chunk,
							   const char *raw);
extern void TesseraViewEnsure(void *arg, const char *p, Size len);
extern uint32 TesseraChunkStoredChecksum(uint32 dir_version, const TesseraChunkDisk *chunk,
										 const char *stored);
extern Datum TesseraDecodeValueView(const TesseraColumnType *type, TesseraChunkView *v,
									int nrows, int row, bool *isnull, TesseraCorruptFn corrupt,
									void *arg, TesseraValueIndex **index, MemoryContext index_cxt);

#endif							/* TESSERA_ENCODING_H */
