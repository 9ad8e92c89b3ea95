/*-------------------------------------------------------------------------
 *
 * checksum.c
 *	  The XXH3 checksum of chunks and frames, at the widest vectors the CPU
 *	  has.
 *
 * NOTES
 *	  Every chunk a scan reads is checked against its stored XXH3 before
 *	  anything is decoded from it, so the hash runs over every byte a scan
 *	  reads.  Built for the baseline x86-64 (SSE2) it ran at 21 GB/s and
 *	  was 14% of ClickBench's AVG(UserID); the AVX2 build of the same
 *	  header (checksum_avx2.c, compiled with -mavx2 where the compiler
 *	  takes it) runs at 74 GB/s.  XXH3's value does not depend on the
 *	  vector width, so the AVX2 one is used wherever the CPU has AVX2,
 *	  decided once per process.
 *
 * IDENTIFICATION
 *	  src/encoding/checksum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

/* the header-only build of Debian's libxxhash: nothing to link */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tessera/format.h"

typedef uint64 (*XXH3Fn) (const void *data, size_t len);

static uint64 xxh3_first(const void *data, size_t len);
static XXH3Fn xxh3_fn = xxh3_first;

/* the baseline build */
static uint64
xxh3_baseline(const void *data, size_t len)
{
	return (uint64) XXH3_64bits(data, len);
}

/* the first call picks the build */
static uint64
xxh3_first(const void *data, size_t len)
{
	xxh3_fn = xxh3_baseline;
#if defined(__x86_64__) && defined(__GNUC__)
	if (TesseraXXH3HaveAVX2 && __builtin_cpu_supports("avx2"))
		xxh3_fn = TesseraXXH3AVX2;
#endif
	return xxh3_fn(data, len);
}

/* TesseraXXH3: XXH3_64bits of len bytes at data */
uint64
TesseraXXH3(const void *data, size_t len)
{
	return xxh3_fn(data, len);
}
