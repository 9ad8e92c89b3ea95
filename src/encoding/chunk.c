/*-------------------------------------------------------------------------
 *
 * chunk.c
 *	  Encode one column of one row group into a chunk, and back.
 *
 * NOTES
 *	  The raw payload of a chunk is a sequence of MAXALIGN'd sections:
 *
 *		[null bitmap]	present only if some but not all values are NULL;
 *						bit set = value present, as in heap tuples
 *		values			the non-NULL values in row order, by encoding:
 *			INT			integer section (intcodec.c) of the values' bits
 *			DECIMAL		decimal section (decimal.c)
 *			PLAIN		uint32 byte count, then the values laid out as in a
 *						heap tuple: varlenas with a 1-byte header when they
 *						fit, else 4-byte header at the type's alignment;
 *						fixed-length values at a stride of their aligned
 *						length; cstrings NUL-terminated
 *			DICT		uint32 entry count, the distinct values as PLAIN,
 *						then an integer section of codes
 *
 *	  The codec (zstd, lz4, pglz) is applied to the whole raw payload only
 *	  when it pays for the time every scan spends undoing it (codec.c).
 *
 *	  Decoded by-reference values point into the raw payload, which the
 *	  caller keeps alive as long as it uses the Datums.  Every length and
 *	  offset read from disk is checked before use; a bad one is reported
 *	  through the caller's corruption callback, never trusted.
 *
 * IDENTIFICATION
 *	  src/encoding/chunk.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "tessera/encoding.h"
#include "tessera/tessera.h"

/* dictionary limits */
#define DICT_MAX_ENTRIES	65536
#define DICT_MIN_VALUES		8

typedef struct DictKey
{
	const char *ptr;
	uint32		len;
} DictKey;

typedef struct DictEntry
{
	DictKey		key;
	uint32		hash;
	uint32		code;
	char		status;
} DictEntry;

#define SH_PREFIX dict
#define SH_ELEMENT_TYPE DictEntry
#define SH_KEY_TYPE DictKey
#define SH_KEY key
#define SH_HASH_KEY(tb, k) hash_bytes((const unsigned char *) (k).ptr, (int) (k).len)
#define SH_EQUAL(tb, a, b) ((a).len == (b).len && memcmp((a).ptr, (b).ptr, (a).len) == 0)
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a) a->hash
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

void
TesseraColumnTypeInit(TesseraColumnType *type, Form_pg_attribute attr)
{
	Oid			base = getBaseType(attr->atttypid);

	memset(type, 0, sizeof(TesseraColumnType));
	type->typid = attr->atttypid;
	type->collation = attr->attcollation;
	type->typlen = attr->attlen;
	type->typbyval = attr->attbyval;
	type->typalign = attr->attalign;
	/* the type's storage, not the column's: it cannot change to or from plain */
	type->packable = (get_typstorage(attr->atttypid) != TYPSTORAGE_PLAIN);

	if (base == NUMERICOID)
		type->kind = TESSERA_KIND_NUMERIC;
	else if (attr->attbyval)
		type->kind = TESSERA_KIND_BYVAL;
	else if (attr->attlen > 0)
		type->kind = TESSERA_KIND_FIXED;
	else if (attr->attlen == -1)
		type->kind = TESSERA_KIND_VARLENA;
	else
		type->kind = TESSERA_KIND_CSTRING;

	switch (base)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case CASHOID:
		case BOOLOID:
			type->stats = attr->attbyval ? TESSERA_STATS_SIGNED : TESSERA_STATS_CMP;
			break;
		case FLOAT4OID:
			type->stats = TESSERA_STATS_FLOAT4;
			break;
		case FLOAT8OID:
			type->stats = attr->attbyval ? TESSERA_STATS_FLOAT8 : TESSERA_STATS_CMP;
			break;
		default:
			type->stats = TESSERA_STATS_CMP;
			break;
	}
	if (type->stats == TESSERA_STATS_CMP)
	{
		TypeCacheEntry *tc = lookup_type_cache(base, TYPECACHE_CMP_PROC_FINFO);

		if (OidIsValid(tc->cmp_proc))
			fmgr_info_copy(&type->cmp, &tc->cmp_proc_finfo, CurrentMemoryContext);
		else
			type->stats = TESSERA_STATS_NONE;
	}
}

/* ---- helpers ---- */

/* bytes a value takes in a PLAIN stream, without alignment padding */
static inline void
value_bytes(const TesseraColumnType *type, Datum d, const char **ptr, uint32 *len)
{
	if (type->typlen > 0)
	{
		*ptr = DatumGetPointer(d);
		*len = type->typlen;
	}
	else if (type->typlen == -1)
	{
		if (VARATT_IS_EXTERNAL(DatumGetPointer(d)) || VARATT_IS_COMPRESSED(DatumGetPointer(d)))
			elog(ERROR, "tessera cannot encode a toasted value");
		*ptr = VARDATA_ANY(DatumGetPointer(d));
		*len = VARSIZE_ANY_EXHDR(DatumGetPointer(d));
	}
	else
	{
		*ptr = DatumGetCString(d);
		*len = strlen(*ptr) + 1;
	}
}

/* Append n values as a PLAIN section. */
static void
encode_plain(const TesseraColumnType *type, const Datum *vals, int n, TesseraBuf *out)
{
	Size		hdr_pos = out->len;
	Size		start;
	uint32		nbytes;

	TesseraBufAppendSpace(out, sizeof(uint32));
	TesseraBufAlign(out);
	start = out->len;

	if (type->typlen > 0)
	{
		Size		stride = TesseraFixedStride(type);
		char	   *dst = TesseraBufAppendSpace(out, stride * n);

		memset(dst, 0, stride * n);
		for (int i = 0; i < n; i++)
			memcpy(dst + stride * i, DatumGetPointer(vals[i]), type->typlen);
	}
	else if (type->typlen == -1)
	{
		uint32		len32;

		for (int i = 0; i < n; i++)
		{
			const char *data;
			Size		len;

			value_bytes(type, vals[i], &data, &len32);
			len = len32;

			if (type->packable && len + VARHDRSZ_SHORT <= VARATT_SHORT_MAX)
			{
				char	   *dst = TesseraBufAppendSpace(out, len + VARHDRSZ_SHORT);

				SET_VARSIZE_SHORT(dst, len + VARHDRSZ_SHORT);
				memcpy(dst + VARHDRSZ_SHORT, data, len);
			}
			else
			{
				Size		rel = out->len - start;
				Size		pad = att_align_nominal(rel, type->typalign) - rel;
				char	   *dst;

				if (pad > 0)
					memset(TesseraBufAppendSpace(out, pad), 0, pad);
				dst = TesseraBufAppendSpace(out, len + VARHDRSZ);
				SET_VARSIZE(dst, len + VARHDRSZ);
				memcpy(dst + VARHDRSZ, data, len);
			}
		}
	}
	else
	{
		for (int i = 0; i < n; i++)
		{
			const char *s = DatumGetCString(vals[i]);

			TesseraBufAppend(out, s, strlen(s) + 1);
		}
	}
	if (out->len - start > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tessera chunk exceeds 4 GB")));
	nbytes = (uint32) (out->len - start);
	memcpy(out->data + hdr_pos, &nbytes, sizeof(uint32));
	TesseraBufAlign(out);
}

static const char *
decode_plain(const TesseraColumnType *type, const char *p, const char *end, int n, Datum *out)
{
	uint32		nbytes;
	const char *stream;

	if (end - p < (ptrdiff_t) sizeof(uint32))
		return NULL;
	memcpy(&nbytes, p, sizeof(uint32));
	stream = p + MAXALIGN(sizeof(uint32));
	if (stream > end || (Size) (end - stream) < nbytes)
		return NULL;

	if (type->typlen > 0)
	{
		Size		stride = TesseraFixedStride(type);

		if ((Size) n * stride != nbytes)
			return NULL;
		for (int i = 0; i < n; i++)
			out[i] = PointerGetDatum(stream + stride * i);
	}
	else if (type->typlen == -1)
	{
		Size		off = 0;

		for (int i = 0; i < n; i++)
		{
			const char *v;
			Size		len;

			/*
			 * Eight empty values at once: each a one-byte header of length
			 * one, 0x03, never aligned.  A web table's strings are mostly
			 * empty (ClickBench's SearchPhrase: 87%), and the walk from
			 * value to value was two fifths of `WHERE SearchPhrase <> ''`.
			 */
			if (type->packable)
			{
				while (i + 8 <= n && off + 8 <= nbytes)
				{
					uint64		w;
					int			k;

					memcpy(&w, stream + off, 8);
					w ^= UINT64CONST(0x0303030303030303);
					/* (the leading empty values: bytes that were 0x03) */
					k = w == 0 ? 8 : pg_rightmost_one_pos64(w) / 8;
					for (int j = 0; j < 8; j++)
						out[i + j] = PointerGetDatum(stream + off + j);
					i += k;
					off += k;
					if (k < 8)
						break;
				}
				if (i >= n)
					break;
			}
			if (off >= nbytes)
				return NULL;
			off = att_align_pointer(off, type->typalign, -1, stream + off);
			if (off >= nbytes)
				return NULL;
			v = stream + off;
			if (VARATT_IS_1B(v))
			{
				if (VARATT_IS_1B_E(v) || !type->packable)
					return NULL;
				len = VARSIZE_1B(v);
				if (len < VARHDRSZ_SHORT)
					return NULL;
			}
			else
			{
				if (off + VARHDRSZ > nbytes || !VARATT_IS_4B_U(v))
					return NULL;
				len = VARSIZE_4B(v);
				if (len < VARHDRSZ)
					return NULL;
			}
			if (off + len > nbytes)
				return NULL;
			out[i] = PointerGetDatum(v);
			off += len;
		}
		if (MAXALIGN(off) != MAXALIGN(nbytes))
			return NULL;
	}
	else
	{
		Size		off = 0;

		for (int i = 0; i < n; i++)
		{
			Size		len;

			if (off >= nbytes)
				return NULL;
			len = strnlen(stream + off, nbytes - off);
			if (off + len >= nbytes)
				return NULL;
			out[i] = PointerGetDatum(stream + off);
			off += len + 1;
		}
	}
	return stream + MAXALIGN(nbytes);
}

/* ---- dictionary ---- */

/*
 * Try a dictionary encoding.  Appends the section and returns true if it is
 * worth it: few enough distinct values and clearly smaller than PLAIN.
 */
static bool
try_dict(const TesseraColumnType *type, const Datum *vals, int n, TesseraBuf *out,
		 TesseraEncodedChunk *chunk)
{
	dict_hash  *ht;
	int64	   *codes;
	Datum	   *entries;
	uint32		ndict = 0;
	uint64		plain_bytes = 0;
	uint64		dict_bytes = 0;
	int			limit = Min(DICT_MAX_ENTRIES, n / 2 + 1);
	int			probe = n >= 1024 ? n / 8 : n;
	Size		hdr_pos;

	if (n < DICT_MIN_VALUES)
		return false;

	ht = dict_create(CurrentMemoryContext, 256, NULL);
	codes = palloc(sizeof(int64) * n);
	entries = palloc(sizeof(Datum) * (limit + 1));
	for (int i = 0; i < n; i++)
	{
		DictKey		key;
		DictEntry  *e;
		bool		found;

		/*
		 * An eighth of the way: values this distinct (most of them new)
		 * would fill the dictionary long before the end.  High-cardinality
		 * text (comments, hashes, URLs) gave up only after half the chunk.
		 */
		if (i == probe && (int64) ndict * 10 > (int64) i * 9)
		{
			dict_destroy(ht);
			pfree(codes);
			pfree(entries);
			return false;
		}
		value_bytes(type, vals[i], &key.ptr, &key.len);
		plain_bytes += key.len + 1;
		e = dict_insert(ht, key, &found);
		if (!found)
		{
			if (ndict >= (uint32) limit)
			{
				dict_destroy(ht);
				pfree(codes);
				pfree(entries);
				return false;
			}
			e->code = ndict;
			entries[ndict++] = vals[i];
			dict_bytes += key.len + 4;
		}
		codes[i] = e->code;
	}
	dict_destroy(ht);

	/* codes need about log2(ndict) bits each before the codec */
	if (dict_bytes + ((uint64) n * (pg_leftmost_one_pos32(Max(ndict, 2) - 1) + 1)) / 8 >=
		plain_bytes - plain_bytes / 8)
	{
		pfree(codes);
		pfree(entries);
		return false;
	}

	hdr_pos = out->len;
	TesseraBufAppendSpace(out, sizeof(uint32));
	memcpy(out->data + hdr_pos, &ndict, sizeof(uint32));
	TesseraBufAlign(out);
	encode_plain(type, entries, ndict, out);
	TesseraEncodeInts(codes, n, out);

	TesseraMinMaxDatums(type, entries, ndict, chunk);
	pfree(codes);
	pfree(entries);
	return true;
}

static const char *
decode_dict(const TesseraColumnType *type, const char *p, const char *end, int n, Datum *out)
{
	uint32		ndict;
	Datum	   *entries;
	int64	   *codes;

	if (end - p < (ptrdiff_t) sizeof(uint32))
		return NULL;
	memcpy(&ndict, p, sizeof(uint32));
	if (ndict == 0 || ndict > DICT_MAX_ENTRIES || ndict > (uint32) n)
		return NULL;
	p += MAXALIGN(sizeof(uint32));
	entries = palloc(sizeof(Datum) * ndict);
	p = decode_plain(type, p, end, ndict, entries);
	if (p == NULL)
		return NULL;
	codes = palloc(sizeof(int64) * n);
	p = TesseraDecodeInts(p, end, n, codes);
	if (p == NULL)
		return NULL;
	for (int i = 0; i < n; i++)
	{
		if ((uint64) codes[i] >= ndict)
			return NULL;
		out[i] = entries[codes[i]];
	}
	pfree(codes);
	pfree(entries);
	return p;
}

/*
 * The values section of a chunk's payload, past its null bitmap (*bits,
 * NULL if no value is NULL), after checking the value count.
 */
static const char *
values_section(const TesseraChunkDisk *chunk, const char *raw, int nrows, const uint8 **bits,
			   TesseraCorruptFn corrupt, void *arg)
{
	Size		nbytes = (nrows + 7) / 8;
	int			n = chunk->value_count;

	*bits = NULL;
	if (n == 0 || n > nrows)
		corrupt(arg, "invalid value count");
	if (n == nrows)
		return raw;
	if ((Size) chunk->raw_bytes < nbytes)
		corrupt(arg, "null bitmap truncated");
	*bits = (const uint8 *) raw;
	return raw + MAXALIGN(nbytes);
}

#ifdef HAVE_INT128
/*
 * TesseraChunkIntSum
 *		The sum and count of an integer chunk's values when its encoding
 *		gives them without decoding (TesseraIntsSum), or with unpack, from
 *		its packed values (TesseraIntsSumPacked); all NULL: 0 of 0.  False
 *		for chunks with some NULLs or another encoding.
 */
bool
TesseraChunkIntSum(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
				   const char *raw, int nrows, bool unpack, int128 *sum, int64 *count,
				   TesseraCorruptFn corrupt, void *arg)
{
	int			n = chunk->value_count;

	if (chunk->encoding == TESSERA_ENC_ABSENT)
	{
		*sum = 0;
		*count = 0;
		return true;
	}
	if (chunk->encoding != TESSERA_ENC_INT || type->kind != TESSERA_KIND_BYVAL ||
		type->typlen < 2 || n != nrows)
		return false;
	if (!(unpack ? TesseraIntsSumPacked(raw, raw + chunk->raw_bytes, n, sum) :
		  TesseraIntsSum(raw, raw + chunk->raw_bytes, n, sum)))
		return false;
	*count = n;
	return true;
}
#endif

/*
 * TesseraChunkDictCodes
 *		A dictionary chunk's entries (*entries, *ndict: Datums pointing into
 *		raw) and each row's code into them, -1 for NULL: grouping by the
 *		codes looks up each distinct value once instead of once per row.
 *		False if the chunk is not dictionary-encoded.
 */
bool
TesseraChunkDictCodes(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
					  const char *raw, int nrows, int64 *codes, Datum **entries, int *ndict,
					  TesseraCorruptFn corrupt, void *arg)
{
	const char *p;
	const char *end = raw + chunk->raw_bytes;
	const uint8 *bits;
	int			n = chunk->value_count;
	uint32		nd;

	if (chunk->encoding != TESSERA_ENC_DICT || type->kind == TESSERA_KIND_BYVAL)
		return false;
	p = values_section(chunk, raw, nrows, &bits, corrupt, arg);
	if (end - p < (ptrdiff_t) sizeof(uint32))
		corrupt(arg, "malformed values");
	memcpy(&nd, p, sizeof(uint32));
	if (nd == 0 || nd > DICT_MAX_ENTRIES || nd > (uint32) n)
		corrupt(arg, "malformed values");
	p += MAXALIGN(sizeof(uint32));
	*entries = palloc(sizeof(Datum) * nd);
	*ndict = (int) nd;
	p = decode_plain(type, p, end, nd, *entries);
	if (p == NULL || TesseraDecodeInts(p, end, n, codes) == NULL)
		corrupt(arg, "malformed values");
	for (int i = 0; i < n; i++)
		if ((uint64) codes[i] >= nd)
			corrupt(arg, "malformed values");
	if (bits != NULL)
	{
		int			j = n - 1;

		for (int i = nrows - 1; i >= 0; i--)
		{
			if (bits[i >> 3] & (1 << (i & 7)))
			{
				if (j < 0)
					corrupt(arg, "null bitmap does not match the value count");
				codes[i] = codes[j--];
			}
			else
				codes[i] = -1;
		}
		if (j != -1)
			corrupt(arg, "null bitmap does not match the value count");
	}
	return true;
}

/* ---- chunks ---- */

/*
 * The index a framed chunk keeps of its variable-length plain stream (the
 * values of a PLAIN chunk, the entries of a DICT chunk's dictionary): the
 * offset of every TESSERA_FRAME_INDEX_EVERY-th value from the stream's
 * start, so that a single value is found by reading at most that many
 * values' bytes.  Nothing for fixed-length values (their offset is
 * computed) or a stream of at most a frame.  at: where the section starts
 * in raw (after the null bitmap).
 */
static void
plain_stream_index(const TesseraColumnType *type, uint8 encoding, const TesseraBuf *raw, Size at,
				   int n, uint32 **index, uint32 *count, uint32 *base)
{
	Size		hdr = at;
	int			nvalues = n;
	uint32		nbytes;
	const char *stream;
	Size		off = 0,
				len;
	uint32	   *ix;

	if (type->typlen > 0 || (encoding != TESSERA_ENC_PLAIN && encoding != TESSERA_ENC_DICT))
		return;
	if (encoding == TESSERA_ENC_DICT)
	{
		uint32		ndict;

		memcpy(&ndict, raw->data + at, sizeof(uint32));
		nvalues = (int) ndict;
		hdr = at + MAXALIGN(sizeof(uint32));
	}
	memcpy(&nbytes, raw->data + hdr, sizeof(uint32));
	if (nbytes <= TESSERA_FRAME_BYTES || nvalues <= TESSERA_FRAME_INDEX_EVERY)
		return;
	stream = raw->data + hdr + MAXALIGN(sizeof(uint32));
	ix = palloc(sizeof(uint32) * ((nvalues + TESSERA_FRAME_INDEX_EVERY - 1) / TESSERA_FRAME_INDEX_EVERY));
	for (int i = 0; i < nvalues; i++)
	{
		if (!TesseraPlainValue(type, stream, nbytes, &off, &len))
			elog(ERROR, "tessera could not index the values it just encoded");
		if (i % TESSERA_FRAME_INDEX_EVERY == 0)
			ix[i / TESSERA_FRAME_INDEX_EVERY] = (uint32) off;
		off += len;
	}
	*index = ix;
	*count = (uint32) ((nvalues + TESSERA_FRAME_INDEX_EVERY - 1) / TESSERA_FRAME_INDEX_EVERY);
	*base = (uint32) (stream - raw->data);
}

/*
 * TesseraEncodeChunk
 *		Encode nrows values of one column.  Allocates out->stored in the
 *		current memory context; out->min/max may point into values.
 */
void
TesseraEncodeChunk(const TesseraColumnType *type, const Datum *values,
				   const bool *isnull, int nrows, int codec, int level,
				   TesseraEncodedChunk *out)
{
	TesseraBuf	raw;
	const Datum *vals = values;
	Datum	   *dense = NULL;
	int			n = 0;
	Size		estimate = 64;

	memset(out, 0, sizeof(TesseraEncodedChunk));
	for (int i = 0; i < nrows; i++)
		if (!isnull[i])
			n++;
	out->value_count = n;
	for (int i = 0; i < nrows; i++)
	{
		if (isnull[i])
			continue;
		if (type->typlen > 0)
			out->logical_bytes += type->typlen;
		else if (type->typlen == -1)
			out->logical_bytes += VARSIZE_ANY(DatumGetPointer(values[i]));
		else
			out->logical_bytes += strlen(DatumGetCString(values[i])) + 1;
	}
	if (n == 0)
	{
		out->encoding = TESSERA_ENC_ABSENT;
		out->codec = TESSERA_CODEC_NONE;
		TesseraBufInit(&out->stored, 0);
		return;
	}

	if (type->typlen > 0)
		estimate += (Size) n * (type->typlen + 1);
	else
		estimate += (Size) n * 16;
	TesseraBufInit(&raw, estimate);

	if (n < nrows)
	{
		Size		nbytes = (nrows + 7) / 8;
		uint8	   *bits = (uint8 *) TesseraBufAppendSpace(&raw, nbytes);

		memset(bits, 0, nbytes);
		dense = palloc(sizeof(Datum) * n);
		for (int i = 0, j = 0; i < nrows; i++)
		{
			if (!isnull[i])
			{
				bits[i >> 3] |= (1 << (i & 7));
				dense[j++] = values[i];
			}
		}
		TesseraBufAlign(&raw);
		vals = dense;
	}

	switch (type->kind)
	{
		case TESSERA_KIND_BYVAL:
			{
				int64	   *ints = palloc(sizeof(int64) * n);

				for (int i = 0; i < n; i++)
					ints[i] = TesseraByvalToInt(vals[i], type->typlen);
				TesseraEncodeInts(ints, n, &raw);
				out->encoding = TESSERA_ENC_INT;
				TesseraMinMaxInts(type, vals, ints, n, out);
				pfree(ints);
				break;
			}
		case TESSERA_KIND_NUMERIC:
			{
				int			imin,
							imax;

				if (TesseraEncodeDecimal(vals, n, &raw, &imin, &imax))
				{
					out->encoding = TESSERA_ENC_DECIMAL;
					out->has_stats = true;
					out->min = vals[imin];
					out->max = vals[imax];
					break;
				}
			}
			/* FALLTHROUGH */
		default:
			if (try_dict(type, vals, n, &raw, out))
				out->encoding = TESSERA_ENC_DICT;
			else if (TesseraEncodePacked(type, vals, n, &raw, out))
				out->encoding = TESSERA_ENC_PACKED;
			else
			{
				encode_plain(type, vals, n, &raw);
				out->encoding = TESSERA_ENC_PLAIN;
				TesseraMinMaxDatums(type, vals, n, out);
			}
			break;
	}

	if (raw.len > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tessera chunk of %zu bytes exceeds the 4 GB limit", raw.len)));
	out->raw_bytes = (uint32) raw.len;
	if (raw.len > TESSERA_FRAME_MIN)
	{
		uint32	   *index = NULL;
		uint32		index_count = 0;
		uint32		index_base = 0;

		plain_stream_index(type, out->encoding, &raw, n < nrows ? MAXALIGN((nrows + 7) / 8) : 0,
						   n, &index, &index_count, &index_base);
		out->codec = TesseraFrameChunk(codec, level, &raw, TESSERA_FRAME_INDEX_EVERY, index_base,
									   index, index_count, &out->stored, &out->crc);
		out->framed = true;
		TesseraBufFree(&raw);
		if (index)
			pfree(index);
	}
	else
	{
		out->codec = TesseraCompressIfPays(codec, level, &raw, &out->stored);
		if (out->codec == TESSERA_CODEC_NONE)
			out->stored = raw;
		else
			TesseraBufFree(&raw);
	}
	if (dense)
		pfree(dense);
}

/*
 * TesseraDecodeChunkRaw
 *		Decode a chunk's payload (TesseraChunkRaw of its stored bytes, which
 *		the caller checksummed; followed by TESSERA_DECODE_PADDING
 *		addressable bytes) into nrows values and null flags.  By-reference
 *		values point into the payload or memory of the current context.
 */
void
TesseraDecodeChunkRaw(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
					  const char *raw, int nrows, Datum *values, bool *isnull,
					  TesseraCorruptFn corrupt, void *arg)
{
	const char *p;
	const char *end;
	const uint8 *bits = NULL;
	int			n = chunk->value_count;

	if (chunk->encoding == TESSERA_ENC_ABSENT)
	{
		if (n != 0 || chunk->stored_bytes != 0)
			corrupt(arg, "absent chunk with values");
		memset(values, 0, sizeof(Datum) * nrows);
		memset(isnull, true, sizeof(bool) * nrows);
		return;
	}
	if (n == 0 || n > nrows)
		corrupt(arg, "invalid value count");
	p = raw;
	end = raw + chunk->raw_bytes;

	if (n < nrows)
	{
		Size		nbytes = (nrows + 7) / 8;
		int			count = 0;

		if ((Size) (end - p) < nbytes)
			corrupt(arg, "null bitmap truncated");
		bits = (const uint8 *) p;
		for (Size i = 0; i < nbytes; i++)
			count += pg_popcount32(bits[i]);
		/* bits past nrows must be clear */
		if (count != n || (nrows % 8 != 0 && (bits[nbytes - 1] >> (nrows % 8)) != 0))
			corrupt(arg, "null bitmap does not match the value count");
		p += MAXALIGN(nbytes);
	}

	switch (chunk->encoding)
	{
		case TESSERA_ENC_INT:
			if (type->kind != TESSERA_KIND_BYVAL)
				corrupt(arg, "integer encoding for a non-integer column");
			if (type->typlen == 1)
			{
				int64	   *ints = palloc(sizeof(int64) * n);

				p = TesseraDecodeInts(p, end, n, ints);
				if (p != NULL)
					for (int i = 0; i < n; i++)
						values[i] = TesseraIntToByval(ints[i], 1);
				pfree(ints);
			}
			else
			{
				/*
				 * For typlen 2, 4 and 8 a sign-extended int64 has the same
				 * bits as the Datum, so decode in place.
				 */
				StaticAssertStmt(sizeof(Datum) == sizeof(int64), "Datum must be 64 bits");
				p = TesseraDecodeInts(p, end, n, (int64 *) values);
			}
			break;
		case TESSERA_ENC_DECIMAL:
			if (type->kind != TESSERA_KIND_NUMERIC)
				corrupt(arg, "decimal encoding for a non-numeric column");
			p = TesseraDecodeDecimal(p, end, n, values);
			break;
		case TESSERA_ENC_PLAIN:
			if (type->kind == TESSERA_KIND_BYVAL)
				corrupt(arg, "plain encoding for a pass-by-value column");
			p = decode_plain(type, p, end, n, values);
			break;
		case TESSERA_ENC_DICT:
			if (type->kind == TESSERA_KIND_BYVAL)
				corrupt(arg, "dictionary encoding for a pass-by-value column");
			p = decode_dict(type, p, end, n, values);
			break;
		case TESSERA_ENC_PACKED:
			p = TesseraDecodePacked(type, p, end, n, values);
			break;
		default:
			corrupt(arg, "unknown encoding");
	}
	if (p == NULL)
		corrupt(arg, "malformed values");

	if (bits == NULL)
		memset(isnull, false, sizeof(bool) * nrows);
	else
	{
		int			j = n - 1;

		for (int i = nrows - 1; i >= 0; i--)
		{
			if (bits[i >> 3] & (1 << (i & 7)))
			{
				values[i] = values[j--];
				isnull[i] = false;
			}
			else
			{
				values[i] = (Datum) 0;
				isnull[i] = true;
			}
		}
	}
}

/*
 * TesseraChunkRaw
 *		The raw (decompressed) payload of a chunk, followed by
 *		TESSERA_DECODE_PADDING addressable bytes: stored itself when the
 *		chunk is not compressed, else palloc'd in the current context.
 */
const char *
TesseraChunkRaw(const TesseraChunkDisk *chunk, const char *stored,
				TesseraCorruptFn corrupt, void *arg)
{
	return TesseraChunkRawFrom(chunk, stored, NULL, corrupt, arg);
}

/*
 * TesseraChunkRawFrom
 *		TesseraChunkRaw, taking a framed chunk's compressed frames from
 *		source where it has them, and offering it those it decodes.
 */
const char *
TesseraChunkRawFrom(const TesseraChunkDisk *chunk, const char *stored,
					const TesseraFrameSource *source, TesseraCorruptFn corrupt, void *arg)
{
	char	   *buf;

	if (chunk->flags & TESSERA_CHUNK_FRAMED)
		return TesseraFramesDecode(chunk, stored, source, corrupt, arg);
	if (chunk->codec == TESSERA_CODEC_NONE)
	{
		if (chunk->raw_bytes != chunk->stored_bytes)
			corrupt(arg, "raw size differs from stored size");
		return stored;
	}
	buf = MemoryContextAllocHuge(CurrentMemoryContext,
								 (Size) chunk->raw_bytes + TESSERA_DECODE_PADDING);
	if (!TesseraDecompress(chunk->codec, stored, chunk->stored_bytes, buf, chunk->raw_bytes))
		corrupt(arg, "decompression failed");
	memset(buf + chunk->raw_bytes, 0, TESSERA_DECODE_PADDING);
	return buf;
}

#ifdef HAVE_INT128
/*
 * TesseraDecodeChunkScaled
 *		A numeric chunk as integers scaled to *max_scale plus each value's
 *		display scale, one per row (zero for NULLs) unless they all share
 *		*dsc_all (-1 if not), and a bound 2^*vbits on their magnitude.
 *		False if the chunk is not decimal-encoded; the caller then decodes
 *		numerics.
 */
bool
TesseraDecodeChunkScaled(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
						 const char *raw, int nrows, int128 *values, int64 *scales,
						 bool *isnull, int *max_scale, int64 *dsc_all, int *vbits,
						 TesseraCorruptFn corrupt, void *arg)
{
	const char *p;
	const char *end;
	const uint8 *bits = NULL;
	int			n = chunk->value_count;

	*max_scale = 0;
	if (chunk->encoding == TESSERA_ENC_ABSENT)
	{
		memset(values, 0, sizeof(int128) * nrows);
		memset(isnull, true, sizeof(bool) * nrows);
		*dsc_all = 0;
		*vbits = 0;
		return true;
	}
	if (chunk->encoding != TESSERA_ENC_DECIMAL || type->kind != TESSERA_KIND_NUMERIC)
		return false;
	if (n == 0 || n > nrows)
		corrupt(arg, "invalid value count");
	p = raw;
	end = raw + chunk->raw_bytes;
	if (n < nrows)
	{
		Size		nbytes = (nrows + 7) / 8;

		if ((Size) (end - p) < nbytes)
			corrupt(arg, "null bitmap truncated");
		bits = (const uint8 *) p;
		p += MAXALIGN(nbytes);
	}
	if (TesseraDecodeDecimalScaled(p, end, n, values, scales, max_scale, dsc_all,
								   vbits) == NULL)
		corrupt(arg, "malformed values");

	/* spread the n values over the rows, back to front, in place */
	if (bits != NULL)
	{
		int			j = n - 1;

		for (int i = nrows - 1; i >= 0; i--)
		{
			if (bits[i >> 3] & (1 << (i & 7)))
			{
				if (j < 0)
					corrupt(arg, "null bitmap does not match the value count");
				values[i] = values[j];
				if (*dsc_all < 0)
					scales[i] = scales[j];
				isnull[i] = false;
				j--;
			}
			else
			{
				values[i] = 0;
				if (*dsc_all < 0)
					scales[i] = 0;
				isnull[i] = true;
			}
		}
		if (j != -1)
			corrupt(arg, "null bitmap does not match the value count");
	}
	else
		memset(isnull, false, sizeof(bool) * nrows);
	return true;
}
#endif

#ifdef HAVE_INT128
/* TesseraChunkFilter over a values section of n values (no NULLs among them). */
static TesseraFilterResult
chunk_filter_values(uint8 encoding, const char *p, const char *end, int n, int128 lo, int128 hi,
					bool outside, bool *sel, int nsel, const int *idx, int nidx)
{
	if (encoding == TESSERA_ENC_DECIMAL)
		return TesseraDecimalFilter(p, end, n, lo, hi, outside, sel, nsel, idx, nidx);
	/* stored integers are int64s: clamp the bounds to that range */
	if (hi < PG_INT64_MIN || lo > PG_INT64_MAX || lo > hi)
		lo = 1, hi = 0;
	return TesseraFilterInts(p, end, n, (int64) Max(lo, (int128) PG_INT64_MIN),
							 (int64) Min(hi, (int128) PG_INT64_MAX), outside, sel, nsel,
							 idx, nidx);
}

/*
 * TesseraChunkFilter
 *		sel &= lo <= value <= hi (outside: it does not hold) over a chunk's
 *		payload (TesseraChunkRaw),
 *		compared without decoding it (TesseraFilterInts): integer chunks
 *		against their stored integers, the column's values; decimal chunks
 *		against their scaled integers, lo and hi at the chunk's scale
 *		(TesseraChunkDecimalScale).  NULLs never pass.  Rows 0..nsel-1, or
 *		those in idx[0..nidx).  TESSERA_FILTER_CANNOT when the encoding (or
 *		a row list over NULLs) needs the decoded column.
 */
TesseraFilterResult
TesseraChunkFilter(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
				   const char *raw, int nrows, int128 lo, int128 hi, bool outside, bool *sel,
				   int nsel, const int *idx, int nidx, TesseraCorruptFn corrupt, void *arg)
{
	const char *end = raw + chunk->raw_bytes;
	int			n = chunk->value_count;
	TesseraFilterResult res;

	if (chunk->encoding == TESSERA_ENC_ABSENT)
	{
		/* NULL everywhere */
		TesseraSelectNone(sel, nsel, idx, nidx);
		return TESSERA_FILTER_DONE;
	}
	if (n == 0 || n > nrows || nsel > nrows)
		corrupt(arg, "invalid value count");
	if ((chunk->encoding == TESSERA_ENC_INT &&
		 (type->kind != TESSERA_KIND_BYVAL || type->typlen < 2)) ||
		(chunk->encoding == TESSERA_ENC_DECIMAL && type->kind != TESSERA_KIND_NUMERIC) ||
		(chunk->encoding != TESSERA_ENC_INT && chunk->encoding != TESSERA_ENC_DECIMAL))
		return TESSERA_FILTER_CANNOT;
	if (n < nrows)
	{
		/*
		 * NULLs among the values: filter the n values, then walk the rows
		 * with the bitmap, a NULL row failing and a present one taking its
		 * value's result.  Listed rows would need each one's rank: decode.
		 */
		const uint8 *bits = (const uint8 *) raw;
		Size		nbytes = (nrows + 7) / 8;
		bool	   *dense;
		int			count = 0;

		if (idx != NULL)
			return TESSERA_FILTER_CANNOT;
		if ((Size) (end - raw) < nbytes)
			corrupt(arg, "null bitmap truncated");
		for (Size i = 0; i < nbytes; i++)
			count += pg_popcount32(bits[i]);
		if (count != n || (nrows % 8 != 0 && (bits[nbytes - 1] >> (nrows % 8)) != 0))
			corrupt(arg, "null bitmap does not match the value count");
		dense = palloc(n);
		memset(dense, true, n);
		res = chunk_filter_values(chunk->encoding, raw + MAXALIGN(nbytes), end, n, lo, hi,
								  outside, dense, n, NULL, 0);
		if (res == TESSERA_FILTER_DONE)
		{
			int			j = 0;

			for (int i = 0; i < nsel; i++)
			{
				bool		present = (bits[i >> 3] >> (i & 7)) & 1;

				sel[i] &= present && dense[j];
				j += present;
			}
		}
		pfree(dense);
	}
	else
		res = chunk_filter_values(chunk->encoding, raw, end, n, lo, hi, outside, sel, nsel,
								  idx, nidx);
	if (res == TESSERA_FILTER_CORRUPT)
		corrupt(arg, "malformed values");
	return res;
}

/*
 * TesseraChunkDecimalScale
 *		The scale a decimal chunk stores its values at; false if the chunk
 *		is not decimal-encoded.
 */
bool
TesseraChunkDecimalScale(const TesseraChunkDisk *chunk, const char *raw, int nrows,
						 int *max_scale, TesseraCorruptFn corrupt, void *arg)
{
	const char *p;
	const uint8 *bits;

	if (chunk->encoding != TESSERA_ENC_DECIMAL)
		return false;
	p = values_section(chunk, raw, nrows, &bits, corrupt, arg);
	if (!TesseraDecimalMaxScale(p, raw + chunk->raw_bytes, chunk->value_count, max_scale))
		corrupt(arg, "malformed values");
	return true;
}

#endif

#ifdef HAVE_INT128
/*
 * TesseraChunkScaledGather
 *		TesseraChunkScaledAt for rows[0..m).  False if the chunk is not
 *		decimal-encoded.
 */
bool
TesseraChunkScaledGather(const TesseraChunkDisk *chunk, const char *raw, int nrows,
						 const int *rows, int m, int128 *values, int64 *dscales, bool *isnull,
						 int *max_scale, TesseraCorruptFn corrupt, void *arg)
{
	int			n = chunk->value_count;

	*max_scale = 0;
	if (chunk->encoding == TESSERA_ENC_ABSENT)
	{
		memset(values, 0, sizeof(int128) * m);
		memset(dscales, 0, sizeof(int64) * m);
		memset(isnull, true, m);
		return true;
	}
	if (!TesseraChunkDecimalScale(chunk, raw, nrows, max_scale, corrupt, arg))
		return false;
	if (n < nrows)
	{
		/*
		 * NULLs among the values: gather the non-NULL rows by their rank
		 * among the values (counts of set bits before each byte), then
		 * spread them back over the rows, back to front.
		 */
		const uint8 *bits = (const uint8 *) raw;
		Size		nbytes = (nrows + 7) / 8;
		int		   *before = palloc(sizeof(int) * nbytes);
		int		   *ranks = palloc(sizeof(int) * Max(m, 1));
		int			k = 0,
					count = 0;

		if ((Size) chunk->raw_bytes < nbytes)
			corrupt(arg, "null bitmap truncated");
		for (Size i = 0; i < nbytes; i++)
		{
			before[i] = count;
			count += pg_popcount32(bits[i]);
		}
		for (int j = 0; j < m; j++)
		{
			int			row = rows[j];

			if (row < 0 || row >= nrows)
				corrupt(arg, "invalid row");
			isnull[j] = (bits[row >> 3] & (1 << (row & 7))) == 0;
			if (!isnull[j])
				ranks[k++] = before[row >> 3] +
					pg_popcount32(bits[row >> 3] & ((1 << (row & 7)) - 1));
		}
		if (!TesseraDecimalGather(raw + MAXALIGN(nbytes), raw + chunk->raw_bytes, n, ranks, k,
								  values, dscales, max_scale))
			corrupt(arg, "malformed values");
		for (int j = m - 1; j >= 0; j--)
		{
			if (isnull[j])
			{
				values[j] = 0;
				dscales[j] = 0;
			}
			else
			{
				k--;
				values[j] = values[k];
				dscales[j] = dscales[k];
			}
		}
		pfree(before);
		pfree(ranks);
		return true;
	}
	if (!TesseraDecimalGather(raw, raw + chunk->raw_bytes, n, rows, m, values, dscales,
							  max_scale))
		corrupt(arg, "malformed values");
	memset(isnull, false, m);
	return true;
}
#endif
