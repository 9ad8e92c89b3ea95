/*-------------------------------------------------------------------------
 *
 * bitpack.c
 *	  Packing and unpacking integers of a fixed bit width (bitpack.h): the
 *	  kernels under every integer section (intcodec.c), specialized per
 *	  width so that offsets and shifts are constants.
 *
 * IDENTIFICATION
 *	  src/encoding/bitpack.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "bitpack.h"

typedef void (*UnpackFn) (const uint8 *in, uint64 n, uint64 *out);

/*
 * Pack n values of width bits (each below 2^width) into out, which holds
 * packed_bytes: the bits gather in a register and go out a word at a time
 * (a load and store of the output per value made each wait on the last).
 */
void
pack_bits(const uint64 *vals, uint64 n, int width, uint8 *out)
{
	uint64		acc = 0;
	int			fill = 0;

	if (width == 0)
		return;
	if (width == 64)
	{
		memcpy(out, vals, n * sizeof(uint64));
		return;
	}
	for (uint64 i = 0; i < n; i++)
	{
		uint64		v = vals[i];

		acc |= v << fill;
		fill += width;
		if (fill >= 64)
		{
			memcpy(out, &acc, sizeof(acc));
			out += sizeof(acc);
			fill -= 64;
			/* the bits of v that did not fit */
			acc = fill > 0 ? v >> (width - fill) : 0;
		}
	}
	if (fill > 0)
		memcpy(out, &acc, (fill + 7) / 8);
}

/*
 * Unpacking a width known at compile time: eight values take exactly
 * `width` bytes, so every load offset and shift in the unrolled body is a
 * constant and the loop runs several times faster than the generic one.
 * Widths up to 32 are the common ones (codes, dates, small counts, scaled
 * decimals); wider ones take the generic loop.
 */
#define UNPACK_ONE(K, W, T, WORD) \
	do { \
		WORD		word; \
\
		memcpy(&word, in + ((K) * (W)) / 8, sizeof(word)); \
		out[i + (K)] = (T) ((word >> (((K) * (W)) % 8)) & mask); \
	} while (0)

/*
 * NAME<W>: n values of width W into Ts, each read from a WORD loaded at its
 * first byte (a value spans at most 8 bytes up to 56 bits, 9 past them)
 */
#define UNPACK_LOOP(W, NAME, T, WORD) \
static void \
NAME##W(const uint8 *in, uint64 n, T *out) \
{ \
	const uint64 mask = (UINT64CONST(1) << (W)) - 1; \
	uint64		i = 0; \
\
	for (; i + 8 <= n; i += 8, in += (W)) \
	{ \
		UNPACK_ONE(0, W, T, WORD); UNPACK_ONE(1, W, T, WORD); \
		UNPACK_ONE(2, W, T, WORD); UNPACK_ONE(3, W, T, WORD); \
		UNPACK_ONE(4, W, T, WORD); UNPACK_ONE(5, W, T, WORD); \
		UNPACK_ONE(6, W, T, WORD); UNPACK_ONE(7, W, T, WORD); \
	} \
	for (uint64 bitpos = 0; i < n; i++, bitpos += (W)) \
	{ \
		WORD		word; \
\
		memcpy(&word, in + (bitpos >> 3), sizeof(word)); \
		out[i] = (T) ((word >> (bitpos & 7)) & mask); \
	} \
}

/* unpack_w<W> into uint64s, unpack32_w<W> into uint32s (filters compare those) */
#define UNPACK_FIXED_AS(W, NAME, T) UNPACK_LOOP(W, NAME, T, uint64)
#define UNPACK_FIXED(W) \
	UNPACK_FIXED_AS(W, unpack_w, uint64) \
	UNPACK_FIXED_AS(W, unpack32_w, uint32)

UNPACK_FIXED(1) UNPACK_FIXED(2) UNPACK_FIXED(3) UNPACK_FIXED(4)
UNPACK_FIXED(5) UNPACK_FIXED(6) UNPACK_FIXED(7) UNPACK_FIXED(8)
UNPACK_FIXED(9) UNPACK_FIXED(10) UNPACK_FIXED(11) UNPACK_FIXED(12)
UNPACK_FIXED(13) UNPACK_FIXED(14) UNPACK_FIXED(15) UNPACK_FIXED(16)
UNPACK_FIXED(17) UNPACK_FIXED(18) UNPACK_FIXED(19) UNPACK_FIXED(20)
UNPACK_FIXED(21) UNPACK_FIXED(22) UNPACK_FIXED(23) UNPACK_FIXED(24)
UNPACK_FIXED(25) UNPACK_FIXED(26) UNPACK_FIXED(27) UNPACK_FIXED(28)
UNPACK_FIXED(29) UNPACK_FIXED(30) UNPACK_FIXED(31) UNPACK_FIXED(32)

/*
 * Widths 33 to 63 likewise, into uint64s (a random bigint of a range, such
 * as ClickBench's UserID: 51-63 bits): past 56 bits a value can span nine
 * bytes, read as one 16-byte load and a 128-bit shift (the decode padding
 * covers the bytes past the last value).
 */
#ifdef HAVE_INT128
#define UNPACK_WIDE(W) UNPACK_LOOP(W, unpack_w, uint64, uint128)

UNPACK_WIDE(33) UNPACK_WIDE(34) UNPACK_WIDE(35) UNPACK_WIDE(36)
UNPACK_WIDE(37) UNPACK_WIDE(38) UNPACK_WIDE(39) UNPACK_WIDE(40)
UNPACK_WIDE(41) UNPACK_WIDE(42) UNPACK_WIDE(43) UNPACK_WIDE(44)
UNPACK_WIDE(45) UNPACK_WIDE(46) UNPACK_WIDE(47) UNPACK_WIDE(48)
UNPACK_WIDE(49) UNPACK_WIDE(50) UNPACK_WIDE(51) UNPACK_WIDE(52)
UNPACK_WIDE(53) UNPACK_WIDE(54) UNPACK_WIDE(55) UNPACK_WIDE(56)
UNPACK_WIDE(57) UNPACK_WIDE(58) UNPACK_WIDE(59) UNPACK_WIDE(60)
UNPACK_WIDE(61) UNPACK_WIDE(62) UNPACK_WIDE(63)
#endif


#define UNPACK_TABLE(NAME) { \
	NULL, NAME##1, NAME##2, NAME##3, NAME##4, NAME##5, NAME##6, NAME##7, NAME##8, \
	NAME##9, NAME##10, NAME##11, NAME##12, NAME##13, NAME##14, NAME##15, NAME##16, \
	NAME##17, NAME##18, NAME##19, NAME##20, NAME##21, NAME##22, NAME##23, NAME##24, \
	NAME##25, NAME##26, NAME##27, NAME##28, NAME##29, NAME##30, NAME##31, NAME##32 }

static const UnpackFn unpack_fixed[33] = UNPACK_TABLE(unpack_w);
const Unpack32Fn unpack32_fixed[33] = UNPACK_TABLE(unpack32_w);

#ifdef HAVE_INT128
/* unpack_wide[w - 33] for widths 33..63 */
static const UnpackFn unpack_wide[31] = {
	unpack_w33, unpack_w34, unpack_w35, unpack_w36, unpack_w37, unpack_w38, unpack_w39,
	unpack_w40, unpack_w41, unpack_w42, unpack_w43, unpack_w44, unpack_w45, unpack_w46,
	unpack_w47, unpack_w48, unpack_w49, unpack_w50, unpack_w51, unpack_w52, unpack_w53,
	unpack_w54, unpack_w55, unpack_w56, unpack_w57, unpack_w58, unpack_w59, unpack_w60,
	unpack_w61, unpack_w62, unpack_w63
};
#endif

void
unpack_bits(const uint8 *in, uint64 n, int width, uint64 *out)
{
	uint64		mask;
	uint64		bitpos = 0;

	if (width == 0)
	{
		memset(out, 0, n * sizeof(uint64));
		return;
	}
	if (width <= 32)
	{
		unpack_fixed[width] (in, n, out);
		return;
	}
	if (width == 64)
	{
		memcpy(out, in, n * sizeof(uint64));
		return;
	}
#ifdef HAVE_INT128
	if (width < 64)
	{
		unpack_wide[width - 33] (in, n, out);
		return;
	}
#endif
	mask = (UINT64CONST(1) << width) - 1;
	if (width <= 56)
	{
		for (uint64 i = 0; i < n; i++)
		{
			uint64		word;

			memcpy(&word, in + (bitpos >> 3), sizeof(word));
			out[i] = (word >> (bitpos & 7)) & mask;
			bitpos += width;
		}
		return;
	}
	for (uint64 i = 0; i < n; i++)
	{
		Size		byte = bitpos >> 3;
		int			shift = bitpos & 7;
		uint64		word;
		uint64		v;

		memcpy(&word, in + byte, sizeof(word));
		v = word >> shift;
		if (shift + width > 64)
			v |= ((uint64) in[byte + 8]) << (64 - shift);
		out[i] = v & mask;
		bitpos += width;
	}
}
