/*-------------------------------------------------------------------------
 *
 * bitpack.h
 *	  Bit-packed integers, private to src/encoding: n values of a fixed
 *	  width each, one after the other with no padding between them.
 *
 * NOTES
 *	  Readers may load a few bytes past the last value (a 16-byte load at
 *	  the most): every buffer they read ends in TESSERA_DECODE_PADDING
 *	  zeroed bytes.
 *
 * IDENTIFICATION
 *	  src/encoding/bitpack.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_BITPACK_H
#define TESSERA_BITPACK_H

#include "port/pg_bitutils.h"

static inline int
bits_for(uint64 range)
{
	return range == 0 ? 0 : pg_leftmost_one_pos64(range) + 1;
}

static inline Size
packed_bytes(uint64 n, int width)
{
	return (Size) ((n * (uint64) width + 7) / 8);
}

static inline uint64
unpack_one(const uint8 *in, uint64 i, int width)
{
	uint64		bitpos = i * width;
	Size		byte = bitpos >> 3;
	int			shift = bitpos & 7;
	uint64		word;
	uint64		v;

	if (width == 0)
		return 0;
	memcpy(&word, in + byte, sizeof(word));
	if (width == 64 && shift == 0)
		return word;
	v = word >> shift;
	if (shift + width > 64)
		v |= ((uint64) in[byte + 8]) << (64 - shift);
	return width == 64 ? v : v & ((UINT64CONST(1) << width) - 1);
}

typedef void (*Unpack32Fn) (const uint8 *in, uint64 n, uint32 *out);

/* unpack32_fixed[w]: n values of width w (1..32) into uint32s */
extern const Unpack32Fn unpack32_fixed[33];

extern void pack_bits(const uint64 *vals, uint64 n, int width, uint8 *out);
extern void unpack_bits(const uint8 *in, uint64 n, int width, uint64 *out);

#endif							/* TESSERA_BITPACK_H */
