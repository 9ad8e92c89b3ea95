/*-------------------------------------------------------------------------
 *
 * access.c
 *	  Single values of a chunk: what index fetches and sparse batches read
 *	  instead of decoding whole chunks.
 *
 * NOTES
 *	  A value is found from the chunk's layout: its rank among the non-NULL
 *	  values from the null bitmap, then one unpack for frame-of-reference
 *	  integers and fixed-length values, a walk for deltas, runs and
 *	  variable-length values.  The walks are shortened by a value index
 *	  (TesseraValueIndex) built on a payload's first single-value read and
 *	  kept with it: offsets of variable-length values, running values of
 *	  delta sections, run ends, NULL ranks.
 *
 *	  A framed chunk (frame.c) is read through a view that holds only the
 *	  frames asked for: TesseraDecodeValueView makes present, frame by
 *	  frame, exactly the bytes it then reads -- bitmap, headers, packed
 *	  value, plain bytes -- and finds variable-length values through the
 *	  index the frame table keeps instead of building one.
 *
 * IDENTIFICATION
 *	  src/encoding/access.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupmacs.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "tessera/encoding.h"

/* Start of the variable-length value at stream + off, and its length; false if malformed. */
bool
TesseraPlainValue(const TesseraColumnType *type, const char *stream, Size nbytes, Size *off, Size *len)
{
	const char *v;

	if (*off >= nbytes)
		return false;
	if (type->typlen == -1)
	{
		*off = att_align_pointer(*off, type->typalign, -1, stream + *off);
		if (*off >= nbytes)
			return false;
		v = stream + *off;
		if (VARATT_IS_1B(v))
		{
			if (VARATT_IS_1B_E(v) || !type->packable)
				return false;
			*len = VARSIZE_1B(v);
		}
		else
		{
			if (*off + VARHDRSZ > nbytes || !VARATT_IS_4B_U(v))
				return false;
			*len = VARSIZE_4B(v);
		}
		if (*len < 1 || *off + *len > nbytes)
			return false;
	}
	else
	{
		v = stream + *off;
		*len = strnlen(v, nbytes - *off);
		if (*off + *len >= nbytes)
			return false;
		(*len)++;
	}
	return true;
}

/*
 * The header of a PLAIN section of n values at p: where its value stream
 * starts and how many bytes it has.  False if it overruns end, or if
 * fixed-size values do not fill it exactly.
 */
static bool
plain_header(const TesseraColumnType *type, const char *p, const char *end, int n,
			 const char **stream, uint32 *nbytes)
{
	if (end - p < (ptrdiff_t) sizeof(uint32))
		return false;
	memcpy(nbytes, p, sizeof(uint32));
	*stream = p + MAXALIGN(sizeof(uint32));
	if (*stream > end || (Size) (end - *stream) < *nbytes)
		return false;
	return type->typlen <= 0 || (Size) n * TesseraFixedStride(type) == *nbytes;
}

/*
 * Value idx of a PLAIN section (a pointer into it), or false if malformed.
 * With an index, variable-length values are found through their offsets,
 * recorded there on first use.
 */
static bool
plain_at(const TesseraColumnType *type, const char *p, const char *end, int n, int idx, Datum *out,
		 TesseraValueIndex *index)
{
	uint32		nbytes;
	const char *stream;
	Size		off = 0,
				len;

	if (idx < 0 || idx >= n || !plain_header(type, p, end, n, &stream, &nbytes))
		return false;
	if (type->typlen > 0)
	{
		*out = PointerGetDatum(stream + TesseraFixedStride(type) * idx);
		return true;
	}
	if (index != NULL)
	{
		if (index->offsets == NULL)
		{
			uint32	   *offsets = MemoryContextAlloc(index->cxt, sizeof(uint32) * n);

			for (int i = 0; i < n; i++)
			{
				if (!TesseraPlainValue(type, stream, nbytes, &off, &len))
				{
					pfree(offsets);
					return false;
				}
				offsets[i] = (uint32) off;
				off += len;
			}
			index->n = n;
			index->offsets = offsets;
		}
		if (index->n != n)
			return false;
		*out = PointerGetDatum(stream + index->offsets[idx]);
		return true;
	}
	for (int i = 0;; i++)
	{
		if (!TesseraPlainValue(type, stream, nbytes, &off, &len))
			return false;
		if (i == idx)
		{
			*out = PointerGetDatum(stream + off);
			return true;
		}
		off += len;
	}
}


/* Free a value index and what it holds. */
void
TesseraFreeValueIndex(TesseraValueIndex *index)
{
	if (index == NULL)
		return;
	if (index->offsets)
		pfree(index->offsets);
	if (index->delta_cps)
		pfree(index->delta_cps);
	if (index->rle_ends)
		pfree(index->rle_ends);
	if (index->null_ranks)
		pfree(index->null_ranks);
	pfree(index);
}

/* The value index of a payload, created on first use. */
static TesseraValueIndex *
value_index(TesseraValueIndex **index, MemoryContext cxt)
{
	if (index == NULL)
		return NULL;
	if (*index == NULL)
	{
		*index = MemoryContextAllocZero(cxt, sizeof(TesseraValueIndex));
		(*index)->cxt = cxt;
	}
	return *index;
}

/*
 * Where row's value is in a chunk's payload: the values section (*p) and
 * the value's rank among the non-NULL values (*j).  False if it is NULL.
 */
#define NULL_RANK_BLOCK_BYTES	64	/* 512 rows of the NULL bitmap */

static bool
value_position(const TesseraChunkDisk *chunk, const char *raw, int nrows, int row,
			   const char **p, int *j, TesseraCorruptFn corrupt, void *arg,
			   TesseraValueIndex *ix)
{
	const char *end = raw + chunk->raw_bytes;
	int			n = chunk->value_count;

	*p = raw;
	*j = row;
	if (chunk->encoding == TESSERA_ENC_ABSENT)
		return false;
	if (n == 0 || n > nrows || row < 0 || row >= nrows)
		corrupt(arg, "invalid value count");
	if (n < nrows)
	{
		const uint8 *bits = (const uint8 *) raw;
		Size		nbytes = (nrows + 7) / 8;
		int			from = 0;

		if ((Size) (end - raw) < nbytes)
			corrupt(arg, "null bitmap truncated");

		if ((bits[row >> 3] & (1 << (row & 7))) == 0)
			return false;

		/*
		 * The value's rank among the non-NULL ones: counted from the start
		 * of its 512-row block, whose rank the index keeps (a lone fetch
		 * from a long chunk with many NULLs -- folded rows -- would count
		 * the whole bitmap each time).
		 */
		*j = 0;
		if (ix != NULL)
		{
			int			nblocks = (int) ((nbytes + NULL_RANK_BLOCK_BYTES - 1) / NULL_RANK_BLOCK_BYTES);

			if (ix->null_ranks == NULL)
			{
				uint32	   *ranks = MemoryContextAlloc(ix->cxt, sizeof(uint32) * nblocks);
				uint32		sum = 0;

				for (int b = 0; b < nblocks; b++)
				{
					int			len = Min(NULL_RANK_BLOCK_BYTES, (int) nbytes - b * NULL_RANK_BLOCK_BYTES);

					ranks[b] = sum;
					sum += (uint32) pg_popcount((const char *) bits + b * NULL_RANK_BLOCK_BYTES, len);
				}
				ix->null_ranks = ranks;
			}
			from = (row >> 3) / NULL_RANK_BLOCK_BYTES * NULL_RANK_BLOCK_BYTES;
			*j = (int) ix->null_ranks[from / NULL_RANK_BLOCK_BYTES];
		}
		*j += (int) pg_popcount((const char *) bits + from, (row >> 3) - from);
		*j += pg_popcount32(bits[row >> 3] & ((1 << (row & 7)) - 1));
		*p += MAXALIGN(nbytes);
	}
	return true;
}

/*
 * Walk a variable-length plain stream (limit bytes of it present) from
 * value `from` at off to value idx.
 */
static bool
plain_walk(const TesseraColumnType *type, const char *stream, Size limit, Size off, int from,
		   int idx, Datum *out)
{
	Size		len;

	for (int i = from;; i++)
	{
		if (!TesseraPlainValue(type, stream, limit, &off, &len))
			return false;
		if (i == idx)
		{
			*out = PointerGetDatum(stream + off);
			return true;
		}
		off += len;
	}
}

/*
 * Value idx of the plain section at p (count values) of a framed chunk's
 * view: its bytes, found through the frame table's index for
 * variable-length values, made present first.
 */
static bool
view_plain_at(TesseraChunkView *v, const TesseraColumnType *type, const char *p, int count,
			  int idx, Datum *out)
{
	const char *end = v->raw + v->chunk->raw_bytes;
	const TesseraFrameHeader *fh = &v->ft.hdr;
	const char *stream;
	uint32		nbytes;
	Size		off = 0;
	Size		limit;
	int			from = 0;

	TesseraViewEnsure(v, p, sizeof(uint32));
	if (idx < 0 || idx >= count || !plain_header(type, p, end, count, &stream, &nbytes))
		return false;
	if (type->typlen > 0)
	{
		Size		stride = TesseraFixedStride(type);

		TesseraViewEnsure(v, stream + stride * idx, stride);
		*out = PointerGetDatum(stream + stride * idx);
		return true;
	}
	limit = nbytes;
	if (fh->index_count > 0 && fh->index_base == (uint32) (stream - v->raw))
	{
		uint32		k = (uint32) idx / fh->index_every;

		if (k >= fh->index_count)
			return false;
		off = v->ft.index[k];
		from = (int) (k * fh->index_every);
		if (k + 1 < fh->index_count)
			limit = v->ft.index[k + 1];
		if (off > limit || limit > nbytes)
			return false;
	}
	TesseraViewEnsure(v, stream + off, limit - off);
	return plain_walk(type, stream, limit, off, from, idx, out);
}

/*
 * TesseraDecodeValuesAt
 *		The values of rows rows[0..m) (ascending) of an integer chunk without
 *		NULLs, into values[rows[j]] / isnull[rows[j]]: the section's header
 *		read once, one unpack or indexed lookup per value (a sparse batch's
 *		few rows).  False where the chunk is of another kind (the caller
 *		reads its values singly); a malformed section reports corruption
 *		when read singly.
 */
bool
TesseraDecodeValuesAt(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
					  const char *raw, int nrows, const int *rows, int m, Datum *values,
					  bool *isnull, TesseraValueIndex **index, MemoryContext index_cxt)
{
	int64		local[64];
	int64	   *buf;
	bool		ok;

	if (chunk->encoding != TESSERA_ENC_INT || type->kind != TESSERA_KIND_BYVAL ||
		chunk->value_count != (uint32) nrows || nrows <= 0)
		return false;

	/*
	 * All m rows in one call: TesseraGatherInts chooses between indexed
	 * lookups and one decode of the section by how many rows it is given
	 * (in pieces of 64, a small run-length chunk was decoded whole once per
	 * piece)
	 */
	buf = m <= lengthof(local) ? local : palloc(sizeof(int64) * m);
	ok = TesseraGatherInts(raw, raw + chunk->raw_bytes, nrows, rows, m, buf,
						   value_index(index, index_cxt));
	if (ok)
		for (int j = 0; j < m; j++)
		{
			values[rows[j]] = TesseraIntToByval(buf[j], type->typlen);
			isnull[rows[j]] = false;
		}
	if (buf != local)
		pfree(buf);
	return ok;
}

/*
 * TesseraDecodeValueView
 *		TesseraDecodeValue for a framed chunk's view: the bytes the value is
 *		read from -- the null bitmap, the headers on the way, the value's
 *		packed bits or plain bytes -- are made present first (a frame or two
 *		of a column), and only those are read.
 */
Datum
TesseraDecodeValueView(const TesseraColumnType *type, TesseraChunkView *v, int nrows, int row,
					   bool *isnull, TesseraCorruptFn corrupt, void *arg, TesseraValueIndex **index,
					   MemoryContext index_cxt)
{
	const TesseraChunkDisk *chunk = v->chunk;
	const char *raw = v->raw;
	const char *end = raw + chunk->raw_bytes;
	int			n = chunk->value_count;
	const char *p;
	int			j;
	Datum		result = (Datum) 0;
	bool		ok = false;

	if (chunk->encoding != TESSERA_ENC_ABSENT && n < nrows)
		TesseraViewEnsure(v, raw, MAXALIGN((nrows + 7) / 8));
	*isnull = !value_position(chunk, raw, nrows, row, &p, &j, corrupt, arg, NULL);
	if (*isnull)
		return (Datum) 0;

	switch (chunk->encoding)
	{
		case TESSERA_ENC_INT:
			{
				int64		x;

				if (type->kind == TESSERA_KIND_BYVAL &&
					TesseraIntPrepare(p, end, n, j, TesseraViewEnsure, v) != 0 &&
					TesseraIntAt(p, end, n, j, &x))
				{
					result = TesseraIntToByval(x, type->typlen);
					ok = true;
				}
				break;
			}
		case TESSERA_ENC_DECIMAL:
			ok = type->kind == TESSERA_KIND_NUMERIC &&
				TesseraDecimalPrepare(p, end, n, j, TesseraViewEnsure, v) &&
				TesseraDecimalAt(p, end, n, j, &result, NULL);
			break;
		case TESSERA_ENC_PLAIN:
			ok = type->kind != TESSERA_KIND_BYVAL && view_plain_at(v, type, p, n, j, &result);
			break;
		case TESSERA_ENC_DICT:
			{
				uint32		ndict;
				uint32		nbytes;
				const char *dict;
				const char *codes;
				int64		code;

				TesseraViewEnsure(v, p, 2 * MAXALIGN(sizeof(uint32)));
				if (type->kind == TESSERA_KIND_BYVAL || end - p < (ptrdiff_t) (2 * MAXALIGN(sizeof(uint32))))
					break;
				memcpy(&ndict, p, sizeof(uint32));
				dict = p + MAXALIGN(sizeof(uint32));
				memcpy(&nbytes, dict, sizeof(uint32));
				codes = dict + MAXALIGN(sizeof(uint32)) + MAXALIGN(nbytes);
				if (ndict == 0 || ndict > (uint32) n || codes > end ||
					TesseraIntPrepare(codes, end, n, j, TesseraViewEnsure, v) == 0 ||
					!TesseraIntAt(codes, end, n, j, &code) || (uint64) code >= ndict)
					break;
				ok = view_plain_at(v, type, dict, (int) ndict, (int) code, &result);
				break;
			}
		case TESSERA_ENC_PACKED:
			ok = TesseraPackedAt(type, p, end, n, j, &result, TesseraViewEnsure, v,
								 value_index(index, index_cxt));
			break;
		default:
			break;
	}
	if (!ok)
		corrupt(arg, "malformed values");
	*isnull = false;
	return result;
}

/*
 * TesseraDecodeValue
 *		Value `row` of a chunk from its raw payload, decoding nothing else
 *		(O(1) for frame-of-reference integers and fixed-size values, a walk
 *		for deltas, runs and variable-length values).  By-reference results
 *		point into raw or are palloc'd in the current context.
 */
Datum
TesseraDecodeValue(const TesseraColumnType *type, const TesseraChunkDisk *chunk,
				   const char *raw, int nrows, int row, bool *isnull,
				   TesseraCorruptFn corrupt, void *arg, TesseraValueIndex **index,
				   MemoryContext index_cxt)
{
	const char *p;
	const char *end = raw + chunk->raw_bytes;
	int			n = chunk->value_count;
	int			j;
	Datum		result = (Datum) 0;
	bool		ok = false;
	TesseraValueIndex *ix = value_index(index, index_cxt);

	*isnull = !value_position(chunk, raw, nrows, row, &p, &j, corrupt, arg, ix);
	if (*isnull)
		return (Datum) 0;

	switch (chunk->encoding)
	{
		case TESSERA_ENC_INT:
			{
				int64		v;

				if (type->kind == TESSERA_KIND_BYVAL && TesseraIntAtIndexed(p, end, n, j, &v, ix))
				{
					result = TesseraIntToByval(v, type->typlen);
					ok = true;
				}
				break;
			}
		case TESSERA_ENC_DECIMAL:
			ok = type->kind == TESSERA_KIND_NUMERIC && TesseraDecimalAt(p, end, n, j, &result, ix);
			break;
		case TESSERA_ENC_PLAIN:
			ok = type->kind != TESSERA_KIND_BYVAL && plain_at(type, p, end, n, j, &result, ix);
			break;
		case TESSERA_ENC_DICT:
			{
				uint32		ndict;
				uint32		nbytes;
				const char *codes;
				int64		code;

				if (type->kind == TESSERA_KIND_BYVAL || end - p < (ptrdiff_t) (2 * MAXALIGN(sizeof(uint32))))
					break;
				memcpy(&ndict, p, sizeof(uint32));
				p += MAXALIGN(sizeof(uint32));
				memcpy(&nbytes, p, sizeof(uint32));
				codes = p + MAXALIGN(sizeof(uint32)) + MAXALIGN(nbytes);
				if (ndict == 0 || ndict > (uint32) n || codes > end ||
					!TesseraIntAtIndexed(codes, end, n, j, &code, ix) || (uint64) code >= ndict)
					break;
				ok = plain_at(type, p, end, ndict, (int) code, &result, ix);
				break;
			}
		case TESSERA_ENC_PACKED:
			ok = TesseraPackedAt(type, p, end, n, j, &result, NULL, NULL, ix);
			break;
		default:
			break;
	}
	if (!ok)
		corrupt(arg, "malformed values");
	*isnull = false;
	return result;
}

