/*-------------------------------------------------------------------------
 *
 * intcodec.c
 *	  Integer sequences: frame of reference, delta and run-length
 *	  encodings over bit-packed offsets.
 *
 * NOTES
 *	  Every pass-by-value column (integers, dates, timestamps, floats as
 *	  bit patterns, booleans), dictionary codes, numeric scales and scaled
 *	  numerics go through here.  The encoder computes the exact size of each
 *	  candidate in one pass and keeps the smallest:
 *
 *		FOR		values = base + packed[i]
 *		DELTA	values[0] = first, values[i] = values[i-1] + base + packed[i-1]
 *		RLE		runs: value = base + packed_v[r], length = base2 + packed_l[r]
 *		STRIDE	values = base + packed[i] * base2: FOR over values that differ
 *				by multiples of a common factor (timestamps of whole seconds,
 *				numerics whose trailing digits are zero)
 *
 *	  Arithmetic is done on uint64 with wraparound, so every int64 sequence
 *	  round-trips exactly whatever its range.  Packing is LSB-first; the
 *	  decoder may read up to 9 bytes past the last packed byte, which the
 *	  caller guarantees to be addressable (TESSERA_DECODE_PADDING).
 *
 *	  A section is a fixed header followed by its packed bytes, padded to
 *	  MAXALIGN so that the next section starts aligned.
 *
 * IDENTIFICATION
 *	  src/encoding/intcodec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_bitutils.h"

#include "tessera/encoding.h"
#include "bitpack.h"

#define INT_MODE_FOR	1
#define INT_MODE_DELTA	2
#define INT_MODE_RLE	3
#define INT_MODE_STRIDE	4

typedef struct IntSectionHeader
{
	uint8		mode;
	uint8		width;			/* bits per packed value (or run value) */
	uint8		width2;			/* bits per run length (RLE) */
	uint8		reserved[5];
	uint32		count;			/* values */
	uint32		runs;			/* RLE runs */
	int64		base;
	int64		base2;			/* RLE: least run length; STRIDE: the factor */
	int64		first;
} IntSectionHeader;

/* values summed per unpacked block (TesseraIntsSumPacked) */
#define SUM_BLOCK	256
StaticAssertDecl(SUM_BLOCK % 8 == 0, "a sum block must start on a byte");

static uint8 *
append_packed(TesseraBuf *out, const uint64 *vals, uint64 n, int width)
{
	Size		nbytes = packed_bytes(n, width);
	uint8	   *p;

	TesseraBufReserve(out, nbytes + 16);
	p = (uint8 *) out->data + out->len;
	memset(p + nbytes, 0, 16);
	pack_bits(vals, n, width, p);
	out->len += nbytes;
	return p;
}

/*
 * The largest factor every value's distance from the smallest shares (1 if
 * none, or the values span more than int64's range).  The first values
 * decide cheaply whether there is one at all; only then is every value
 * checked, a division each.
 */
static uint64
common_factor(const int64 *values, int n, uint64 vmin, uint64 vmax)
{
	uint64		g = 0;

	if (vmax - vmin > (uint64) PG_INT64_MAX)
		return 1;
	for (int i = 0; i < n; i++)
	{
		uint64		d = (uint64) values[i] - vmin;

		if (g != 0 && d % g == 0)
			continue;
		/* Euclid: gcd(g, d) */
		while (d != 0)
		{
			uint64		t = g % d;

			g = d;
			d = t;
		}
		if (g == 1)
			return 1;
	}
	return g == 0 ? 1 : g;
}

/*
 * TesseraEncodeInts
 *		Append an integer section for values[0..n) to out.
 */
void
TesseraEncodeInts(const int64 *values, int n, TesseraBuf *out)
{
	IntSectionHeader hdr;
	uint64		vmin,
				vmax;
	int64		smin,
				smax,
				dmin = 0,
				dmax = 0;
	uint64		runs = 0;
	uint32		lmin = PG_UINT32_MAX,
				lmax = 0,
				runlen = 0;
	uint64		size_for,
				size_stride,
				size_delta,
				size_rle;
	int			w_for,
				w_stride,
				w_delta,
				w_len;
	uint64		stride;
	uint64	   *tmp;

	memset(&hdr, 0, sizeof(hdr));
	hdr.count = n;
	if (n == 0)
	{
		hdr.mode = INT_MODE_FOR;
		TesseraBufAppend(out, &hdr, sizeof(hdr));
		return;
	}

	/* one pass: range, delta range, runs */
	smin = smax = values[0];
	for (int i = 0; i < n; i++)
	{
		int64		v = values[i];

		if (v < smin)
			smin = v;
		if (v > smax)
			smax = v;
		if (i > 0)
		{
			int64		d = (int64) ((uint64) v - (uint64) values[i - 1]);

			if (i == 1)
				dmin = dmax = d;
			else
			{
				if (d < dmin)
					dmin = d;
				if (d > dmax)
					dmax = d;
			}
			if (v != values[i - 1])
			{
				runs++;
				lmin = Min(lmin, runlen);
				lmax = Max(lmax, runlen);
				runlen = 0;
			}
		}
		runlen++;
	}
	runs++;
	lmin = Min(lmin, runlen);
	lmax = Max(lmax, runlen);

	vmin = (uint64) smin;
	vmax = (uint64) smax;
	w_for = bits_for(vmax - vmin);
	w_delta = bits_for((uint64) dmax - (uint64) dmin);
	w_len = bits_for((uint64) (lmax - lmin));
	stride = common_factor(values, n, vmin, vmax);
	w_stride = bits_for((vmax - vmin) / stride);
	size_for = (uint64) n * w_for;
	size_stride = (uint64) n * w_stride;
	size_delta = (uint64) (n - 1) * w_delta;
	size_rle = runs * (uint64) (w_for + w_len) + 64;

	tmp = palloc(sizeof(uint64) * (Size) n);
	if (stride > 1 && size_stride < size_for && size_stride <= size_delta &&
		size_stride <= size_rle)
	{
		hdr.mode = INT_MODE_STRIDE;
		hdr.width = w_stride;
		hdr.base = smin;
		hdr.base2 = (int64) stride;
		TesseraBufAppend(out, &hdr, sizeof(hdr));
		for (int i = 0; i < n; i++)
			tmp[i] = ((uint64) values[i] - vmin) / stride;
		append_packed(out, tmp, n, w_stride);
	}
	else if (size_for <= size_delta && size_for <= size_rle)
	{
		hdr.mode = INT_MODE_FOR;
		hdr.width = w_for;
		hdr.base = smin;
		TesseraBufAppend(out, &hdr, sizeof(hdr));
		for (int i = 0; i < n; i++)
			tmp[i] = (uint64) values[i] - vmin;
		append_packed(out, tmp, n, w_for);
	}
	else if (size_delta <= size_rle)
	{
		hdr.mode = INT_MODE_DELTA;
		hdr.width = w_delta;
		hdr.base = dmin;
		hdr.first = values[0];
		TesseraBufAppend(out, &hdr, sizeof(hdr));
		for (int i = 1; i < n; i++)
			tmp[i - 1] = ((uint64) values[i] - (uint64) values[i - 1]) - (uint64) dmin;
		append_packed(out, tmp, n - 1, w_delta);
	}
	else
	{
		uint64	   *lens = palloc(sizeof(uint64) * (Size) runs);
		uint64		r = 0;

		hdr.mode = INT_MODE_RLE;
		hdr.width = w_for;
		hdr.width2 = w_len;
		hdr.runs = (uint32) runs;
		hdr.base = smin;
		hdr.base2 = lmin;
		TesseraBufAppend(out, &hdr, sizeof(hdr));
		runlen = 0;
		for (int i = 0; i < n; i++)
		{
			if (i > 0 && values[i] != values[i - 1])
			{
				tmp[r] = (uint64) values[i - 1] - vmin;
				lens[r] = runlen - lmin;
				r++;
				runlen = 0;
			}
			runlen++;
		}
		tmp[r] = (uint64) values[n - 1] - vmin;
		lens[r] = runlen - lmin;
		r++;
		Assert(r == runs);
		append_packed(out, tmp, runs, w_for);
		append_packed(out, lens, runs, w_len);
		pfree(lens);
	}
	pfree(tmp);
	TesseraBufAlign(out);
}

/*
 * TesseraDecodeInts
 *		Decode a section of n integers starting at p.  Returns the start of
 *		the next section, or NULL if the section is malformed.
 */
const char *
TesseraDecodeInts(const char *p, const char *end, int n, int64 *out)
{
	IntSectionHeader hdr;
	const uint8 *data;

	if (end - p < (ptrdiff_t) sizeof(hdr))
		return NULL;
	memcpy(&hdr, p, sizeof(hdr));
	data = (const uint8 *) p + sizeof(hdr);
	if (hdr.count != (uint32) n || hdr.width > 64 || hdr.width2 > 64)
		return NULL;

	switch (hdr.mode)
	{
		case INT_MODE_FOR:
			{
				Size		nbytes = packed_bytes(n, hdr.width);

				if ((const char *) data + nbytes > end)
					return NULL;
				if (hdr.width == 0)
				{
					/* a constant */
					for (int i = 0; i < n; i++)
						out[i] = hdr.base;
					break;
				}
				unpack_bits(data, n, hdr.width, (uint64 *) out);
				if (hdr.base != 0)
					for (int i = 0; i < n; i++)
						out[i] = (int64) ((uint64) out[i] + (uint64) hdr.base);
				data += nbytes;
				break;
			}
		case INT_MODE_STRIDE:
			{
				Size		nbytes = packed_bytes(n, hdr.width);
				uint64		stride = (uint64) hdr.base2;

				if ((const char *) data + nbytes > end || hdr.base2 < 2)
					return NULL;
				unpack_bits(data, n, hdr.width, (uint64 *) out);
				for (int i = 0; i < n; i++)
					out[i] = (int64) ((uint64) out[i] * stride + (uint64) hdr.base);
				data += nbytes;
				break;
			}
		case INT_MODE_DELTA:
			{
				Size		nbytes;
				uint64		acc;

				if (n == 0)
					return NULL;
				nbytes = packed_bytes(n - 1, hdr.width);
				if ((const char *) data + nbytes > end)
					return NULL;
				if (hdr.width == 0)
				{
					/*
					 * A constant step (serial numbers, regular timestamps):
					 * no running sum, so the loop vectorizes.
					 */
					uint64		step = (uint64) hdr.base;
					uint64		v0 = (uint64) hdr.first;
					uint64		v1 = v0 + step;
					int			i = 0;

					/* two independent lanes: the compiler stores them as one vector */
					for (; i + 2 <= n; i += 2)
					{
						out[i] = (int64) v0;
						out[i + 1] = (int64) v1;
						v0 += 2 * step;
						v1 += 2 * step;
					}
					if (i < n)
						out[i] = (int64) v0;
					break;
				}
				unpack_bits(data, n - 1, hdr.width, (uint64 *) out + 1);
				acc = (uint64) hdr.first;
				out[0] = hdr.first;
				for (int i = 1; i < n; i++)
				{
					acc += (uint64) out[i] + (uint64) hdr.base;
					out[i] = (int64) acc;
				}
				data += nbytes;
				break;
			}
		case INT_MODE_RLE:
			{
				Size		vbytes = packed_bytes(hdr.runs, hdr.width);
				Size		lbytes = packed_bytes(hdr.runs, hdr.width2);
				uint64	   *vals;
				uint64	   *lens;
				uint64		pos = 0;

				if (hdr.runs == 0 || hdr.runs > (uint32) n ||
					(const char *) data + vbytes + lbytes > end)
					return NULL;
				vals = palloc(sizeof(uint64) * hdr.runs);
				lens = palloc(sizeof(uint64) * hdr.runs);
				unpack_bits(data, hdr.runs, hdr.width, vals);
				unpack_bits(data + vbytes, hdr.runs, hdr.width2, lens);
				for (uint32 r = 0; r < hdr.runs; r++)
				{
					uint64		len = lens[r] + (uint64) hdr.base2;
					int64		v = (int64) (vals[r] + (uint64) hdr.base);

					if (len == 0 || len > (uint64) n - pos)
					{
						pfree(vals);
						pfree(lens);
						return NULL;
					}

					/*
					 * Short runs (SSB's lo_orderdate: an order's few lines)
					 * store eight values whatever the length, a fixed loop
					 * the compiler makes a few vector stores, where a loop
					 * of the run's length cost a mispredicted exit per run;
					 * the next run overwrites the extra ones.
					 */
					if (len <= 8 && pos + 8 <= (uint64) n)
					{
						for (int k = 0; k < 8; k++)
							out[pos + k] = v;
					}
					else
					{
						for (uint64 k = 0; k < len; k++)
							out[pos + k] = v;
					}
					pos += len;
				}
				pfree(vals);
				pfree(lens);
				if (pos != (uint64) n)
					return NULL;
				data += vbytes + lbytes;
				break;
			}
		default:
			return NULL;
	}
	return (const char *) p + MAXALIGN((const char *) data - p);
}

#ifdef HAVE_INT128

/*
 * Wide (128-bit) sections: FOR or DELTA, the offsets packed as two streams,
 * the low 64 bits and the bits above.
 */
typedef struct WideSectionHeader
{
	uint8		mode;
	uint8		width;			/* 0..128 */
	uint8		reserved[2];
	uint32		count;
	uint64		base_lo;
	int64		base_hi;
	uint64		first_lo;
	int64		first_hi;
} WideSectionHeader;

static inline int
bits_for128(uint128 range)
{
	uint64		hi = (uint64) (range >> 64);

	if (hi != 0)
		return 64 + pg_leftmost_one_pos64(hi) + 1;
	return bits_for((uint64) range);
}

static void
append_wide(TesseraBuf *out, const uint128 *u, int n, int width)
{
	uint64	   *lo = palloc(sizeof(uint64) * Max(n, 1));
	int			wlo = Min(width, 64);
	int			whi = Max(width - 64, 0);

	for (int i = 0; i < n; i++)
		lo[i] = (uint64) u[i];
	append_packed(out, lo, n, wlo);
	if (whi > 0)
	{
		for (int i = 0; i < n; i++)
			lo[i] = (uint64) (u[i] >> 64);
		append_packed(out, lo, n, whi);
	}
	pfree(lo);
}

void
TesseraEncodeWide(const int128 *values, int n, TesseraBuf *out)
{
	WideSectionHeader hdr;
	int128		vmin,
				vmax,
				dmin = 0,
				dmax = 0;
	uint128    *tmp;
	int			w_for,
				w_delta;

	memset(&hdr, 0, sizeof(hdr));
	hdr.count = n;
	if (n == 0)
	{
		hdr.mode = INT_MODE_FOR;
		TesseraBufAppend(out, &hdr, sizeof(hdr));
		return;
	}
	vmin = vmax = values[0];
	for (int i = 0; i < n; i++)
	{
		if (values[i] < vmin)
			vmin = values[i];
		if (values[i] > vmax)
			vmax = values[i];
		if (i > 0)
		{
			int128		d = (int128) ((uint128) values[i] - (uint128) values[i - 1]);

			if (i == 1)
				dmin = dmax = d;
			else
			{
				if (d < dmin)
					dmin = d;
				if (d > dmax)
					dmax = d;
			}
		}
	}
	w_for = bits_for128((uint128) vmax - (uint128) vmin);
	w_delta = bits_for128((uint128) dmax - (uint128) dmin);

	tmp = palloc(sizeof(uint128) * (Size) n);
	if ((uint64) n * w_for <= (uint64) (n - 1) * w_delta)
	{
		hdr.mode = INT_MODE_FOR;
		hdr.width = w_for;
		hdr.base_lo = (uint64) vmin;
		hdr.base_hi = (int64) (vmin >> 64);
		TesseraBufAppend(out, &hdr, sizeof(hdr));
		for (int i = 0; i < n; i++)
			tmp[i] = (uint128) values[i] - (uint128) vmin;
		append_wide(out, tmp, n, w_for);
	}
	else
	{
		hdr.mode = INT_MODE_DELTA;
		hdr.width = w_delta;
		hdr.base_lo = (uint64) dmin;
		hdr.base_hi = (int64) (dmin >> 64);
		hdr.first_lo = (uint64) values[0];
		hdr.first_hi = (int64) (values[0] >> 64);
		TesseraBufAppend(out, &hdr, sizeof(hdr));
		for (int i = 1; i < n; i++)
			tmp[i - 1] = ((uint128) values[i] - (uint128) values[i - 1]) - (uint128) dmin;
		append_wide(out, tmp, n - 1, w_delta);
	}
	pfree(tmp);
	TesseraBufAlign(out);
}

static inline uint128
abs_u128(uint128 v)
{
	return (int128) v < 0 ? -v : v;
}

/*
 * TesseraDecodeWideBound
 *		TesseraDecodeWide, also OR-ing every |value| into *absor (a bound on
 *		their magnitude for the caller).  Offsets narrower than 64 bits --
 *		nearly always -- are widened, rebased and summed in one pass.
 */
const char *
TesseraDecodeWideBound(const char *p, const char *end, int n, int128 *out, uint128 *absor)
{
	WideSectionHeader hdr;
	const uint8 *data;
	uint64		count;
	int			wlo,
				whi;
	Size		blo,
				bhi;
	uint64	   *tmp;
	uint128		base,
				first,
				acc,
				bound = 0;

	if (end - p < (ptrdiff_t) sizeof(hdr))
		return NULL;
	memcpy(&hdr, p, sizeof(hdr));
	data = (const uint8 *) p + sizeof(hdr);
	if (hdr.count != (uint32) n || hdr.width > 128 ||
		(hdr.mode != INT_MODE_FOR && hdr.mode != INT_MODE_DELTA) ||
		(hdr.mode == INT_MODE_DELTA && n == 0))
		return NULL;

	count = (hdr.mode == INT_MODE_FOR) ? n : n - 1;
	wlo = Min(hdr.width, 64);
	whi = Max(hdr.width - 64, 0);
	blo = packed_bytes(count, wlo);
	bhi = packed_bytes(count, whi);
	if ((const char *) data + blo + bhi > end)
		return NULL;

	base = ((uint128) (uint64) hdr.base_hi << 64) | hdr.base_lo;
	first = ((uint128) (uint64) hdr.first_hi << 64) | hdr.first_lo;
	tmp = palloc(sizeof(uint64) * Max(count, 1));
	unpack_bits(data, count, wlo, tmp);

	if (whi == 0)
	{
		if (hdr.mode == INT_MODE_FOR)
			for (int i = 0; i < n; i++)
			{
				uint128		v = (uint128) tmp[i] + base;

				out[i] = (int128) v;
				bound |= abs_u128(v);
			}
		else
		{
			acc = first;
			out[0] = (int128) first;
			bound = abs_u128(first);
			for (int i = 1; i < n; i++)
			{
				acc += (uint128) tmp[i - 1] + base;
				out[i] = (int128) acc;
				bound |= abs_u128(acc);
			}
		}
	}
	else
	{
		/* offsets of more than 64 bits: their high words, then the values */
		int128	   *dst = (hdr.mode == INT_MODE_FOR) ? out : out + 1;

		for (uint64 i = 0; i < count; i++)
			dst[i] = (int128) (uint128) tmp[i];
		unpack_bits(data + blo, count, whi, tmp);
		for (uint64 i = 0; i < count; i++)
			dst[i] = (int128) ((uint128) dst[i] | ((uint128) tmp[i] << 64));
		acc = first;
		for (int i = 0; i < n; i++)
		{
			if (hdr.mode == INT_MODE_FOR)
				acc = (uint128) out[i] + base;
			else if (i > 0)
				acc += (uint128) out[i] + base;
			out[i] = (int128) acc;
			bound |= abs_u128(acc);
		}
	}
	pfree(tmp);
	if (absor)
		*absor |= bound;
	data += blo + bhi;
	return (const char *) p + MAXALIGN((const char *) data - p);
}

const char *
TesseraDecodeWide(const char *p, const char *end, int n, int128 *out)
{
	return TesseraDecodeWideBound(p, end, n, out, NULL);
}

#endif							/* HAVE_INT128 */

/* ---- random access ---- */

/* Bytes of the integer section at p (header included, padded), or 0 if malformed. */
static Size
int_section_size(const char *p, const char *end, int n, IntSectionHeader *hdr)
{
	Size		body;

	if (end - p < (ptrdiff_t) sizeof(IntSectionHeader))
		return 0;
	memcpy(hdr, p, sizeof(IntSectionHeader));
	if (hdr->count != (uint32) n || hdr->width > 64 || hdr->width2 > 64)
		return 0;
	switch (hdr->mode)
	{
		case INT_MODE_FOR:
			body = packed_bytes(n, hdr->width);
			break;
		case INT_MODE_STRIDE:
			if (hdr->base2 < 2)
				return 0;
			body = packed_bytes(n, hdr->width);
			break;
		case INT_MODE_DELTA:
			if (n == 0)
				return 0;
			body = packed_bytes(n - 1, hdr->width);
			break;
		case INT_MODE_RLE:
			if (hdr->runs == 0 || hdr->runs > (uint32) n)
				return 0;
			body = packed_bytes(hdr->runs, hdr->width) + packed_bytes(hdr->runs, hdr->width2);
			break;
		default:
			return 0;
	}
	if (sizeof(IntSectionHeader) + body > (Size) (end - p))
		return 0;
	return MAXALIGN(sizeof(IntSectionHeader) + body);
}

/*
 * TesseraIntsConstant
 *		Is every value of the integer section at p the same (as its
 *		encoding says: a zero-width frame, or a single run)?  *value is it.
 */
bool
TesseraIntsConstant(const char *p, const char *end, int n, int64 *value)
{
	IntSectionHeader hdr;
	const uint8 *data = (const uint8 *) p + sizeof(IntSectionHeader);

	if (n == 0 || int_section_size(p, end, n, &hdr) == 0)
		return false;
	if ((hdr.mode == INT_MODE_FOR && hdr.width == 0) ||
		(hdr.mode == INT_MODE_RLE && hdr.runs == 1))
	{
		*value = (int64) (unpack_one(data, 0, hdr.width) + (uint64) hdr.base);
		return true;
	}
	return false;
}

#ifdef HAVE_INT128
/*
 * TesseraIntsSum
 *		The sum of the integer section at p when its encoding gives it
 *		without decoding the values: a constant (n times it), an arithmetic
 *		progression (a zero-width delta section that stays within int64:
 *		n * first + step * n(n-1)/2) or runs (value times length, per run).
 *		False otherwise.
 */
bool
TesseraIntsSum(const char *p, const char *end, int n, int128 *sum)
{
	IntSectionHeader hdr;
	const uint8 *data = (const uint8 *) p + sizeof(IntSectionHeader);

	if (n == 0 || int_section_size(p, end, n, &hdr) == 0)
		return false;
	switch (hdr.mode)
	{
		case INT_MODE_FOR:
		case INT_MODE_STRIDE:
			if (hdr.width != 0)
				return false;
			*sum = (int128) n * hdr.base;
			return true;
		case INT_MODE_DELTA:
			{
				int128		last = (int128) hdr.first + (int128) hdr.base * (n - 1);

				/* the encoder's arithmetic wraps: only an unwrapped run */
				if (hdr.width != 0 || last < PG_INT64_MIN || last > PG_INT64_MAX)
					return false;
				*sum = (int128) n * hdr.first + (int128) hdr.base * ((int128) n * (n - 1) / 2);
				return true;
			}
		case INT_MODE_RLE:
			{
				Size		vbytes = packed_bytes(hdr.runs, hdr.width);
				int128		total = 0;
				uint64		rows = 0;

				for (uint32 r = 0; r < hdr.runs; r++)
				{
					int64		v = (int64) (unpack_one(data, r, hdr.width) + (uint64) hdr.base);
					uint64		len = unpack_one(data + vbytes, r, hdr.width2) +
						(uint64) hdr.base2;

					total += (int128) v * (int128) len;
					rows += len;
				}
				if (rows != (uint64) n)
					return false;
				*sum = total;
				return true;
			}
	}
	return false;
}
#endif

/*
 * TesseraIntsSumPacked
 *		TesseraIntsSum, and else the sum of a frame-of-reference or stride
 *		section from its packed offsets: n * base + stride * (the offsets'
 *		sum), the offsets unpacked a block at a time into an L1-resident
 *		buffer and added there, without writing a Datum per value (an
 *		unfiltered `SUM(x)` or `AVG(x)` of a bit-packed column: ClickBench's
 *		AVG(UserID) decoded 80 MB of Datums to add them).  False for other
 *		sections, or a stride whose product could pass 128 bits.
 */
bool
TesseraIntsSumPacked(const char *p, const char *end, int n, int128 *sum)
{
	IntSectionHeader hdr;
	const uint8 *data = (const uint8 *) p + sizeof(IntSectionHeader);
	uint128		offsets = 0;
	uint64		buf[SUM_BLOCK];
	uint32		buf32[SUM_BLOCK];

	if (TesseraIntsSum(p, end, n, sum))
		return true;
	if (n == 0 || int_section_size(p, end, n, &hdr) == 0 ||
		(hdr.mode != INT_MODE_FOR && hdr.mode != INT_MODE_STRIDE) || hdr.width > 64)
		return false;
	for (int off = 0; off < n; off += SUM_BLOCK)
	{
		int			m = Min(SUM_BLOCK, n - off);
		/* blocks start on a byte: SUM_BLOCK * width bits */
		const uint8 *in = data + ((Size) off / 8) * hdr.width;
		uint64		block = 0;

		if (hdr.width <= 32)
		{
			/* (m values under 2^32 each: the block's sum fits 64 bits) */
			unpack32_fixed[hdr.width] (in, m, buf32);
			for (int k = 0; k < m; k++)
				block += buf32[k];
			offsets += block;
		}
		else
		{
			unpack_bits(in, m, hdr.width, buf);
			for (int k = 0; k < m; k++)
				offsets += buf[k];
		}
	}
	if (hdr.mode == INT_MODE_STRIDE && hdr.base2 != 1)
	{
		/* |stride| < 2^62 and the offsets' sum < 2^64: the product fits */
		if (offsets >> 64 != 0 || hdr.base2 >= (INT64CONST(1) << 62) ||
			hdr.base2 <= -(INT64CONST(1) << 62))
			return false;
		*sum = (int128) n * hdr.base + (int128) (uint64) offsets * hdr.base2;
	}
	else
		*sum = (int128) n * hdr.base + (int128) offsets;
	return true;
}

/* The start of the section after the integer section at p, or NULL. */
const char *
TesseraSkipInts(const char *p, const char *end, int n)
{
	IntSectionHeader hdr;
	Size		size = int_section_size(p, end, n, &hdr);

	return size == 0 ? NULL : p + size;
}

/*
 * TesseraIntPrepare
 *		Make present, through ensure, the bytes of the integer section at p
 *		that TesseraIntAt reads for value idx: the header, and one packed
 *		value of a frame-of-reference section (nothing more of a constant or
 *		an arithmetic progression), all of a delta or run-length one.
 *		idx < 0 asks for the header only (to skip the section).  Returns the
 *		section's size, or 0 if its header is malformed.
 */
Size
TesseraIntPrepare(const char *p, const char *end, int n, int idx, TesseraEnsureFn ensure,
				  void *arg)
{
	IntSectionHeader hdr;
	Size		size;

	ensure(arg, p, sizeof(IntSectionHeader));
	size = int_section_size(p, end, n, &hdr);
	if (size == 0 || idx < 0 || idx >= n || hdr.width == 0)
		return size;
	if (hdr.mode == INT_MODE_FOR || hdr.mode == INT_MODE_STRIDE)
		ensure(arg, p + sizeof(IntSectionHeader) + ((uint64) idx * hdr.width) / 8,
			   sizeof(uint64) + 1);
	else
		ensure(arg, p, size);
	return size;
}

/*
 * Value idx (0 <= idx < n) of the section whose header is hdr, without
 * decoding the others (FOR: one unpack; DELTA: a prefix sum; RLE: a walk
 * over the runs).
 */
static bool
int_at(const IntSectionHeader *hdr, const uint8 *data, int n, int idx, int64 *out)
{
	switch (hdr->mode)
	{
		case INT_MODE_FOR:
			*out = (int64) (unpack_one(data, idx, hdr->width) + (uint64) hdr->base);
			return true;
		case INT_MODE_STRIDE:
			*out = (int64) (unpack_one(data, idx, hdr->width) * (uint64) hdr->base2 +
							(uint64) hdr->base);
			return true;
		case INT_MODE_DELTA:
			{
				uint64		acc = (uint64) hdr->first;

				if (hdr->width == 0)
					acc += (uint64) idx * (uint64) hdr->base;
				else
					for (int i = 0; i < idx; i++)
						acc += unpack_one(data, i, hdr->width) + (uint64) hdr->base;
				*out = (int64) acc;
				return true;
			}
		case INT_MODE_RLE:
			{
				Size		vbytes = packed_bytes(hdr->runs, hdr->width);
				uint64		pos = 0;

				for (uint32 r = 0; r < hdr->runs; r++)
				{
					pos += unpack_one(data + vbytes, r, hdr->width2) + (uint64) hdr->base2;
					if ((uint64) idx < pos)
					{
						*out = (int64) (unpack_one(data, r, hdr->width) + (uint64) hdr->base);
						return true;
					}
				}
				return false;
			}
	}
	return false;
}

/* TesseraIntAt: value idx of the integer section at p (int_at). */
bool
TesseraIntAt(const char *p, const char *end, int n, int idx, int64 *out)
{
	return TesseraIntAtIndexed(p, end, n, idx, out, NULL);
}

/*
 * TesseraGatherInts
 *		out[j] = value rows[j] of the integer section at p (rows ascending
 *		or not, each < n): one unpack per value for frame-of-reference
 *		sections; for the others a lookup each through index where one is
 *		given and few rows are read (TesseraIntAtIndexed), else a full
 *		decode.  False if malformed.
 */
static bool int_at_indexed(const IntSectionHeader *h, const uint8 *data, const char *end,
						   int n, int idx, int64 *out, TesseraValueIndex *index);

bool
TesseraGatherInts(const char *p, const char *end, int n, const int *rows, int m, int64 *out,
				  TesseraValueIndex *index)
{
	IntSectionHeader hdr;
	const uint8 *data = (const uint8 *) p + sizeof(IntSectionHeader);

	if (int_section_size(p, end, n, &hdr) == 0)
		return false;
	for (int j = 0; j < m; j++)
		if (rows[j] < 0 || rows[j] >= n)
			return false;
	switch (hdr.mode)
	{
		case INT_MODE_FOR:
		case INT_MODE_STRIDE:
			for (int j = 0; j < m; j++)
				(void) int_at(&hdr, data, n, rows[j], &out[j]);
			return true;
		default:
			if (index != NULL && (Size) m * 8 < (Size) n)
			{
				for (int j = 0; j < m; j++)
					if (!int_at_indexed(&hdr, data, end, n, rows[j], &out[j], index))
						return false;
				return true;
			}
			{
				int64	   *all = palloc(sizeof(int64) * Max(n, 1));
				bool		ok = TesseraDecodeInts(p, end, n, all) != NULL;

				if (ok)
					for (int j = 0; j < m; j++)
						out[j] = all[rows[j]];
				pfree(all);
				return ok;
			}
	}
}

/*
 * Delta sections keep the running value every DELTA_CP_EVERY values: a
 * lookup walks 7.5 deltas on average (a star join reads keys of a sorted
 * fact table, stored as deltas, for a few rows in each hundred).
 */
#define DELTA_CP_EVERY 16

/*
 * TesseraIntAtIndexed
 *		TesseraIntAt, with the running values of a delta section kept in
 *		index (built on first use), so that a lookup walks at most
 *		DELTA_CP_EVERY - 1 deltas instead of up to n, and the ends of a
 *		run-length section's runs, so that a lookup is a binary search
 *		instead of a walk over the runs.
 */
bool
TesseraIntAtIndexed(const char *p, const char *end, int n, int idx, int64 *out,
					TesseraValueIndex *index)
{
	IntSectionHeader hdr;
	const uint8 *data = (const uint8 *) p + sizeof(IntSectionHeader);

	if (idx < 0 || idx >= n || int_section_size(p, end, n, &hdr) == 0)
		return false;
	if (index == NULL)
		return int_at(&hdr, data, n, idx, out);
	return int_at_indexed(&hdr, data, end, n, idx, out, index);
}

/*
 * TesseraIntAtIndexed of the section whose header is hdr (checked by the
 * caller, as idx < n): a gather of many rows parses the header once, not
 * once a row.
 */
static bool
int_at_indexed(const IntSectionHeader *h, const uint8 *data, const char *end, int n, int idx,
			   int64 *out, TesseraValueIndex *index)
{
	IntSectionHeader hdr = *h;
	uint64	   *cps;
	uint64		acc;

	if (hdr.mode == INT_MODE_RLE && hdr.runs > 1)
	{
		/* where each run ends, then a binary search for the run of idx */
		Size		vbytes = packed_bytes(hdr.runs, hdr.width);
		uint32	   *ends = index->rle_ends;
		uint32		lo = 0,
					len = hdr.runs;

		if (ends == NULL)
		{
			uint64		pos = 0;
			uint64	   *lens;

			/*
			 * (the lengths unpacked in bulk: one by one, the index cost a
			 * star join reading 160 dates of a row group's 2,500 runs more
			 * than the reads it served, SSB q4.1)
			 */
			if ((const char *) data + vbytes + packed_bytes(hdr.runs, hdr.width2) > end)
				return false;
			ends = MemoryContextAlloc(index->cxt, sizeof(uint32) * hdr.runs);
			lens = palloc(sizeof(uint64) * hdr.runs);
			unpack_bits(data + vbytes, hdr.runs, hdr.width2, lens);
			for (uint32 r = 0; r < hdr.runs; r++)
			{
				pos += lens[r] + (uint64) hdr.base2;
				ends[r] = (uint32) Min(pos, (uint64) PG_UINT32_MAX);
			}
			pfree(lens);
			index->rle_ends = ends;
		}
		if ((uint64) idx >= ends[hdr.runs - 1])
			return false;

		/*
		 * Rows read in ascending order (a sparse batch's) find their run a
		 * few runs past the last one found: walked to, up to 32 runs.
		 */
		lo = index->rle_hint;
		if (lo < hdr.runs && (lo == 0 || ends[lo - 1] <= (uint32) idx))
		{
			for (uint32 stop = Min(lo + 32, hdr.runs); lo < stop; lo++)
				if ((uint32) idx < ends[lo])
					break;
			if (lo < hdr.runs && (uint32) idx < ends[lo])
				len = 1;
			else
				lo = 0;
		}
		else
			lo = 0;

		/*
		 * Else the first run ending past idx is in [lo, lo + len): halved
		 * with a conditional move, not a branch, which would be mispredicted
		 * half the time (a star join's probe of few rows: SSB q4.1)
		 */
		while (len > 1)
		{
			uint32		half = len / 2;

			lo = ends[lo + half - 1] <= (uint32) idx ? lo + half : lo;
			len -= half;
		}
		index->rle_hint = lo;
		*out = (int64) (unpack_one(data, lo, hdr.width) + (uint64) hdr.base);
		return true;
	}
	if (hdr.mode != INT_MODE_DELTA || hdr.width == 0)
		return int_at(&hdr, data, n, idx, out);
	cps = index->delta_cps;
	if (cps == NULL)
	{
		/* the deltas unpacked in bulk, as for the run ends above */
		uint64	   *deltas = palloc(sizeof(uint64) * Max(n, 1));

		cps = MemoryContextAlloc(index->cxt, sizeof(uint64) * (n / DELTA_CP_EVERY + 1));
		if (n > 1)
			unpack_bits(data, n - 1, hdr.width, deltas);
		acc = (uint64) hdr.first;
		for (int i = 0; i < n; i++)
		{
			if (i % DELTA_CP_EVERY == 0)
				cps[i / DELTA_CP_EVERY] = acc;
			if (i + 1 < n)
				acc += deltas[i] + (uint64) hdr.base;
		}
		pfree(deltas);
		index->delta_cps = cps;
	}
	acc = cps[idx / DELTA_CP_EVERY];
	for (int i = idx - idx % DELTA_CP_EVERY; i < idx; i++)
		acc += unpack_one(data, i, hdr.width) + (uint64) hdr.base;
	*out = (int64) acc;
	return true;
}

#ifdef HAVE_INT128

/* ---- filtering without decoding ---- */

#define FILTER_BLOCK 256
StaticAssertDecl(FILTER_BLOCK % 8 == 0, "a filter block must start on a byte");

/*
 * The rows of a run-length section that fail lo <= value <= hi (or, when
 * outside, pass it): each run compared once, its rows cleared together.
 * Rows 0..nsel-1, or those in idx[0..nidx) (ascending).
 */
static TesseraFilterResult
filter_runs(const IntSectionHeader *hdr, const uint8 *data, int n, int64 lo, int64 hi,
			bool outside, bool *sel, int nsel, const int *idx, int nidx)
{
	Size		vbytes = packed_bytes(hdr->runs, hdr->width);
	uint64		pos = 0;
	uint64		clear = 0;		/* rows [clear, pos) fail */
	int			j = 0;
	uint64		vals[FILTER_BLOCK];
	uint64		lens[FILTER_BLOCK];

	for (int k = 1; k < nidx; k++)
		if (idx[k] <= idx[k - 1])
			return TESSERA_FILTER_CANNOT;

	/*
	 * The runs' values and lengths unpacked FILTER_BLOCK at a time (a block
	 * starts on a byte), not one by one: a hash column stored as thousands
	 * of short runs per chunk spent its time in the unpacking.
	 */
	for (uint32 r0 = 0; r0 < hdr->runs; r0 += FILTER_BLOCK)
	{
		int			m = (int) Min((uint32) FILTER_BLOCK, hdr->runs - r0);

		unpack_bits(data + ((Size) r0 / 8) * hdr->width, m, hdr->width, vals);
		unpack_bits(data + vbytes + ((Size) r0 / 8) * hdr->width2, m, hdr->width2, lens);
		for (int k = 0; k < m; k++)
		{
			uint64		len = lens[k] + (uint64) hdr->base2;
			int64		v = (int64) (vals[k] + (uint64) hdr->base);
			bool		keep = (lo <= v && v <= hi) != outside;

			if (len == 0 || len > (uint64) n - pos)
				return TESSERA_FILTER_CORRUPT;
			if (idx != NULL)
			{
				for (; j < nidx && (uint64) idx[j] < pos + len; j++)
					if (!keep)
						sel[idx[j]] = false;
			}
			else if (keep)
			{
				/* the failing runs since the last kept one, cleared together */
				if (clear < Min(pos, (uint64) nsel))
					memset(sel + clear, false, Min(pos, (uint64) nsel) - clear);
				clear = pos + len;
			}
			pos += len;
		}
	}
	if (pos != (uint64) n)
		return TESSERA_FILTER_CORRUPT;
	if (idx == NULL && clear < (uint64) nsel)
		memset(sel + clear, false, nsel - clear);
	return TESSERA_FILTER_DONE;
}

/*
 * TesseraFilterInts
 *		sel[i] &= lo <= value i <= hi (when outside: sel[i] &= it does not
 *		hold, `x <> c` as the range [c, c]) over the integer section at p of
 *		n values: for the rows listed in idx[0..nidx) (ascending) if idx is
 *		given, else for rows 0..nsel-1.  A frame-of-reference section is
 *		compared packed: the bounds become bounds on the packed offsets,
 *		one unsigned comparison per value, and nothing is written but sel;
 *		a run-length one once per run.  Returns TESSERA_FILTER_CANNOT for
 *		delta sections (the caller decodes them) and TESSERA_FILTER_CORRUPT
 *		if the section is malformed.
 */
TesseraFilterResult
TesseraFilterInts(const char *p, const char *end, int n, int64 lo, int64 hi, bool outside,
				  bool *sel, int nsel, const int *idx, int nidx)
{
	IntSectionHeader hdr;
	const uint8 *data = (const uint8 *) p + sizeof(IntSectionHeader);
	uint64		stride = 1;
	int128		l,
				h;
	uint64		ulo,
				uhi,
				umax,
				span;
	uint8		flip = outside ? 1 : 0;
	uint64		buf[FILTER_BLOCK];
	uint32		buf32[FILTER_BLOCK];

	if (nsel > n || int_section_size(p, end, n, &hdr) == 0)
		return TESSERA_FILTER_CORRUPT;
	if (hdr.mode == INT_MODE_RLE)
		return filter_runs(&hdr, data, n, lo, hi, outside, sel, nsel, idx, nidx);
	if (hdr.mode == INT_MODE_STRIDE)
		stride = (uint64) hdr.base2;
	else if (hdr.mode != INT_MODE_FOR)
		return TESSERA_FILTER_CANNOT;

	/* value = base + u * stride: lo <= value <= hi as ulo <= u <= uhi */
	umax = hdr.width == 64 ? PG_UINT64_MAX : (UINT64CONST(1) << hdr.width) - 1;
	l = (int128) lo - hdr.base;
	h = (int128) hi - hdr.base;
	if (lo > hi || h < 0)
		goto none;
	ulo = l <= 0 ? 0 : (uint64) Min((l + stride - 1) / stride, (int128) PG_UINT64_MAX);
	uhi = (uint64) Min(h / stride, (int128) umax);
	if (ulo > uhi)
		goto none;
	if (ulo == 0 && uhi == umax)
		goto all;				/* every value is in range */
	span = uhi - ulo;

	if (idx != NULL)
	{
		for (int j = 0; j < nidx; j++)
		{
			int			i = idx[j];

			sel[i] &= (unpack_one(data, i, hdr.width) - ulo <= span) != outside;
		}
		return TESSERA_FILTER_DONE;
	}
	for (int off = 0; off < nsel; off += FILTER_BLOCK)
	{
		int			m = Min(FILTER_BLOCK, nsel - off);
		uint8	   *s = (uint8 *) (sel + off);
		/* blocks start on a byte: FILTER_BLOCK * width bits */
		const uint8 *in = data + (Size) off / 8 * hdr.width;

		if (hdr.width >= 1 && hdr.width <= 32)
		{
			/* 32-bit lanes: the comparison vectorizes */
			uint32		lo32 = (uint32) ulo,
						span32 = (uint32) span;

			unpack32_fixed[hdr.width] (in, m, buf32);
			for (int k = 0; k < m; k++)
				s[k] &= (uint8) ((uint32) (buf32[k] - lo32) <= span32) ^ flip;
		}
		else
		{
			unpack_bits(in, m, hdr.width, buf);
			for (int k = 0; k < m; k++)
				s[k] &= (uint8) (buf[k] - ulo <= span) ^ flip;
		}
	}
	return TESSERA_FILTER_DONE;

none:
	/* no value is in range */
	if (!outside)
		TesseraSelectNone(sel, nsel, idx, nidx);
	return TESSERA_FILTER_DONE;
all:
	if (outside)
		TesseraSelectNone(sel, nsel, idx, nidx);
	return TESSERA_FILTER_DONE;
}

/* sel = false for rows 0..nsel-1, or for those in idx[0..nidx). */
void
TesseraSelectNone(bool *sel, int nsel, const int *idx, int nidx)
{
	if (idx != NULL)
		for (int j = 0; j < nidx; j++)
			sel[idx[j]] = false;
	else
		memset(sel, false, nsel);
}

const char *
TesseraSkipWide(const char *p, const char *end, int n)
{
	WideSectionHeader hdr;
	uint64		count;
	Size		body;

	if (end - p < (ptrdiff_t) sizeof(hdr))
		return NULL;
	memcpy(&hdr, p, sizeof(hdr));
	if (hdr.count != (uint32) n || hdr.width > 128 ||
		(hdr.mode != INT_MODE_FOR && hdr.mode != INT_MODE_DELTA) ||
		(hdr.mode == INT_MODE_DELTA && n == 0))
		return NULL;
	count = (hdr.mode == INT_MODE_FOR) ? n : n - 1;
	body = packed_bytes(count, Min(hdr.width, 64)) + packed_bytes(count, Max(hdr.width - 64, 0));
	if (sizeof(hdr) + body > (Size) (end - p))
		return NULL;
	return p + MAXALIGN(sizeof(hdr) + body);
}

/* TesseraIntPrepare for the 128-bit sections TesseraWideAt reads. */
Size
TesseraWidePrepare(const char *p, const char *end, int n, int idx, TesseraEnsureFn ensure,
				   void *arg)
{
	WideSectionHeader hdr;
	const char *next;
	int			wlo,
				whi;
	Size		blo;

	ensure(arg, p, sizeof(hdr));
	next = TesseraSkipWide(p, end, n);
	if (next == NULL || idx < 0 || idx >= n)
		return next == NULL ? 0 : next - p;
	memcpy(&hdr, p, sizeof(hdr));
	if (hdr.mode != INT_MODE_FOR)
	{
		ensure(arg, p, next - p);
		return next - p;
	}
	wlo = Min(hdr.width, 64);
	whi = Max(hdr.width - 64, 0);
	blo = packed_bytes(n, wlo);
	if (wlo > 0)
		ensure(arg, p + sizeof(hdr) + ((uint64) idx * wlo) / 8, sizeof(uint64) + 1);
	if (whi > 0)
		ensure(arg, p + sizeof(hdr) + blo + ((uint64) idx * whi) / 8, sizeof(uint64) + 1);
	return next - p;
}

bool
TesseraWideAt(const char *p, const char *end, int n, int idx, int128 *out)
{
	WideSectionHeader hdr;
	const uint8 *data = (const uint8 *) p + sizeof(hdr);
	int			wlo,
				whi;
	uint64		count;
	Size		blo;
	uint128		base;

	if (idx < 0 || idx >= n || TesseraSkipWide(p, end, n) == NULL)
		return false;
	memcpy(&hdr, p, sizeof(hdr));
	wlo = Min(hdr.width, 64);
	whi = Max(hdr.width - 64, 0);
	count = (hdr.mode == INT_MODE_FOR) ? n : n - 1;
	blo = packed_bytes(count, wlo);
	base = ((uint128) (uint64) hdr.base_hi << 64) | hdr.base_lo;

#define WIDE_AT(i) (((uint128) unpack_one(data, (i), wlo)) | \
					(whi > 0 ? ((uint128) unpack_one(data + blo, (i), whi)) << 64 : 0))

	if (hdr.mode == INT_MODE_FOR)
		*out = (int128) (WIDE_AT(idx) + base);
	else
	{
		uint128		acc = ((uint128) (uint64) hdr.first_hi << 64) | hdr.first_lo;

		for (int i = 0; i < idx; i++)
			acc += WIDE_AT(i) + base;
		*out = (int128) acc;
	}
#undef WIDE_AT
	return true;
}

/* TesseraWideAt with checkpoints (see TesseraIntAtIndexed). */
bool
TesseraWideAtIndexed(const char *p, const char *end, int n, int idx, int128 *out,
					 TesseraValueIndex *index)
{
	WideSectionHeader hdr;
	const uint8 *data = (const uint8 *) p + sizeof(hdr);
	int			wlo,
				whi;
	Size		blo;
	uint128		base,
				acc;
	uint128    *cps;

	if (index == NULL || idx < 0 || idx >= n || TesseraSkipWide(p, end, n) == NULL)
		return TesseraWideAt(p, end, n, idx, out);
	memcpy(&hdr, p, sizeof(hdr));
	if (hdr.mode != INT_MODE_DELTA)
		return TesseraWideAt(p, end, n, idx, out);
	wlo = Min(hdr.width, 64);
	whi = Max(hdr.width - 64, 0);
	blo = packed_bytes(n - 1, wlo);
	base = ((uint128) (uint64) hdr.base_hi << 64) | hdr.base_lo;

#define WIDE_AT(i) (((uint128) unpack_one(data, (i), wlo)) | \
					(whi > 0 ? ((uint128) unpack_one(data + blo, (i), whi)) << 64 : 0))

	cps = index->delta_cps;
	if (cps == NULL)
	{
		cps = MemoryContextAlloc(index->cxt, sizeof(uint128) * (n / DELTA_CP_EVERY + 1));
		acc = ((uint128) (uint64) hdr.first_hi << 64) | hdr.first_lo;
		for (int i = 0; i < n; i++)
		{
			if (i % DELTA_CP_EVERY == 0)
				cps[i / DELTA_CP_EVERY] = acc;
			if (i + 1 < n)
				acc += WIDE_AT(i) + base;
		}
		index->delta_cps = cps;
	}
	acc = cps[idx / DELTA_CP_EVERY];
	for (int i = idx - idx % DELTA_CP_EVERY; i < idx; i++)
		acc += WIDE_AT(i) + base;
#undef WIDE_AT
	*out = (int128) acc;
	return true;
}
#endif
