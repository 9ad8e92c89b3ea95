/*-------------------------------------------------------------------------
 *
 * decimal.c
 *	  numeric values as scaled integers.
 *
 * NOTES
 *	  A numeric chunk whose values are all finite, canonical and within
 *	  38 significant digits is stored as one integer per value, scaled to
 *	  the largest display scale of the chunk, plus each value's own display
 *	  scale (nearly always constant, so it packs to nothing).  Runs of
 *	  values that step by a near-constant amount, which is common (money,
 *	  measurements, ratios), then delta-encode to a few bits per value.
 *
 *	  Decoding rebuilds exactly the bytes numeric.c would have produced
 *	  (make_result: leading and trailing zero digits stripped, short header
 *	  whenever scale and weight allow, zero is positive with weight 0); the
 *	  encoder refuses any value it could not rebuild byte for byte, and the
 *	  caller then falls back to a plain or dictionary encoding.  The layout
 *	  of a numeric (sign/scale/weight header, base-10000 digits) is
 *	  PostgreSQL's documented on-disk format, which pg_upgrade guarantees.
 *
 * IDENTIFICATION
 *	  src/encoding/decimal.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "tessera/encoding.h"

#ifdef HAVE_INT128

#define NBASE				10000
#define DEC_SHORT			0x8000
#define DEC_SPECIAL			0xC000
#define DEC_NEG				0x4000
#define DEC_SHORT_SIGN		0x2000
#define DEC_SHORT_DSCALE	0x1F80
#define DEC_SHORT_DSHIFT	7
#define DEC_SHORT_WSIGN		0x0040
#define DEC_SHORT_WEIGHT	0x003F
#define DEC_DSCALE_MASK		0x3FFF
#define DEC_MAX_DIGITS		38	/* decimal digits that fit an int128 with room */
#define DEC_MAX_BYTES		40	/* largest numeric we build: see build_numeric */

#define DEC_MODE_INT64		1
#define DEC_MODE_INT128		2

typedef struct DecimalHeader
{
	uint8		mode;
	uint8		reserved;
	uint16		max_scale;
	uint32		count;
} DecimalHeader;

static uint128 pow10_128[DEC_MAX_DIGITS + 1];
/* 10^DEC_MAX_DIGITS / 10^i: the most a value may be before * 10^i */
static uint128 limit_div[DEC_MAX_DIGITS + 1];
static bool pow10_ready = false;

static void
init_pow10(void)
{
	if (pow10_ready)
		return;
	pow10_128[0] = 1;
	for (int i = 1; i <= DEC_MAX_DIGITS; i++)
		pow10_128[i] = pow10_128[i - 1] * 10;
	for (int i = 0; i <= DEC_MAX_DIGITS; i++)
		limit_div[i] = pow10_128[DEC_MAX_DIGITS] / pow10_128[i];
	pow10_ready = true;
}

static inline bool
can_be_short(int dscale, int weight)
{
	return dscale <= (DEC_SHORT_DSCALE >> DEC_SHORT_DSHIFT) &&
		weight <= DEC_SHORT_WEIGHT && weight >= -(DEC_SHORT_WEIGHT + 1);
}

/* A decimal section's header, checked; false if malformed. */
static bool
read_header(const char *p, const char *end, int n, DecimalHeader *hdr)
{
	if (end - p < (ptrdiff_t) sizeof(DecimalHeader))
		return false;
	memcpy(hdr, p, sizeof(DecimalHeader));
	return hdr->count == (uint32) n && hdr->max_scale <= DEC_MAX_DIGITS &&
		(hdr->mode == DEC_MODE_INT64 || hdr->mode == DEC_MODE_INT128);
}

/*
 * Parse a numeric into magnitude * 10^-dscale.  Returns false for values we
 * cannot rebuild exactly.
 */
static bool
parse_numeric(Datum d, int128 *value, int *dscale_out)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(d);
	const char *p;
	Size		len;
	uint16		h;
	bool		neg;
	int			dscale,
				weight,
				ndigits;
	const char *digits;
	uint128		acc = 0;
	const uint128 limit = pow10_128[DEC_MAX_DIGITS];

	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		return false;
	p = VARDATA_ANY(v);
	len = VARSIZE_ANY_EXHDR(v);
	if (len < sizeof(uint16))
		return false;
	memcpy(&h, p, sizeof(uint16));
	if ((h & DEC_SPECIAL) == DEC_SPECIAL)
		return false;
	if (h & DEC_SHORT)
	{
		neg = (h & DEC_SHORT_SIGN) != 0;
		dscale = (h & DEC_SHORT_DSCALE) >> DEC_SHORT_DSHIFT;
		weight = (h & DEC_SHORT_WEIGHT);
		if (h & DEC_SHORT_WSIGN)
			weight -= DEC_SHORT_WEIGHT + 1;
		digits = p + sizeof(uint16);
		len -= sizeof(uint16);
	}
	else
	{
		int16		w;

		if (len < 2 * sizeof(uint16))
			return false;
		neg = (h & DEC_NEG) != 0;
		dscale = h & DEC_DSCALE_MASK;
		memcpy(&w, p + sizeof(uint16), sizeof(int16));
		weight = w;
		digits = p + 2 * sizeof(uint16);
		len -= 2 * sizeof(uint16);
	}
	if (len % sizeof(int16) != 0)
		return false;
	ndigits = len / sizeof(int16);

	/* only the canonical form make_result() produces */
	if (ndigits == 0)
	{
		if (neg || weight != 0)
			return false;
	}
	if (((h & DEC_SHORT) != 0) != can_be_short(dscale, ndigits == 0 ? 0 : weight))
		return false;
	if (dscale > DEC_MAX_DIGITS)
		return false;

	if (ndigits > 0)
	{
		int16		first,
					last;
		int			e_last = 4 * (weight - (ndigits - 1)) + dscale;

		memcpy(&first, digits, sizeof(int16));
		memcpy(&last, digits + (ndigits - 1) * sizeof(int16), sizeof(int16));
		if (first == 0 || last == 0)
			return false;
		if (ndigits > DEC_MAX_DIGITS / 4 + 2)
			return false;

		for (int i = 0; i < ndigits; i++)
		{
			int16		dig;

			memcpy(&dig, digits + i * sizeof(int16), sizeof(int16));
			if (dig < 0 || dig >= NBASE)
				return false;
			if (i == ndigits - 1 && e_last < 0)
			{
				int			k = -e_last;

				/* digits below the display scale must be zero */
				if (k > 3 || dig % (int) pow10_128[k] != 0)
					return false;
				if (acc > limit_div[4 - k])
					return false;
				acc = acc * pow10_128[4 - k] + (uint128) (dig / (int) pow10_128[k]);
			}
			else
			{
				if (acc > limit_div[4])
					return false;
				acc = acc * NBASE + (uint128) dig;
			}
		}
		if (e_last > 0)
		{
			if (e_last > DEC_MAX_DIGITS || acc > limit_div[e_last])
				return false;
			acc *= pow10_128[e_last];
		}
		if (acc >= limit)
			return false;
	}
	*value = neg ? -(int128) acc : (int128) acc;
	*dscale_out = dscale;
	return true;
}

/*
 * Write the numeric value * 10^-dscale at dst as a 4-byte-header varlena,
 * exactly as make_result() would.  Returns its size (<= DEC_MAX_BYTES).
 */
static Size
build_numeric(char *dst, int128 value, int dscale)
{
	bool		neg = value < 0;
	uint128		m = neg ? (uint128) (-value) : (uint128) value;
	uint16		groups[16];
	int			k = 0;
	int			r = dscale % 4;
	uint32		pw = r ? (uint32) pow10_128[r] : NBASE;
	int			low_weight = -((dscale + 3) / 4);
	int			start,
				ndigits,
				weight;
	char	   *p;
	Size		size;

	if (m <= PG_UINT64_MAX)
	{
		/* most values: no 128-bit division */
		uint64		m64 = (uint64) m;

		groups[k++] = (uint16) ((m64 % pw) * (NBASE / pw));
		m = m64 / pw;
	}
	else
	{
		groups[k++] = (uint16) ((m % pw) * (NBASE / pw));
		m /= pw;
	}
	while (m > PG_UINT64_MAX)
	{
		groups[k++] = (uint16) (m % NBASE);
		m /= NBASE;
	}
	{
		uint64		m64 = (uint64) m;

		while (m64 != 0)
		{
			groups[k++] = (uint16) (m64 % NBASE);
			m64 /= NBASE;
		}
	}
	start = 0;
	while (start < k && groups[start] == 0)
		start++;
	ndigits = k - start;
	if (ndigits == 0)
	{
		weight = 0;
		neg = false;
	}
	else
	{
		/* the highest group is nonzero by construction, unless k == 1 */
		while (ndigits > 0 && groups[start + ndigits - 1] == 0)
			ndigits--;
		weight = low_weight + start + ndigits - 1;
	}

	p = dst + VARHDRSZ;
	if (can_be_short(dscale, weight))
	{
		uint16		h = DEC_SHORT | (neg ? DEC_SHORT_SIGN : 0) |
			(uint16) (dscale << DEC_SHORT_DSHIFT) |
			(weight < 0 ? DEC_SHORT_WSIGN : 0) | (uint16) (weight & DEC_SHORT_WEIGHT);

		memcpy(p, &h, sizeof(uint16));
		p += sizeof(uint16);
	}
	else
	{
		uint16		h = (neg ? DEC_NEG : 0) | (uint16) (dscale & DEC_DSCALE_MASK);
		int16		w = (int16) weight;

		memcpy(p, &h, sizeof(uint16));
		memcpy(p + sizeof(uint16), &w, sizeof(int16));
		p += 2 * sizeof(uint16);
	}
	for (int j = 0; j < ndigits; j++)
	{
		int16		dig = (int16) groups[start + ndigits - 1 - j];

		memcpy(p, &dig, sizeof(int16));
		p += sizeof(int16);
	}
	size = p - dst;
	SET_VARSIZE(dst, size);
	return size;
}

/*
 * TesseraEncodeDecimal
 *		Append a decimal section for n non-NULL numerics, or return false
 *		(appending nothing) if some value cannot be encoded exactly.  Sets
 *		the indexes of the smallest and largest value.
 */
bool
TesseraEncodeDecimal(const Datum *values, int n, TesseraBuf *out,
					 int *min_idx, int *max_idx)
{
	int128	   *scaled = palloc(sizeof(int128) * Max(n, 1));
	int64	   *scales = palloc(sizeof(int64) * Max(n, 1));
	int			max_scale = 0;
	bool		fits64 = true;
	DecimalHeader hdr;

	init_pow10();
	for (int i = 0; i < n; i++)
	{
		int			ds;

		if (!parse_numeric(values[i], &scaled[i], &ds))
		{
			pfree(scaled);
			pfree(scales);
			return false;
		}
		scales[i] = ds;
		max_scale = Max(max_scale, ds);
	}

	*min_idx = *max_idx = 0;
	for (int i = 0; i < n; i++)
	{
		int			up = max_scale - (int) scales[i];

		if (up > 0)
		{
			uint128		mag = scaled[i] < 0 ? (uint128) (-scaled[i]) : (uint128) scaled[i];

			if (mag > pow10_128[DEC_MAX_DIGITS] / pow10_128[up])
			{
				pfree(scaled);
				pfree(scales);
				return false;
			}
			scaled[i] *= (int128) pow10_128[up];
		}
		if (scaled[i] < PG_INT64_MIN || scaled[i] > PG_INT64_MAX)
			fits64 = false;
		if (scaled[i] < scaled[*min_idx])
			*min_idx = i;
		if (scaled[i] > scaled[*max_idx])
			*max_idx = i;
	}

	memset(&hdr, 0, sizeof(hdr));
	hdr.mode = fits64 ? DEC_MODE_INT64 : DEC_MODE_INT128;
	hdr.max_scale = (uint16) max_scale;
	hdr.count = n;
	TesseraBufAppend(out, &hdr, sizeof(hdr));
	TesseraBufAlign(out);
	TesseraEncodeInts(scales, n, out);
	if (fits64)
	{
		int64	   *v64 = palloc(sizeof(int64) * Max(n, 1));

		for (int i = 0; i < n; i++)
			v64[i] = (int64) scaled[i];
		TesseraEncodeInts(v64, n, out);
		pfree(v64);
	}
	else
		TesseraEncodeWide(scaled, n, out);

	pfree(scaled);
	pfree(scales);
	return true;
}

/*
 * TesseraDecodeDecimal
 *		Decode n numerics into out (pointers into one palloc'd arena in the
 *		current memory context).  Returns the end of the section or NULL.
 */
const char *
TesseraDecodeDecimal(const char *p, const char *end, int n, Datum *out)
{
	DecimalHeader hdr;
	int64	   *scales;
	int128	   *scaled;
	char	   *arena;
	Size		pos = 0;

	init_pow10();
	if (!read_header(p, end, n, &hdr))
		return NULL;
	p += MAXALIGN(sizeof(hdr));

	scales = palloc(sizeof(int64) * Max(n, 1));
	scaled = palloc(sizeof(int128) * Max(n, 1));
	p = TesseraDecodeInts(p, end, n, scales);
	if (p == NULL)
		return NULL;
	if (hdr.mode == DEC_MODE_INT64)
	{
		int64	   *v64 = (int64 *) scaled; /* decode in place, widen backwards */

		p = TesseraDecodeInts(p, end, n, v64);
		if (p == NULL)
			return NULL;
		for (int i = n - 1; i >= 0; i--)
			scaled[i] = (int128) v64[i];
	}
	else
	{
		p = TesseraDecodeWide(p, end, n, scaled);
		if (p == NULL)
			return NULL;
	}

	arena = palloc((Size) DEC_MAX_BYTES * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		int128		v = scaled[i];
		int			down;

		if (scales[i] < 0 || scales[i] > hdr.max_scale)
			return NULL;
		down = hdr.max_scale - (int) scales[i];
		if (down > 0)
			v /= (int128) pow10_128[down];
		if (v >= (int128) pow10_128[DEC_MAX_DIGITS] || v <= -(int128) pow10_128[DEC_MAX_DIGITS])
			return NULL;
		out[i] = PointerGetDatum(arena + pos);
		pos += INTALIGN(build_numeric(arena + pos, v, (int) scales[i]));
	}
	pfree(scales);
	pfree(scaled);
	return p;
}

/*
 * TesseraDecimalAt
 *		Value idx of a decimal section, palloc'd in the current context.
 */
bool
TesseraDecimalAt(const char *p, const char *end, int n, int idx, Datum *out,
				 TesseraValueIndex *index)
{
	int			max_scale;
	int64		scale;
	int128		v;
	char	   *buf;

	init_pow10();
	if (!TesseraDecimalMaxScale(p, end, n, &max_scale) ||
		!TesseraDecimalScaledAt(p, end, n, idx, &v, &scale, index))
		return false;
	if (max_scale > scale)
		v /= (int128) pow10_128[max_scale - scale];
	if (v >= (int128) pow10_128[DEC_MAX_DIGITS] || v <= -(int128) pow10_128[DEC_MAX_DIGITS])
		return false;
	buf = palloc(DEC_MAX_BYTES);
	build_numeric(buf, v, (int) scale);
	*out = PointerGetDatum(buf);
	return true;
}

/*
 * TesseraDecodeDecimalScaled
 *		The values of a decimal section as integers scaled to the section's
 *		largest display scale (*max_scale), with each value's own display
 *		scale: numeric arithmetic without building numerics (TesseraAgg).
 *		When every value has the same display scale, *dsc_all is it and
 *		scales[] is left alone; otherwise *dsc_all is -1.  Every |value| is
 *		below 2^*bits.
 */
const char *
TesseraDecodeDecimalScaled(const char *p, const char *end, int n, int128 *scaled,
						   int64 *scales, int *max_scale, int64 *dsc_all, int *bits)
{
	DecimalHeader hdr;
	uint128		acc = 0;

	init_pow10();
	if (!read_header(p, end, n, &hdr))
		return NULL;
	p += MAXALIGN(sizeof(hdr));
	if (TesseraIntsConstant(p, end, n, dsc_all))
	{
		/* the usual case: one display scale for the whole chunk */
		if (*dsc_all < 0 || *dsc_all > hdr.max_scale)
			return NULL;
		p = TesseraSkipInts(p, end, n);
	}
	else
	{
		*dsc_all = -1;
		p = TesseraDecodeInts(p, end, n, scales);
		if (p != NULL)
			for (int i = 0; i < n; i++)
				if (scales[i] < 0 || scales[i] > hdr.max_scale)
					return NULL;
	}
	if (p == NULL)
		return NULL;
	if (hdr.mode == DEC_MODE_INT64)
	{
		int64	   *v64 = (int64 *) scaled; /* decode in place, widen backwards */
		uint64		acc64 = 0;

		p = TesseraDecodeInts(p, end, n, v64);
		if (p == NULL)
			return NULL;
		for (int i = n - 1; i >= 0; i--)
		{
			int64		v = v64[i];

			acc64 |= v < 0 ? -(uint64) v : (uint64) v;
			scaled[i] = (int128) v;
		}
		acc = acc64;
	}
	else
	{
		p = TesseraDecodeWideBound(p, end, n, scaled, &acc);
		if (p == NULL)
			return NULL;
	}
	*bits = (acc >> 64) ? 128 - __builtin_clzll((uint64) (acc >> 64)) :
		(uint64) acc ? 64 - __builtin_clzll((uint64) acc) : 0;
	*max_scale = hdr.max_scale;
	return p;
}

/*
 * TesseraDecimalMaxScale
 *		The scale a decimal section's values are stored at; false if the
 *		header is malformed.
 */
bool
TesseraDecimalMaxScale(const char *p, const char *end, int n, int *max_scale)
{
	DecimalHeader hdr;

	if (!read_header(p, end, n, &hdr))
		return false;
	*max_scale = hdr.max_scale;
	return true;
}

/*
 * TesseraDecimalFilter
 *		TesseraFilterInts for a decimal section: lo and hi are integers at
 *		the section's scale (TesseraDecimalMaxScale).  Sections of 128-bit
 *		values are left to the caller.
 */
TesseraFilterResult
TesseraDecimalFilter(const char *p, const char *end, int n, int128 lo, int128 hi,
					 bool outside, bool *sel, int nsel, const int *idx, int nidx)
{
	DecimalHeader hdr;

	if (!read_header(p, end, n, &hdr))
		return TESSERA_FILTER_CORRUPT;
	if (hdr.mode != DEC_MODE_INT64)
		return TESSERA_FILTER_CANNOT;
	p = TesseraSkipInts(p + MAXALIGN(sizeof(hdr)), end, n);
	if (p == NULL)
		return TESSERA_FILTER_CORRUPT;
	/* every stored value is an int64: clamp the bounds to that range */
	if (hi < PG_INT64_MIN || lo > PG_INT64_MAX || lo > hi)
		return TesseraFilterInts(p, end, n, 1, 0, outside, sel, nsel, idx, nidx);
	return TesseraFilterInts(p, end, n, (int64) Max(lo, (int128) PG_INT64_MIN),
							 (int64) Min(hi, (int128) PG_INT64_MAX), outside, sel, nsel,
							 idx, nidx);
}

/*
 * TesseraDecimalScaledAt
 *		Value idx of a decimal section as an integer at the section's scale
 *		and its own display scale: TesseraDecodeDecimalScaled for one value.
 */
/*
 * TesseraDecimalPrepare
 *		Make present, through ensure, the bytes of the decimal section at p
 *		that TesseraDecimalAt reads for value idx.  False if malformed.
 */
bool
TesseraDecimalPrepare(const char *p, const char *end, int n, int idx, TesseraEnsureFn ensure,
					  void *arg)
{
	DecimalHeader hdr;
	Size		size;

	ensure(arg, p, sizeof(DecimalHeader));
	if (!read_header(p, end, n, &hdr))
		return false;
	p += MAXALIGN(sizeof(hdr));
	size = TesseraIntPrepare(p, end, n, idx, ensure, arg);
	if (size == 0)
		return false;
	p += size;
	if (hdr.mode == DEC_MODE_INT64)
		return TesseraIntPrepare(p, end, n, idx, ensure, arg) != 0;
	return TesseraWidePrepare(p, end, n, idx, ensure, arg) != 0;
}

bool
TesseraDecimalScaledAt(const char *p, const char *end, int n, int idx, int128 *value,
					   int64 *dscale, TesseraValueIndex *index)
{
	DecimalHeader hdr;
	const char *vals;

	if (!read_header(p, end, n, &hdr))
		return false;
	p += MAXALIGN(sizeof(hdr));
	if (!TesseraIntAt(p, end, n, idx, dscale) || *dscale < 0 || *dscale > hdr.max_scale)
		return false;
	vals = TesseraSkipInts(p, end, n);
	if (vals == NULL)
		return false;
	if (hdr.mode == DEC_MODE_INT64)
	{
		int64		v64;

		if (!TesseraIntAtIndexed(vals, end, n, idx, &v64, index))
			return false;
		*value = v64;
		return true;
	}
	return TesseraWideAtIndexed(vals, end, n, idx, value, index);
}

/*
 * TesseraDecimalGather
 *		TesseraDecimalScaledAt for the values rows[0..m): their scaled
 *		integers and display scales, the section's header read once.
 */
bool
TesseraDecimalGather(const char *p, const char *end, int n, const int *rows, int m,
					 int128 *values, int64 *dscales, int *max_scale)
{
	DecimalHeader hdr;
	const char *vals;

	if (!read_header(p, end, n, &hdr))
		return false;
	*max_scale = hdr.max_scale;
	p += MAXALIGN(sizeof(hdr));
	if (!TesseraGatherInts(p, end, n, rows, m, dscales, NULL))
		return false;
	for (int j = 0; j < m; j++)
		if (dscales[j] < 0 || dscales[j] > *max_scale)
			return false;
	vals = TesseraSkipInts(p, end, n);
	if (vals == NULL)
		return false;
	if (hdr.mode == DEC_MODE_INT64)
	{
		int64	   *v64 = (int64 *) values; /* gather in place, widen backwards */

		if (!TesseraGatherInts(vals, end, n, rows, m, v64, NULL))
			return false;
		for (int j = m - 1; j >= 0; j--)
			values[j] = (int128) v64[j];
		return true;
	}
	for (int j = 0; j < m; j++)
		if (!TesseraWideAt(vals, end, n, rows[j], &values[j]))
			return false;
	return true;
}

/*
 * TesseraNumericScaled
 *		A finite numeric of at most 38 significant digits as value *
 *		10^-dscale (TesseraAgg sums them exactly).  False for NaN, infinities
 *		and longer values.
 */
bool
TesseraNumericScaled(Datum d, int128 *value, int *dscale)
{
	if (!pow10_ready)
		init_pow10();
	return parse_numeric(d, value, dscale);
}

/*
 * TesseraNumericsFromScaled
 *		values[i] * 10^-dscale as numerics (|values[i]| < 10^38; rows with
 *		isnull[i] get 0), built as make_result() builds them, in one block
 *		of the current memory context.
 */
void
TesseraNumericsFromScaled(const int128 *values, const bool *isnull, int n, int dscale,
						  Datum *out)
{
	char	   *arena;
	Size		pos = 0;

	if (!pow10_ready)
		init_pow10();
	arena = MemoryContextAllocHuge(CurrentMemoryContext, (Size) DEC_MAX_BYTES * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		if (isnull[i])
		{
			out[i] = (Datum) 0;
			continue;
		}
		Assert(values[i] < (int128) pow10_128[DEC_MAX_DIGITS] &&
			   values[i] > -(int128) pow10_128[DEC_MAX_DIGITS]);
		out[i] = PointerGetDatum(arena + pos);
		pos += INTALIGN(build_numeric(arena + pos, values[i], dscale));
	}
}

#else							/* !HAVE_INT128 */

bool
TesseraEncodeDecimal(const Datum *values, int n, TesseraBuf *out,
					 int *min_idx, int *max_idx)
{
	return false;
}

const char *
TesseraDecodeDecimal(const char *p, const char *end, int n, Datum *out)
{
	return NULL;
}

bool
TesseraDecimalAt(const char *p, const char *end, int n, int idx, Datum *out,
				 TesseraValueIndex *index)
{
	return false;
}

bool
TesseraDecimalPrepare(const char *p, const char *end, int n, int idx, TesseraEnsureFn ensure,
					  void *arg)
{
	return false;
}

#endif							/* HAVE_INT128 */
