/*-------------------------------------------------------------------------
 *
 * codec.c
 *	  General-purpose compression of chunk payloads: zstd, lz4, pglz.
 *
 * NOTES
 *	  The compressor appends to a TesseraBuf and returns the compressed
 *	  size, or 0 when the codec cannot be applied; the caller then stores
 *	  the payload uncompressed.  Decompression must produce exactly the
 *	  recorded raw size, anything else is corruption.
 *
 *	  A codec is kept only when it pays for the time every scan spends
 *	  undoing it (TesseraCompressIfPays, the one place that decides): lz4
 *	  (several GB/s) when it saves 1/32 of the payload, zstd and pglz
 *	  (about 1 GB/s, slower than reading the raw bytes from memory or even
 *	  from disk) only when they save a quarter.  Otherwise the payload is
 *	  stored raw.
 *
 *	  The default setting, auto, picks per payload (TesseraCodecChoose):
 *	  lz4 where it halves a sample of it, else zstd where that is at most
 *	  three fifths of lz4's (random hex and digits, which lz4 cannot
 *	  entropy-code; bit-packed integers of a skewed spread), else lz4.
 *	  Reason: lz4 decodes 3-5x as fast as zstd, and on data it already
 *	  halves zstd saves a fifth at most; a scan of ClickBench's hits table
 *	  spent half its time in zstd (URL LIKE '%google%': 24 MB decompressed
 *	  per query).  Measured on that table (1M rows): all zstd 114 MB, all
 *	  lz4 132 MB; the 43 queries took 0.6-1.0x the time with lz4, 2.15 ->
 *	  2.00 s in all (TPC-H lineitem: 142 -> 175 MB, its queries unchanged).
 *	  Until 2026-11-30 zstd won where it saved a quarter over lz4: at 10M
 *	  rows that still chose zstd for 203 MB of hits' chunks (URL's and
 *	  Title's dictionaries, SearchPhrase, the *Timing integers: zstd 0.64-
 *	  0.76 of lz4), and the table with every chunk lz4 answered the 43
 *	  queries in 0.84x the time (geometric mean; sum 13.1 -> 11.8 s; URL
 *	  GROUP BY 0.6-0.7x) for 5% more bytes (1644 -> 1726 MB with its
 *	  index).  At three fifths, 79 MB of it goes lz4; hex text (md5
 *	  strings: zstd 0.52 of raw, lz4 none) stays zstd.
 *
 *	  zstd keeps one compression and one decompression context per backend
 *	  (allocated by libzstd with malloc, reused for every chunk).
 *
 * IDENTIFICATION
 *	  src/encoding/codec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/pg_lzcompress.h"
#include "utils/memutils.h"

#include <lz4.h>
#include <zstd.h>

#include "tessera/encoding.h"
#include "tessera/tessera.h"

/* what TesseraCodecChoose compresses to choose: a payload's first bytes */
#define CODEC_SAMPLE_BYTES	65536

/*
 * Is zstd's zs bytes worth its slower decoding against lz4's l4 (0: lz4
 * could not compress)?  Where it is at most three fifths (file header).
 */
static inline bool
zstd_beats_lz4(Size zs, Size l4)
{
	return l4 == 0 || zs * 5 <= l4 * 3;
}

static ZSTD_CCtx *zstd_cctx = NULL;
static ZSTD_DCtx *zstd_dctx = NULL;

bool
TesseraCodecAvailable(int codec)
{
	return codec >= TESSERA_CODEC_NONE && codec <= TESSERA_CODEC_ZSTD;
}

/*
 * TesseraCodecChoose
 *		The codec to compress a payload of len bytes at data with: codec
 *		itself, or for TESSERA_CODEC_AUTO the one its first 64 KB favour
 *		(see the file header).  The caller still keeps it only if it pays.
 */
int
TesseraCodecChoose(int codec, int level, const char *data, Size len)
{
	Size		sample = Min(len, (Size) CODEC_SAMPLE_BYTES);
	TesseraBuf	probe;
	Size		l4,
				zs;

	if (codec != TESSERA_CODEC_AUTO)
		return codec;
	if (sample < 64)
		return TESSERA_CODEC_LZ4;
	TesseraBufInit(&probe, ZSTD_compressBound(sample) + 64);
	l4 = TesseraCompress(TESSERA_CODEC_LZ4, 0, data, sample, &probe);
	if (l4 > 0 && l4 <= sample / 2)
	{
		TesseraBufFree(&probe);
		return TESSERA_CODEC_LZ4;
	}
	probe.len = 0;
	zs = TesseraCompress(TESSERA_CODEC_ZSTD, level, data, sample, &probe);
	TesseraBufFree(&probe);
	if (zs > 0 && TesseraCodecPays(TESSERA_CODEC_ZSTD, sample, zs) &&
		zstd_beats_lz4(zs, l4))
		return TESSERA_CODEC_ZSTD;
	return TESSERA_CODEC_LZ4;
}

/*
 * TesseraCompressIfPays for `auto` where the sample TesseraCodecChoose
 * compresses is the whole payload: the same choice, its compressions
 * kept rather than made again (a payload of 64 KB or less -- most chunks
 * of a row group -- was compressed twice, three times where zstd won;
 * a tenth of a COPY of ClickBench's hits table).
 */
static int
compress_auto_whole(int level, const TesseraBuf *raw, TesseraBuf *out)
{
	TesseraBuf	zbuf;
	Size		l4,
				zs;

	TesseraBufInit(out, raw->len / 2 + 64);
	l4 = TesseraCompress(TESSERA_CODEC_LZ4, 0, raw->data, raw->len, out);
	if (l4 > 0 && l4 <= raw->len / 2)
		return TESSERA_CODEC_LZ4;
	TesseraBufInit(&zbuf, raw->len / 2 + 64);
	zs = TesseraCompress(TESSERA_CODEC_ZSTD, level, raw->data, raw->len, &zbuf);
	if (zs > 0 && TesseraCodecPays(TESSERA_CODEC_ZSTD, raw->len, zs) &&
		zstd_beats_lz4(zs, l4))
	{
		TesseraBufFree(out);
		*out = zbuf;
		return TESSERA_CODEC_ZSTD;
	}
	TesseraBufFree(&zbuf);
	if (TesseraCodecPays(TESSERA_CODEC_LZ4, raw->len, l4))
		return TESSERA_CODEC_LZ4;
	TesseraBufFree(out);
	return TESSERA_CODEC_NONE;
}

/* The codec must save 1/this of a payload to be kept (see the file header). */
static inline Size
codec_min_saving(int codec)
{
	return codec == TESSERA_CODEC_LZ4 ? 32 : 4;
}

/* Does compressing raw_len bytes into comp_len pay for the codec? */
bool
TesseraCodecPays(int codec, Size raw_len, Size comp_len)
{
	return codec != TESSERA_CODEC_NONE && comp_len > 0 &&
		comp_len <= raw_len - raw_len / codec_min_saving(codec);
}

/*
 * TesseraCompressIfPays
 *		Compress raw into a new buffer *out if the codec pays for itself.
 *		Returns the codec applied; TESSERA_CODEC_NONE leaves *out unset and
 *		raw is to be stored as it is.
 */
int
TesseraCompressIfPays(int codec, int level, const TesseraBuf *raw, TesseraBuf *out)
{
	Size		n;

	if (codec == TESSERA_CODEC_NONE || raw->len < 64)
		return TESSERA_CODEC_NONE;
	if (codec == TESSERA_CODEC_AUTO && raw->len <= CODEC_SAMPLE_BYTES)
		return compress_auto_whole(level, raw, out);
	codec = TesseraCodecChoose(codec, level, raw->data, raw->len);
	TesseraBufInit(out, raw->len / 2 + 64);
	n = TesseraCompress(codec, level, raw->data, raw->len, out);
	if (TesseraCodecPays(codec, raw->len, n))
		return codec;
	TesseraBufFree(out);
	return TESSERA_CODEC_NONE;
}

Size
TesseraCompress(int codec, int level, const char *src, Size srclen, TesseraBuf *dst)
{
	switch (codec)
	{
		case TESSERA_CODEC_ZSTD:
			{
				Size		bound = ZSTD_compressBound(srclen);
				size_t		n;

				if (zstd_cctx == NULL)
				{
					zstd_cctx = ZSTD_createCCtx();
					if (zstd_cctx == NULL)
						ereport(ERROR,
								(errcode(ERRCODE_OUT_OF_MEMORY),
								 errmsg("out of memory creating a zstd compression context")));
				}
				TesseraBufReserve(dst, bound);
				n = ZSTD_compressCCtx(zstd_cctx, dst->data + dst->len, bound,
									  src, srclen, level);
				if (ZSTD_isError(n))
					return 0;
				dst->len += n;
				return n;
			}
		case TESSERA_CODEC_LZ4:
			{
				int			bound;
				int			n;

				if (srclen > LZ4_MAX_INPUT_SIZE)
					return 0;
				bound = LZ4_compressBound((int) srclen);
				TesseraBufReserve(dst, bound);
				n = LZ4_compress_default(src, dst->data + dst->len, (int) srclen, bound);
				if (n <= 0)
					return 0;
				dst->len += n;
				return n;
			}
		case TESSERA_CODEC_PGLZ:
			{
				int32		n;

				if (srclen > PG_INT32_MAX / 2)
					return 0;
				TesseraBufReserve(dst, PGLZ_MAX_OUTPUT(srclen));
				n = pglz_compress(src, (int32) srclen, dst->data + dst->len,
								  PGLZ_strategy_always);
				if (n < 0)
					return 0;
				dst->len += n;
				return n;
			}
		default:
			return 0;
	}
}

bool
TesseraDecompress(int codec, const char *src, Size srclen, char *dst, Size rawlen)
{
	switch (codec)
	{
		case TESSERA_CODEC_NONE:
			if (srclen != rawlen)
				return false;
			memcpy(dst, src, srclen);
			return true;
		case TESSERA_CODEC_ZSTD:
			{
				size_t		n;

				if (zstd_dctx == NULL)
				{
					zstd_dctx = ZSTD_createDCtx();
					if (zstd_dctx == NULL)
						ereport(ERROR,
								(errcode(ERRCODE_OUT_OF_MEMORY),
								 errmsg("out of memory creating a zstd decompression context")));
				}
				n = ZSTD_decompressDCtx(zstd_dctx, dst, rawlen, src, srclen);
				return !ZSTD_isError(n) && n == rawlen;
			}
		case TESSERA_CODEC_LZ4:
			if (srclen > LZ4_MAX_INPUT_SIZE || rawlen > PG_INT32_MAX)
				return false;
			return LZ4_decompress_safe(src, dst, (int) srclen, (int) rawlen) == (int) rawlen;
		case TESSERA_CODEC_PGLZ:
			if (srclen > PG_INT32_MAX || rawlen > PG_INT32_MAX)
				return false;
			return pglz_decompress(src, (int32) srclen, dst, (int32) rawlen, true) == (int32) rawlen;
		default:
			return false;
	}
}

/* ---- TesseraBuf ---- */

void
TesseraBufInit(TesseraBuf *buf, Size cap)
{
	buf->cap = Max(cap, 64);
	buf->data = MemoryContextAllocHuge(CurrentMemoryContext, buf->cap);
	buf->len = 0;
}

void
TesseraBufReserve(TesseraBuf *buf, Size extra)
{
	Size		need = buf->len + extra;
	Size		cap = buf->cap;

	if (need <= cap)
		return;
	if (need >= MaxAllocHugeSize / 2)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tessera chunk buffer would exceed %zu bytes", (Size) MaxAllocHugeSize / 2)));
	while (cap < need)
		cap *= 2;
	buf->data = repalloc_huge(buf->data, cap);
	buf->cap = cap;
}

void
TesseraBufAppend(TesseraBuf *buf, const void *data, Size len)
{
	memcpy(TesseraBufAppendSpace(buf, len), data, len);
}

void
TesseraBufAlign(TesseraBuf *buf)
{
	Size		pad = MAXALIGN(buf->len) - buf->len;

	if (pad > 0)
		memset(TesseraBufAppendSpace(buf, pad), 0, pad);
}

void
TesseraBufFree(TesseraBuf *buf)
{
	if (buf->data)
		pfree(buf->data);
	buf->data = NULL;
	buf->len = buf->cap = 0;
}
