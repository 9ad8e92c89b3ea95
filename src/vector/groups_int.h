/*-------------------------------------------------------------------------
 *
 * groups_int.h
 *	  What the two halves of the group tables share: groups.c maps rows to
 *	  groups, group_keys.c turns a batch's key columns into ids (values, or
 *	  interned strings).
 *
 * IDENTIFICATION
 *	  src/vector/groups_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_GROUPS_INT_H
#define TESSERA_GROUPS_INT_H

#include "tessera/vector.h"

/* the header-only build of Debian's libxxhash: nothing to link */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* The hash strings are interned by (XXH3: a few ns for a short string). */
static inline uint32
key_string_hash(const char *data, int len)
{
	return (uint32) XXH3_64bits(data, len);
}

/* Has the table made all the groups its limit allows? */
static inline bool
groups_full(const TesseraGroups *gt)
{
	return gt->limit > 0 && gt->ngroups >= gt->limit;
}

/* Are a key's ids dense from 0 (interned strings)? */
static inline bool
key_dense(const TAggKey *key)
{
	return key->kind == TAGG_KEY_TEXT || key->kind == TAGG_KEY_BPCHAR;
}

extern int64 TesseraGroupKeyId(TesseraGroups *gt, TAggKey *key, Datum d);
extern void TesseraGroupKeyIds(TesseraGroups *gt, TAggKey *key, TesseraBatch *b, const bool *ok,
							   int n);
extern void TesseraGroupKeyIdsListed(TesseraGroups *gt, TAggKey *key, TesseraBatch *b,
									 const int *rows, int m);
extern Datum TesseraGroupNumIntDatum(int64 v);

#endif							/* TESSERA_GROUPS_INT_H */
