/*-------------------------------------------------------------------------
 *
 * strmatch.h
 *	  Byte-wise matching of a VEC_STRING qual's value, private to
 *	  src/vector: substring search, LIKE patterns of literals between
 *	  '%'s, ILIKE's ASCII lowering (strmatch.c; filter.c decides when).
 *
 * IDENTIFICATION
 *	  src/vector/strmatch.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_STRMATCH_H
#define TESSERA_STRMATCH_H

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "port/pg_bitutils.h"

#include "tessera/vector.h"

/*
 * The first occurrence of needle (nlen bytes) in hay, or NULL: memmem's
 * answer.  A row's value is short (TPC-H's comments, ClickBench's URLs),
 * and glibc's memmem builds a shift table per call, a third of TPC-H q13:
 * here 16 positions at a time whose first and last bytes both match the
 * needle's (two compares and a movemask), each such candidate checked
 * whole, never reading past the value.
 */
static inline const char *
find_bytes(const char *hay, int hlen, const char *needle, int nlen)
{
	if (nlen <= 0 || nlen > hlen)
		return nlen <= 0 ? hay : NULL;
#ifdef __SSE2__
	if (nlen >= 2)
	{
		const __m128i first = _mm_set1_epi8(needle[0]);
		const __m128i last = _mm_set1_epi8(needle[nlen - 1]);
		int			i = 0;

		for (; i + nlen - 1 + 16 <= hlen; i += 16)
		{
			__m128i		bf = _mm_loadu_si128((const __m128i *) (hay + i));
			__m128i		bl = _mm_loadu_si128((const __m128i *) (hay + i + nlen - 1));
			uint32		mask = (uint32) _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(first, bf),
																		_mm_cmpeq_epi8(last, bl)));

			while (mask != 0)
			{
				int			at = i + pg_rightmost_one_pos32(mask);

				if (memcmp(hay + at + 1, needle + 1, nlen - 2) == 0)
					return hay + at;
				mask &= mask - 1;
			}
		}
		for (; i + nlen <= hlen; i++)
			if (hay[i] == needle[0] && hay[i + nlen - 1] == needle[nlen - 1] &&
				memcmp(hay + i + 1, needle + 1, nlen - 2) == 0)
				return hay + i;
		return NULL;
	}
#endif
	if (nlen == 1)
		return memchr(hay, needle[0], hlen);
	return memmem(hay, (size_t) hlen, needle, (size_t) nlen);
}

extern void TesseraStringParts(VecQual *vq, const char *p, int from, int to);
extern bool TesseraStringPartsMatch(const VecQual *vq, const char *p, int len);
extern bool TesseraCollationLowersAscii(Oid collation);
extern const char *TesseraStringLowered(VecQual *vq, const char *p, int len);

#endif							/* TESSERA_STRMATCH_H */
