/*-------------------------------------------------------------------------
 *
 * star_probe_avx2.c
 *	  A star join's probe of every row of a batch with AVX2 (the Makefile
 *	  compiles this file with -mavx2 where the compiler takes it; star.c
 *	  calls it only on CPUs that have AVX2): eight 32-bit keys at a time,
 *	  their bits gathered from the dimension's bitmap and, for the rows
 *	  that match, their rows from its direct table.
 *
 * NOTES
 *	  The scalar loop (star.c STAR_PROBE_LOOP) spends about eight cycles a
 *	  row, most of a star join's time where one dimension keeps few rows
 *	  (SSB q3.4: 53% of the query).  The same steps on eight lanes: the
 *	  key's slot in the range (wrapping below it), the range test unsigned,
 *	  the bit's 32-bit word gathered where the slot is inside, the bit
 *	  shifted out; the lanes' results become eight bools at once.
 *
 * IDENTIFICATION
 *	  src/executor/star_probe_avx2.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "tessera/tableam.h"
#include "nodes.h"

#ifdef __AVX2__
#include <immintrin.h>

const bool	TesseraStarHaveAVX2 = true;

/* byte_of[m]: eight bools, one per bit of m */
static uint64 byte_of[256];
static bool byte_of_ready = false;

/*
 * TesseraStarProbe32AVX2
 *		Rows [0, n8) of a batch (n8 a multiple of 8) whose keys are the
 *		Datums of 32-bit values (int4, date): a row hits where it is still
 *		counted (ok), its key is not NULL, and key - min is a slot of the
 *		bitmap present (span + 1 slots) whose bit is set.  ok becomes hit
 *		(anti: ok and not hit); match, where not NULL, the hit's row in
 *		direct (0 without one) or -1.  min and min + span must be int32.
 */
void
TesseraStarProbe32AVX2(const Datum *keys, const bool *keynull, bool *ok, int32 *match, int n8,
					   int32 min, uint32 span, const uint64 *present, const int32 *direct,
					   bool anti)
{
	const __m256i vmin = _mm256_set1_epi32(min);
	const __m256i vspan = _mm256_set1_epi32((int32) span);
	const __m256i low_dwords = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
	const __m256i thirty_one = _mm256_set1_epi32(31);
	const __m256i one = _mm256_set1_epi32(1);
	const __m256i none = _mm256_set1_epi32(-1);
	const uint64 ones = UINT64CONST(0x0101010101010101);
	int			skipped = 0;
	bool		skip = false;

	if (!byte_of_ready)
	{
		for (int m = 0; m < 256; m++)
		{
			uint64		v = 0;

			for (int b = 0; b < 8; b++)
				if (m & (1 << b))
					v |= UINT64CONST(1) << (8 * b);
			byte_of[m] = v;
		}
		byte_of_ready = true;
	}
	for (int i = 0; i < n8; i += 8)
	{
		/* the low 32 bits of eight Datums */
		__m256i		a = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *) (keys + i)),
													low_dwords);
		__m256i		b = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *) (keys + i + 4)),
													low_dwords);
		__m256i		key = _mm256_blend_epi32(a, b, 0xF0);
		__m256i		slot = _mm256_sub_epi32(key, vmin);
		uint64		okb;
		uint64		nullb;
		uint64		hitb = 0;
		__m256i		cand;
		bool		any;

		memcpy(&okb, ok + i, 8);
		memcpy(&nullb, keynull + i, 8);
		/* the lanes still counted, not NULL, with slot <= span (unsigned) */
		cand = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((int64) (okb & ~nullb & ones)));
		cand = _mm256_and_si256(_mm256_cmpgt_epi32(cand, _mm256_setzero_si256()),
								_mm256_cmpeq_epi32(_mm256_max_epu32(slot, vspan), vspan));
		any = !_mm256_testz_si256(cand, cand);

		/*
		 * A gather costs about what the rest does: eight lanes none of which
		 * can hit skip it, where that is the usual case (the first 16 groups
		 * tell); elsewhere a branch on it would be mispredicted too often
		 */
		if (i < 8 * 16)
		{
			skipped += !any;
			skip = skipped * 4 > i / 8 * 3;
		}
		if (skip && !any)
		{
			okb = anti ? okb : 0;
			memcpy(ok + i, &okb, 8);
			if (match != NULL)
				_mm256_storeu_si256((__m256i *) (match + i), none);
			continue;
		}
		{
			__m256i		word = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(),
														   (const int *) present,
														   _mm256_srli_epi32(slot, 5), cand, 4);
			__m256i		bit = _mm256_and_si256(_mm256_srlv_epi32(word, _mm256_and_si256(slot, thirty_one)),
											   one);
			__m256i		hit = _mm256_cmpeq_epi32(bit, one);

			/* (lanes outside cand gathered 0: no hit) */
			hitb = byte_of[_mm256_movemask_ps(_mm256_castsi256_ps(hit))];
			okb = anti ? okb & (hitb ^ ones) : hitb;
			memcpy(ok + i, &okb, 8);
			if (match != NULL)
			{
				__m256i		row;

				if (direct != NULL)
					row = _mm256_mask_i32gather_epi32(none, (const int *) direct, slot, hit, 4);
				else
					row = _mm256_andnot_si256(hit, none);
				_mm256_storeu_si256((__m256i *) (match + i), row);
			}
		}
	}
}

#else

const bool	TesseraStarHaveAVX2 = false;

void
TesseraStarProbe32AVX2(const Datum *keys, const bool *keynull, bool *ok, int32 *match, int n8,
					   int32 min, uint32 span, const uint64 *present, const int32 *direct,
					   bool anti)
{
	elog(ERROR, "TesseraAgg: built without AVX2");
}

#endif							/* __AVX2__ */
