/*-------------------------------------------------------------------------
 *
 * strmatch.c
 *	  Byte-wise matching of string vector quals: a LIKE pattern's literals
 *	  between '%'s, and ILIKE's lowering of ASCII values.
 *
 * NOTES
 *	  filter.c prepares a VEC_STRING qual's shape once per scan and calls
 *	  these per value (or per dictionary entry); what they cannot decide
 *	  (a value that is not ASCII, for ILIKE) goes to the operator's
 *	  function there.
 *
 * IDENTIFICATION
 *	  src/vector/strmatch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"

#include "tessera/vector.h"
#include "strmatch.h"

/*
 * Split a LIKE pattern's bytes between its first and last literal (no
 * '_' or '\' in it) at its runs of '%' into vq->parts.
 */
void
TesseraStringParts(VecQual *vq, const char *p, int from, int to)
{
	int			i = from;

	vq->parts = palloc(sizeof(int) * 2 * (to - from + 1));
	vq->nparts = 0;
	while (i < to)
	{
		int			start = i;

		while (i < to && p[i] != '%')
			i++;
		vq->parts[2 * vq->nparts] = start;
		vq->parts[2 * vq->nparts + 1] = i - start;
		vq->nparts++;
		while (i < to && p[i] == '%')
			i++;
	}
}

/*
 * Does a value's bytes match vq's literals in order, the first at its start
 * unless the pattern starts with '%', the last at its end unless it ends
 * with '%'?  Each literal's leftmost match after the previous one's is the
 * right one to take: with '%' the only wildcard, a later match leaves less
 * room for the rest and gains nothing.
 */
bool
TesseraStringPartsMatch(const VecQual *vq, const char *p, int len)
{
	int			pos = 0,
				end = len,
				first = 0,
				last = vq->nparts;

	if (!vq->open_start)
	{
		int			l = vq->parts[1];

		if (len < l || memcmp(p, vq->sbytes + vq->parts[0], l) != 0)
			return false;
		pos = l;
		first = 1;
	}
	if (!vq->open_end)
	{
		int			l = vq->parts[2 * (last - 1) + 1];

		if (end - pos < l || memcmp(p + end - l, vq->sbytes + vq->parts[2 * (last - 1)], l) != 0)
			return false;
		end -= l;
		last--;
	}
	for (int k = first; k < last; k++)
	{
		int			l = vq->parts[2 * k + 1];
		const char *found = end - pos >= l ?
			find_bytes(p + pos, end - pos, vq->sbytes + vq->parts[2 * k], l) : NULL;

		if (found == NULL)
			return false;
		pos = (found - p) + l;
	}
	return true;
}

/*
 * Does lower() in this collation turn every ASCII character into its ASCII
 * lower case, one for one?  Then the lower() of an ASCII string is its
 * ASCII lowering (libc's towlower and ICU's case mapping are per character
 * for ASCII input; a Turkish locale's dotless i is what this catches).
 */
bool
TesseraCollationLowersAscii(Oid collation)
{
	char		all[127];
	text	   *t;
	text	   *low;

	for (int c = 1; c < 128; c++)
		all[c - 1] = (char) c;
	t = cstring_to_text_with_len(all, sizeof(all));
	low = DatumGetTextPP(DirectFunctionCall1Coll(lower, collation, PointerGetDatum(t)));
	if (VARSIZE_ANY_EXHDR(low) != sizeof(all))
		return false;
	for (int i = 0; i < (int) sizeof(all); i++)
		if (VARDATA_ANY(low)[i] != pg_ascii_tolower(all[i]))
			return false;
	return true;
}

/*
 * The ASCII lowering of a value's len bytes (ILIKE), in vq->lowered; NULL
 * if one of them is not ASCII.
 */
const char *
TesseraStringLowered(VecQual *vq, const char *p, int len)
{
	char	   *out;
	int			i = 0;

	if (vq->lcap < len)
	{
		vq->lcap = Max(len, Max(vq->lcap * 2, 256));
		if (vq->lowered != NULL)
			pfree(vq->lowered);
		vq->lowered = MemoryContextAlloc(GetMemoryChunkContext(DatumGetPointer(vq->dval)),
										 vq->lcap);
	}
	out = vq->lowered;
#ifdef __SSE2__
	for (; i + 16 <= len; i += 16)
	{
		__m128i		c = _mm_loadu_si128((const __m128i *) (p + i));
		/* 'A'..'Z' get 0x20 added; a byte with its top bit set is not ASCII */
		__m128i		upper = _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('A' - 1)),
										  _mm_cmplt_epi8(c, _mm_set1_epi8('Z' + 1)));

		if (_mm_movemask_epi8(c) != 0)
			return NULL;
		_mm_storeu_si128((__m128i *) (out + i),
						 _mm_add_epi8(c, _mm_and_si128(upper, _mm_set1_epi8(0x20))));
	}
#endif
	for (; i < len; i++)
	{
		if (IS_HIGHBIT_SET(p[i]))
			return NULL;
		out[i] = pg_ascii_tolower(p[i]);
	}
	return out;
}
