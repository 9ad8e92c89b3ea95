/*-------------------------------------------------------------------------
 *
 * memory.c
 *	  Memory for the large tables the executor builds per query and reads
 *	  at random: star join dimensions, groupings, memos.
 *
 * IDENTIFICATION
 *	  src/vector/memory.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "utils/memutils.h"

#include "tessera/tessera.h"

/*
 * TesseraAllocLarge
 *		Memory for a table the executor builds per query and reads at
 *		random: a star join's dimension (TPC-H Q12's 1.5M orders: a 24 MB
 *		direct-mapped key table), a grouping's states and hash slots, a
 *		memo.  Fresh memory is a page fault per 4 kB page touched, and
 *		random lookups miss the TLB on as many; with transparent huge pages
 *		(the kernel's "madvise" mode, Debian's default) the whole 2 MB-
 *		aligned interior of the allocation is asked for as huge pages before
 *		it is first written (zeroed here when asked, after the advice).  Q12
 *		100 -> 78 ms.  Below 4 MB, or where the kernel refuses, it is an
 *		ordinary allocation.
 */
void *
TesseraAllocLarge(MemoryContext cxt, Size size, int flags)
{
	void	   *p = MemoryContextAllocExtended(cxt, size,
											   (flags | MCXT_ALLOC_HUGE) & ~MCXT_ALLOC_ZERO);

#if defined(MADV_HUGEPAGE)
	if (p != NULL && size >= (Size) 4 * 1024 * 1024)
	{
		const uintptr_t huge = (uintptr_t) 2 * 1024 * 1024;
		uintptr_t	start = TYPEALIGN(huge, (uintptr_t) p);
		uintptr_t	end = ((uintptr_t) p + size) & ~(huge - 1);

		if (end > start)
			(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
	}
#endif
	if (p != NULL && (flags & MCXT_ALLOC_ZERO))
		memset(p, 0, size);
	return p;
}

/*
 * TesseraReallocLarge
 *		repalloc_huge for such a table growing by doubling: past 4 MB the
 *		new memory is advised before the old contents are copied into it
 *		(repalloc's copy would fault it in 4 kB at a time first).
 */
void *
TesseraReallocLarge(void *p, Size oldsize, Size newsize)
{
	void	   *q;

	if (newsize < (Size) 4 * 1024 * 1024)
		return repalloc_huge(p, newsize);
	q = TesseraAllocLarge(GetMemoryChunkContext(p), newsize, 0);
	memcpy(q, p, Min(oldsize, newsize));
	pfree(p);
	return q;
}
