/*-------------------------------------------------------------------------
 *
 * checksum_avx2.c
 *	  XXH3 built with AVX2 (the Makefile compiles this file with -mavx2
 *	  where the compiler takes it); checksum.c calls it only on CPUs that
 *	  have AVX2.
 *
 * IDENTIFICATION
 *	  src/encoding/checksum_avx2.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tessera/format.h"

#ifdef __AVX2__
const bool	TesseraXXH3HaveAVX2 = true;
#else
const bool	TesseraXXH3HaveAVX2 = false;
#endif

/* TesseraXXH3AVX2: XXH3_64bits, AVX2 where this file was built with it */
uint64
TesseraXXH3AVX2(const void *data, size_t len)
{
	return (uint64) XXH3_64bits(data, len);
}
