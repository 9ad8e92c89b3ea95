/*-------------------------------------------------------------------------
 *
 * packed.c
 *	  The PACKED encoding: strings of at most 16 distinct bytes, 4 bits a
 *	  character, each value found and decoded without the others.
 *
 * NOTES
 *	  PACKED: variable-length values whose bytes, over the whole chunk, are
 *	  drawn from at most 16 distinct bytes -- hex digests and ids, digit
 *	  strings, phone numbers, codes.  Each byte is a 4-bit code into the
 *	  chunk's symbol table, two to a byte (the first in the low half), each
 *	  value starting on a byte of its own (an odd-length value leaves half a
 *	  byte; repeated values stay the same bytes for the codec that follows).
 *	  md5 text takes 16 bytes a value packed, as zstd makes of it, but zstd
 *	  decodes a whole 4 KB frame (2.7 us) for the one value a point read
 *	  wants, and a scan's expansion runs several times zstd's speed.
 *
 *		uint32 nsym, uint8 symbols[16]		sorted; padded to MAXALIGN
 *		uint32 starts[ceil(n / 16)]			byte offset of every 16th value
 *		integer section of the n lengths
 *		uint32 nbytes, then the packed bytes, padded to MAXALIGN
 *
 * IDENTIFICATION
 *	  src/encoding/packed.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "tessera/encoding.h"

#define PACKED_MIN_VALUES	8

/* A value's bytes (a varlena of the column, never toasted here). */
static inline void
packed_value_bytes(Datum d, const char **ptr, uint32 *len)
{
	if (VARATT_IS_EXTERNAL(DatumGetPointer(d)) || VARATT_IS_COMPRESSED(DatumGetPointer(d)))
		elog(ERROR, "tessera cannot encode a toasted value");
	*ptr = VARDATA_ANY(DatumGetPointer(d));
	*len = VARSIZE_ANY_EXHDR(DatumGetPointer(d));
}

#define PACKED_SYMBOLS		16
#define PACKED_HEADER		MAXALIGN(sizeof(uint32) + PACKED_SYMBOLS)
#define PACKED_START_EVERY	16

static inline Size
packed_starts_bytes(int n)
{
	return MAXALIGN(sizeof(uint32) * (Size) ((n + PACKED_START_EVERY - 1) / PACKED_START_EVERY));
}

/*
 * TesseraEncodePacked
 *		Try the PACKED encoding: true, with the section appended, if every
 *		byte of every value is one of at most 16 and the values average at
 *		least four bytes (shorter ones save little over PLAIN's one-byte
 *		headers).  Only where a dictionary did not pay (chunk.c).
 */
bool
TesseraEncodePacked(const TesseraColumnType *type, const Datum *vals, int n, TesseraBuf *out,
					TesseraEncodedChunk *chunk)
{
	uint8		code[256];
	uint8		sym[PACKED_SYMBOLS];
	int			nsym = 0;
	uint64		chars = 0;
	uint64		nbytes = 0;
	int64	   *lens;
	uint32	   *starts;
	uint32		nb32;
	uint8	   *dst;
	Size		pos;
	int			k;

	if (type->kind != TESSERA_KIND_VARLENA || n < PACKED_MIN_VALUES)
		return false;
	memset(code, 0xFF, sizeof(code));
	for (int i = 0; i < n; i++)
	{
		const char *s;
		uint32		len;

		packed_value_bytes(vals[i], &s, &len);
		for (uint32 b = 0; b < len; b++)
		{
			uint8		c = (uint8) s[b];

			if (likely(code[c] != 0xFF))
				continue;
			if (nsym == PACKED_SYMBOLS)
				return false;
			code[c] = 0;
			sym[nsym++] = c;
		}
		chars += len;
		nbytes += (len + 1) / 2;
	}
	if (nsym == 0 || chars < 4 * (uint64) n || nbytes > PG_UINT32_MAX)
		return false;

	/* codes in byte order: insertion sort of at most 16 */
	for (int i = 1; i < nsym; i++)
		for (int j = i; j > 0 && sym[j - 1] > sym[j]; j--)
		{
			uint8		t = sym[j];

			sym[j] = sym[j - 1];
			sym[j - 1] = t;
		}
	memset(code, 0, sizeof(code));
	for (int i = 0; i < nsym; i++)
		code[sym[i]] = (uint8) i;

	pos = out->len;
	memset(TesseraBufAppendSpace(out, PACKED_HEADER), 0, PACKED_HEADER);
	memcpy(out->data + pos, &nsym, sizeof(uint32));
	memcpy(out->data + pos + sizeof(uint32), sym, nsym);

	lens = palloc(sizeof(int64) * n);
	pos = out->len;
	memset(TesseraBufAppendSpace(out, packed_starts_bytes(n)), 0, packed_starts_bytes(n));
	starts = (uint32 *) (out->data + pos);
	nbytes = 0;
	for (int i = 0; i < n; i++)
	{
		const char *s;
		uint32		len;

		packed_value_bytes(vals[i], &s, &len);
		if (i % PACKED_START_EVERY == 0)
			starts[i / PACKED_START_EVERY] = (uint32) nbytes;
		lens[i] = len;
		nbytes += (len + 1) / 2;
	}
	TesseraEncodeInts(lens, n, out);
	pfree(lens);

	nb32 = (uint32) nbytes;
	TesseraBufAppend(out, (const char *) &nb32, sizeof(uint32));
	TesseraBufAlign(out);
	dst = (uint8 *) TesseraBufAppendSpace(out, nbytes);
	k = 0;
	for (int i = 0; i < n; i++)
	{
		const char *s;
		uint32		len;
		uint32		b;

		packed_value_bytes(vals[i], &s, &len);
		for (b = 0; b + 1 < len; b += 2)
			dst[k++] = code[(uint8) s[b]] | (code[(uint8) s[b + 1]] << 4);
		if (b < len)
			dst[k++] = code[(uint8) s[b]];
	}
	Assert((uint64) k == nbytes);
	TesseraBufAlign(out);
	TesseraMinMaxDatums(type, vals, n, chunk);
	return true;
}

/*
 * The parts of a PACKED section at p: its symbol count and symbols, the
 * starts, the lengths' section.  False if the header is malformed or
 * overruns end.
 */
bool
TesseraPackedHeader(const char *p, const char *end, int n, const uint8 **sym,
					const uint32 **starts, const char **lens)
{
	uint32		nsym;

	if (n <= 0 || end - p < (ptrdiff_t) (PACKED_HEADER + packed_starts_bytes(n)))
		return false;
	memcpy(&nsym, p, sizeof(uint32));
	if (nsym == 0 || nsym > PACKED_SYMBOLS)
		return false;
	*sym = (const uint8 *) p + sizeof(uint32);
	*starts = (const uint32 *) (p + PACKED_HEADER);
	*lens = p + PACKED_HEADER + packed_starts_bytes(n);
	return true;
}

/* Bytes a value of len characters takes as a Datum of the column's type. */
static inline Size
packed_datum_bytes(const TesseraColumnType *type, uint32 len)
{
	if (type->packable && len + VARHDRSZ_SHORT <= VARATT_SHORT_MAX)
		return len + VARHDRSZ_SHORT;
	return len + VARHDRSZ;
}

/*
 * TesseraPackedValue
 *		Write the value of len characters whose packed bytes are at src into
 *		dst (packed_datum_bytes of room, maxaligned for a 4-byte header):
 *		a varlena of the column's type.  False if a code is not one of the
 *		nsym symbols.
 */
bool
TesseraPackedValue(const TesseraColumnType *type, const uint8 *sym, int nsym,
				   const uint8 *src, uint32 len, char *dst)
{
	char	   *d;
	uint8		bad = 0;
	uint32		b;

	if (type->packable && len + VARHDRSZ_SHORT <= VARATT_SHORT_MAX)
	{
		SET_VARSIZE_SHORT(dst, len + VARHDRSZ_SHORT);
		d = dst + VARHDRSZ_SHORT;
	}
	else
	{
		SET_VARSIZE(dst, len + VARHDRSZ);
		d = dst + VARHDRSZ;
	}
	for (b = 0; b + 1 < len; b += 2)
	{
		uint8		c = src[b / 2];

		bad |= (uint8) ((c & 15) >= nsym) | (uint8) ((c >> 4) >= nsym);
		d[b] = (char) sym[c & 15];
		d[b + 1] = (char) sym[c >> 4];
	}
	if (b < len)
	{
		uint8		c = src[b / 2];

		bad |= (uint8) ((c & 15) >= nsym) | (uint8) (c >> 4 != 0);
		d[b] = (char) sym[c & 15];
	}
	return bad == 0;
}

/* The palloc'd Datum of a value (TesseraPackedValue), or 0 if malformed. */
Datum
TesseraPackedDatum(const TesseraColumnType *type, const uint8 *sym, int nsym,
				   const uint8 *src, uint32 len)
{
	char	   *d = palloc(packed_datum_bytes(type, len));

	if (!TesseraPackedValue(type, sym, nsym, src, len, d))
	{
		pfree(d);
		return (Datum) 0;
	}
	return PointerGetDatum(d);
}

/*
 * TesseraPackedAt
 *		Value idx of the PACKED section at p (n values), palloc'd: the
 *		lengths from the last recorded start to it summed, its bytes
 *		decoded.  With ensure (a framed chunk's view), each byte read is
 *		made present first.  With index (the payload's value index), the
 *		lengths are read through its checkpoints: lengths stored as deltas
 *		are otherwise summed from the chunk's first.  False if the section
 *		is malformed.
 */
bool
TesseraPackedAt(const TesseraColumnType *type, const char *p, const char *end, int n, int idx,
				Datum *out, TesseraEnsureFn ensure, void *arg, TesseraValueIndex *index)
{
	const uint8 *sym;
	const uint32 *starts;
	const char *lp;
	const char *q;
	const uint8 *bytes;
	uint32		nsym;
	uint32		nbytes;
	uint64		start;
	uint32		s32;
	int64		len = 0;
	int			k = idx / PACKED_START_EVERY;

	if (type->kind != TESSERA_KIND_VARLENA || idx < 0 || idx >= n)
		return false;
	if (ensure)
		ensure(arg, p, PACKED_HEADER);
	if (!TesseraPackedHeader(p, end, n, &sym, &starts, &lp))
		return false;
	memcpy(&nsym, p, sizeof(uint32));
	if (ensure)
	{
		ensure(arg, (const char *) &starts[k], sizeof(uint32));
		if (TesseraIntPrepare(lp, end, n, 0, ensure, arg) == 0)
			return false;
	}
	memcpy(&s32, &starts[k], sizeof(uint32));
	start = s32;
	if (TesseraIntsConstant(lp, end, n, &len))
	{
		if (len < 0 || len > (int64) MaxAllocSize)
			return false;
		start += (uint64) (idx - k * PACKED_START_EVERY) * (((uint64) len + 1) / 2);
	}
	else
	{
		for (int i = k * PACKED_START_EVERY; i <= idx; i++)
		{
			if (ensure && TesseraIntPrepare(lp, end, n, i, ensure, arg) == 0)
				return false;
			if (!TesseraIntAtIndexed(lp, end, n, i, &len, index) || len < 0 ||
				len > (int64) MaxAllocSize)
				return false;
			if (i < idx)
				start += ((uint64) len + 1) / 2;
		}
	}
	q = TesseraSkipInts(lp, end, n);
	if (q == NULL || end - q < (ptrdiff_t) MAXALIGN(sizeof(uint32)))
		return false;
	if (ensure)
		ensure(arg, q, sizeof(uint32));
	memcpy(&nbytes, q, sizeof(uint32));
	bytes = (const uint8 *) q + MAXALIGN(sizeof(uint32));
	if ((Size) (end - (const char *) bytes) < nbytes ||
		start + ((uint64) len + 1) / 2 > nbytes)
		return false;
	if (ensure)
		ensure(arg, (const char *) bytes + start, ((Size) len + 1) / 2);
	*out = TesseraPackedDatum(type, sym, (int) nsym, bytes + start, (uint32) len);
	return *out != (Datum) 0;
}

/*
 * A scan's expansion of a chunk's values: two characters per packed byte
 * from a table of all 256 bytes, and with SSSE3 32 characters at a time
 * (a nibble's character is one byte shuffle of the symbol table).  One
 * character a step took three times zstd's time to decode md5 text.
 */
typedef struct PackedTables
{
	uint16		pairs[256];		/* the two characters of each byte */
	bool		valid[256];		/* are both of its codes symbols? */
	uint8		sym[PACKED_SYMBOLS];
	int			nsym;
} PackedTables;

static void
packed_tables(PackedTables *t, const uint8 *sym, int nsym)
{
	memset(t->sym, 0, sizeof(t->sym));
	memcpy(t->sym, sym, nsym);
	t->nsym = nsym;
	for (int b = 0; b < 256; b++)
	{
		uint8		pair[2] = {t->sym[b & 15], t->sym[b >> 4]};

		memcpy(&t->pairs[b], pair, 2);
		t->valid[b] = (b & 15) < nsym && (b >> 4) < nsym;
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <tmmintrin.h>

/* nbytes (a multiple of 16) packed bytes at src into twice as many characters at dst */
__attribute__((target("ssse3")))
static bool
packed_expand_ssse3(const PackedTables *t, const uint8 *src, uint32 nbytes, char *dst)
{
	__m128i		table = _mm_loadu_si128((const __m128i *) t->sym);
	__m128i		low = _mm_set1_epi8(15);
	__m128i		last = _mm_set1_epi8((char) (t->nsym - 1));
	__m128i		bad = _mm_setzero_si128();

	for (uint32 i = 0; i < nbytes; i += 16)
	{
		__m128i		x = _mm_loadu_si128((const __m128i *) (src + i));
		__m128i		lo = _mm_and_si128(x, low);
		__m128i		hi = _mm_and_si128(_mm_srli_epi16(x, 4), low);
		__m128i		clo = _mm_shuffle_epi8(table, lo);
		__m128i		chi = _mm_shuffle_epi8(table, hi);

		bad = _mm_or_si128(bad, _mm_or_si128(_mm_cmpgt_epi8(lo, last), _mm_cmpgt_epi8(hi, last)));
		_mm_storeu_si128((__m128i *) (dst + 2 * i), _mm_unpacklo_epi8(clo, chi));
		_mm_storeu_si128((__m128i *) (dst + 2 * i + 16), _mm_unpackhi_epi8(clo, chi));
	}
	return _mm_movemask_epi8(bad) == 0;
}

static int	have_ssse3 = -1;
#endif

/* TesseraPackedValue's characters through the tables; false if a code is not a symbol. */
static bool
packed_expand(const PackedTables *t, const uint8 *src, uint32 len, char *d)
{
	uint32		b = 0;
	bool		ok = true;

#if defined(__x86_64__) && defined(__GNUC__)
	if (len >= 32)
	{
		if (unlikely(have_ssse3 < 0))
			have_ssse3 = __builtin_cpu_supports("ssse3") ? 1 : 0;
		if (have_ssse3)
		{
			b = (len / 32) * 32;
			ok = packed_expand_ssse3(t, src, b / 2, d);
		}
	}
#endif
	for (; b + 1 < len; b += 2)
	{
		uint8		c = src[b / 2];

		ok &= t->valid[c];
		memcpy(d + b, &t->pairs[c], 2);
	}
	if (b < len)
	{
		uint8		c = src[b / 2];

		ok &= (c & 15) < t->nsym && (c >> 4) == 0;
		d[b] = (char) t->sym[c & 15];
	}
	return ok;
}

/*
 * TesseraDecodePacked
 *		Decode the PACKED section of n values at p into out, the values
 *		palloc'd in the current context.  Returns the start of the next
 *		section, or NULL if the section is malformed.
 */
const char *
TesseraDecodePacked(const TesseraColumnType *type, const char *p, const char *end, int n,
					Datum *out)
{
	const uint8 *sym;
	const uint32 *starts;
	const char *lp;
	int64	   *lens;
	uint32		nbytes;
	const uint8 *bytes;
	uint64		at = 0;
	Size		total = 0;
	char	   *buf;
	Size		off = 0;
	int			nsym;
	PackedTables tables;

	if (type->kind != TESSERA_KIND_VARLENA ||
		!TesseraPackedHeader(p, end, n, &sym, &starts, &lp))
		return NULL;
	memcpy(&nsym, p, sizeof(uint32));
	lens = palloc(sizeof(int64) * n);
	p = TesseraDecodeInts(lp, end, n, lens);
	if (p == NULL || end - p < (ptrdiff_t) MAXALIGN(sizeof(uint32)))
		return NULL;
	memcpy(&nbytes, p, sizeof(uint32));
	bytes = (const uint8 *) p + MAXALIGN(sizeof(uint32));
	if ((const char *) bytes > end || (Size) (end - (const char *) bytes) < nbytes)
		return NULL;

	/* the lengths agree with the starts and the bytes; room for the values */
	for (int i = 0; i < n; i++)
	{
		if (lens[i] < 0 || lens[i] > (int64) MaxAllocSize)
			return NULL;
		if (i % PACKED_START_EVERY == 0 && starts[i / PACKED_START_EVERY] != at)
			return NULL;
		at += ((uint64) lens[i] + 1) / 2;
		if (packed_datum_bytes(type, (uint32) lens[i]) != (Size) lens[i] + VARHDRSZ_SHORT)
			total = MAXALIGN(total);
		total += packed_datum_bytes(type, (uint32) lens[i]);
	}
	if (at != nbytes || total > MaxAllocHugeSize)
		return NULL;

	buf = MemoryContextAllocHuge(CurrentMemoryContext, Max(total, 1));
	packed_tables(&tables, sym, nsym);
	at = 0;
	for (int i = 0; i < n; i++)
	{
		uint32		len = (uint32) lens[i];
		char	   *d = buf + off;

		if (type->packable && len + VARHDRSZ_SHORT <= VARATT_SHORT_MAX)
		{
			SET_VARSIZE_SHORT(d, len + VARHDRSZ_SHORT);
			d += VARHDRSZ_SHORT;
		}
		else
		{
			off = MAXALIGN(off);
			d = buf + off;
			SET_VARSIZE(d, len + VARHDRSZ);
			d += VARHDRSZ;
		}
		if (!packed_expand(&tables, bytes + at, len, d))
			return NULL;
		out[i] = PointerGetDatum(buf + off);
		off += packed_datum_bytes(type, len);
		at += (len + 1) / 2;
	}
	pfree(lens);
	return (const char *) bytes + MAXALIGN(nbytes);
}
