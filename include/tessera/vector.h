/*-------------------------------------------------------------------------
 *
 * vector.h
 *	  Work on column vectors shared by the custom nodes: vector filters,
 *	  numeric arithmetic on scaled integers, group tables, aggregate states
 *	  and their transitions, and the spill of groups past memory.
 *
 * NOTES
 *	  Everything here works on a TesseraBatch (one row group's decoded
 *	  columns) and a selection of its rows: `sel`, a flag per row, or
 *	  `ok`/`gidx`, the rows an aggregate counts (NULL: all) and each row's
 *	  group (-1: none).  Nothing here knows about plan nodes; the nodes in
 *	  src/executor own the memory and call in.
 *
 *	  Numerics are computed exactly on 128-bit integers scaled by 10^scale,
 *	  with numeric.c's display-scale rules, and fall back to numerics where
 *	  a value could overflow; results are PostgreSQL's to the digit.
 *
 * IDENTIFICATION
 *	  include/tessera/vector.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_VECTOR_H
#define TESSERA_VECTOR_H

#include "executor/tuptable.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/tuplesort.h"

#include "tessera/plan.h"
#include "tessera/reader.h"

#ifndef HAVE_INT128
#error "tessera's vector code needs a compiler with 128-bit integers"
#endif

/* 10^k for k = 0..38 (vector/filter.c) */
extern int128 tessera_pow10[39];
extern void TesseraVectorInit(void);

/* An integer-like Datum of a column of this length as int64 (length 1: a bool, 0 or 1). */
static inline int64
TesseraIntDatum(Datum d, int16 typlen)
{
	return typlen == 2 ? (int64) DatumGetInt16(d) :
		typlen == 4 ? (int64) DatumGetInt32(d) :
		typlen == 1 ? (int64) DatumGetBool(d) : DatumGetInt64(d);
}

/* ---- vector filters (vector/filter.c) ---- */

/* A vector qual at run time: its description and its value in this scan. */
typedef struct VecQual
{
	VecKind		kind;
	int			strategy;
	int			attidx;
	int			attidx2;		/* VEC_COLCOL: the right-hand column */
	Oid			valtype;
	ExprState  *expr;
	/* the value in this scan */
	bool		isnull;
	int			run_strategy;	/* strategy to apply to ival/fval */
	int64		ival;
	float8		fval;
	Datum		dval;			/* VEC_NUMERIC */
	bool		scaled;			/* VEC_NUMERIC: nval/nscale are the value */
	int128		nval;
	int			nscale;
	/* VEC_STRING: strategy is a VecStringOp */
	int			value_arg;
	Oid			collation;
	FmgrInfo	flinfo;			/* the operator's function */
	int			shape;			/* how the value is matched bytewise (filter.c) */
	const char *sbytes;			/* the bytes matched */
	int			slen;
	int			nparts;			/* a LIKE of literals between '%'s: */
	int		   *parts;			/* [2 * nparts] each one's offset and length in sbytes */
	bool		open_start;		/* the pattern starts with '%' */
	bool		open_end;		/* ... ends with '%' */
	char	   *lowered;		/* ILIKE: a value's bytes lowered (lcap of them) */
	int			lcap;
	/* VEC_IN: the list's non-NULL elements, and whether it has a NULL */
	int			nelems;
	int64	   *ielems;			/* integer-like columns, sorted */
	Datum	   *selems;			/* strings */
	bool		elem_null;
	int			prefix_chars;	/* > 0: each string's first this many
								 * characters are matched, not the whole */
	bool		prefix_trim;	/* ... of the string without trailing blanks */
	/* VEC_BOOL: the quals ANDed or ORed */
	struct VecQual *children;
	int			nchildren;
	int			plan_pos;		/* its place among the plan's quals (the
								 * array is reordered as the scan learns) */
	/* run time: the share of the rows it looked at that it kept (smoothed) */
	float8		pass_rate;
	bool		pass_known;
} VecQual;

extern void TesseraVecQualInit(VecQual *vq, List *desc, Node *qual, PlanState *ps);
extern void TesseraVecQualEval(VecQual *vq, ExprContext *econtext);
/* (reorders vquals in place as it learns the cheapest order: see plan_pos) */
extern void TesseraVecApply(VecQual *vquals, int nvq, TesseraBatch *b, bool *sel, int n,
							int *idxbuf);
extern int	TesseraSelRows(const bool *sel, int n, int *rows);
extern uint64 TesseraSelCount(const bool *sel, int n);


/* ---- numeric arithmetic over a batch (vector/expr.c) ---- */

/* sum/avg's argument of numeric +, -, * over columns and constants */
typedef struct VExpr
{
	VxKind		kind;
	int			attidx;			/* VX_VAR, VX_INTVAR */
	int			typlen;			/* VX_INTVAR */
	Datum		cdatum;			/* VX_CONST */
	int128		cval;			/* VX_CONST: cval * 10^-cscale */
	int			cscale;
	struct VExpr *l;
	struct VExpr *r;
	/* result buffers, reused batch after batch */
	int			cap;
	int128	   *buf_v;
	int64	   *buf_dsc;
	bool	   *buf_null;
} VExpr;

/* A VExpr's value over a batch: v[i] * 10^-scale, display scale dsc[i]. */
typedef struct VxVal
{
	bool		scalar;			/* a constant: v[0], never NULL */
	int			scale;
	int			bits;			/* |v[i]| < 2^bits */
	int128	   *v;
	int64	   *dsc;			/* NULL: every row has display scale dsc_all */
	int64		dsc_all;
	bool	   *isnull;			/* NULL: none */
} VxVal;

extern VExpr *TesseraVxBuild(List *desc);
extern bool TesseraVxEval(VExpr *vx, TesseraBatch *b, const int *rows, int n, VxVal *out,
						  MemoryContext bufcxt);
extern Datum TesseraVxDatum(VExpr *vx, TesseraBatch *b, int row, bool *isnull);

/* ---- aggregate states (vector/aggtrans.c) ---- */

/* An aggregate at run time */
typedef struct TAggSpec
{
	TAggKind	kind;
	int			attidx;			/* -1: count(*) or an expression */
	Oid			argtype;		/* base type of the argument */
	Oid			restype;
	VExpr	   *vx;				/* the argument, if not a plain column */
	VecQual    *fq;				/* FILTER (WHERE ...), ANDed; NULL: none */
	int			nfq;
	/* min/max of other ordered types: through the btree comparison */
	bool		generic;
	FmgrInfo	cmp;
	Oid			collation;
	int16		typlen;
	bool		typbyval;
	int			same_as;		/* an earlier sum/avg of the same argument whose
								 * state this one reads, or -1 */
	/* sum/avg(x + offset): the state is x's, the result adds offset * count */
	bool		has_offset;
	int64		offset;
	bool		offset_check;	/* x + offset may overflow its type: counted x
								 * must lie in [offset_lo, offset_hi] */
	int64		offset_lo;
	int64		offset_hi;
	Oid			offset_type;	/* the type of x + offset */
	int			var_form;		/* avg of floats finished as a variance or
								 * standard deviation (TAggVarForm) */
} TAggSpec;

/*
 * One aggregate's state in one group.  Each kind of aggregate uses one
 * member of the union (48 bytes in all: a group of many aggregates, and
 * the states a parallel worker ships, stay small; a million groups of
 * three aggregates fit where 64-byte states spilled).
 */
typedef struct TAggState
{
	int64		count;			/* counts; sum/avg: the values added */
	int32		scale;			/* numeric sums: sum is scaled by 10^scale */
	int32		dscale;			/* numeric: largest display scale added to sum */
	union
	{
		/* sum/avg of integers and numerics */
		struct
		{
			int128		sum;
			Numeric		extra;	/* numeric values that did not fit in sum */
			bool		nan;	/* numeric specials seen */
			bool		pinf;
			bool		ninf;
		};
		/* sum/avg of floats: sum(float4) in float4; float8_accum's Sx, Sxx */
		struct
		{
			float8		fsx;
			float8		fsxx;
			float4		f4sum;
		};
		/* sum/avg of intervals: interval_pl's sum */
		Interval	isum;
		/* min/max */
		struct
		{
			int64		ibest;
			float8		fbest;
			Datum		dbest;	/* other types: a copy in the groups' memory */
			bool		have;
		};
	};
} TAggState;

StaticAssertDecl(sizeof(TAggState) <= 48, "TAggState grew past 48 bytes");

/* Does an aggregate's state use the numeric sum (and its extra numeric)? */
#define TAggStateHasSum(sp) \
	(((sp)->kind == TAGG_SUM || (sp)->kind == TAGG_AVG) && \
	 (sp)->argtype != FLOAT4OID && (sp)->argtype != FLOAT8OID && \
	 (sp)->argtype != INTERVALOID)

/* Per-group partial sums of a batch, reused batch after batch. */
typedef struct TesseraPartials
{
	int128	   *bsum;
	int64	   *bcnt;
	int64	   *bdsc;
	int			bcap;
	MemoryContext cxt;
} TesseraPartials;

extern Numeric TesseraScaledNumeric(int128 v, int scale);
extern void TesseraAggIntSumAll(TAggState *st, Datum *values, bool *isnull, int16 typlen, int n);
extern void TesseraAggNumericAccum(TAggState *st, Datum value, MemoryContext cxt);
extern void TesseraAggScaledFold(TAggState *st, int128 v, int64 count, int dsc, int cmax,
								 MemoryContext cxt);
extern void TesseraAggScaledRows(TAggState *states, int nspecs, int ngroups, int k,
								 TesseraPartials *p, const int128 *v, const int64 *dsc,
								 int64 dsc_all, int bits, int scale, const bool *isnull,
								 const bool *ok, const int32 *gidx, int n, MemoryContext cxt);
struct TesseraGroups;
extern void TesseraAggCountGroups(struct TesseraGroups *g, int k, TesseraPartials *p,
								  const int32 *gidx, int n);
extern void TesseraAggFloatAccum(TAggSpec *sp, TAggState *st, Datum d);
extern void TesseraAggIntervalAccum(TAggState *st, const Interval *v);
extern void TesseraAggGenericAccum(TAggSpec *sp, TAggState *st, Datum value, MemoryContext cxt);
extern Datum TesseraAggResult(TAggSpec *sp, TAggState *st, bool *isnull);
extern Size TesseraAggSerialSize(TAggSpec *specs, int nspecs, TAggState *states);
extern char *TesseraAggSerialWrite(TAggSpec *specs, int nspecs, TAggState *states, char *p);
extern Datum TesseraAggSerialize(TAggSpec *specs, int nspecs, TAggState *states);
extern void TesseraAggMergeRow(TAggSpec *specs, int nspecs, TAggState *states, Datum serialized,
							   MemoryContext cxt);
extern void TesseraAggCombine(TAggSpec *specs, int nspecs, TAggState *dst, const TAggState *src,
							  bool distinct_notnull, MemoryContext cxt);

/*
 * Integers in serialized states and spilled groups (aggtrans.c, spill.c):
 * seven bits a byte, low bits first, the high bit set on every byte but the
 * last (1 byte below 128, at most 10); signed values zigzagged first, so
 * that small negatives stay short.  Counts and sums of one or two rows --
 * most groups of a grouping that spills -- take a byte or two, not eight.
 */
#define TESSERA_VARINT_MAX	10

static inline int
TesseraVarintSize(uint64 v)
{
	int			n = 1;

	while (v >= 0x80)
	{
		v >>= 7;
		n++;
	}
	return n;
}

static inline char *
TesseraVarintPut(char *p, uint64 v)
{
	while (v >= 0x80)
	{
		*p++ = (char) (v | 0x80);
		v >>= 7;
	}
	*p++ = (char) v;
	return p;
}

/* The varint at p (none past end) into *v; NULL if it does not end there. */
static inline const char *
TesseraVarintGet(const char *p, const char *end, uint64 *v)
{
	uint64		r = 0;

	for (int shift = 0; p < end && shift < 64; shift += 7)
	{
		uint8		b = (uint8) *p++;

		r |= (uint64) (b & 0x7F) << shift;
		if (b < 0x80)
		{
			*v = r;
			return p;
		}
	}
	return NULL;
}

static inline uint64
TesseraZigzag(int64 v)
{
	return ((uint64) v << 1) ^ (uint64) (v >> 63);
}

static inline int64
TesseraUnzigzag(uint64 v)
{
	return (int64) (v >> 1) ^ -(int64) (v & 1);
}

/* ---- group tables (vector/groups.c) ---- */

/* a string key's id for a value not interned: a full table (limit) has no group of it */
#define TAGG_ID_ABSENT (-2)

/* A GROUP BY column; strings are interned to dense ids. */
#define TAGG_VALUE_CACHE 1024

typedef struct TAggKey
{
	int			attidx;
	Oid			typid;			/* base type */
	Oid			collation;
	int16		typlen;
	TAggKeyKind kind;
	/* strings: id -> value, and a hash table of ids */
	Datum	   *strs;
	int			nstrs;
	int			strcap;
	uint64	   *slots;			/* open addressing: hash << 32 | id; ~0: free */
	uint32		nslots;
	/* per batch: ids of the values at these addresses (dictionary chunks) */
	Pointer		ptr_cache[256];
	int32		ptr_ids[256];
	/* per batch: ids of values seen in it, by hash (plain chunks: an address per row) */
	const char *vc_data[TAGG_VALUE_CACHE];
	uint32		vc_hash[TAGG_VALUE_CACHE];
	int32		vc_len[TAGG_VALUE_CACHE];
	int32		vc_id[TAGG_VALUE_CACHE];
	uint32	   *hbuf;			/* per batch: each row's value hash (plain chunks) */
	int32	   *sbuf;			/* ... or the earlier row of the same address */
	int			hbuf_cap;
	/* per batch: a dictionary chunk's codes -> ids, and NULL flags */
	int32	   *dict_map;
	int			map_cap;
	bool	   *own_nulls;
	int			nulls_cap;
	/* per batch: a computed key's values (TAGG_COMPUTED_ATTIDX), set by the node */
	Datum	   *cvalues;
	bool	   *cnulls;
	int64	   *cints;			/* a NUMINT key's values as its ids, or NULL */
	/* per batch: the column's ids */
	int64	   *ids;
	int			ids_cap;
	bool	   *nulls;
} TAggKey;

/*
 * A slot of the group hash table: the group and 32 bits of its keys' hash
 * (the bits that do not choose the slot), so that a probe reads the keys
 * of a group only when the tags match.
 */
typedef struct TAggSlot
{
	uint32		tag;
	int32		group;
	int64		key;			/* one key: the group's (slots of several keys end before it) */
} TAggSlot;

/*
 * The groups of an aggregation: their keys (values, or string ids), an
 * open-addressing hash table over them, caches that skip hashing, and
 * nspecs aggregate states per group.  Everything lives in cxt.
 */
typedef struct TesseraGroups
{
	int			nkeys;			/* 0: one group */
	int			nhash;			/* the first nhash keys make the groups; the
								 * others are carried: functions of them, the
								 * same in every row of a group (stored from
								 * its first row, never hashed or compared) */
	TAggKey    *gkeys;			/* [nkeys] */
	int			nspecs;
	TAggState  *states;			/* [ngroups * nspecs], group_bytes apart */
	uint32		group_bytes;	/* a group's states' bytes: nspecs TAggStates,
								 * or the count alone of a table whose one
								 * aggregate is a count (TesseraGroupsCountOnly) */
	int64	   *keys;			/* [ngroups * nkeys]: values or string ids */
	bool	   *keynull;		/* [ngroups * nkeys] */
	int			ngroups;
	int			cap;
	int			limit;			/* > 0: no more groups than this are made (a
								 * LIMIT with no ORDER BY wants only some
								 * groups, each complete): once there are,
								 * rows of other keys are in none (-1), and a
								 * string key's values not met are not
								 * interned (their id is TAGG_ID_ABSENT) */
	uint64	   *kfilter;		/* a full table's keys: per grouped key a bitmap
								 * of its values' hashes (TAGG_KFILTER_BITS),
								 * NULL: not built */
	bool	   *kfilter_null;	/* per grouped key: some group's is NULL */
	int32	   *frows;			/* per batch: the rows the bitmaps pass */
	bool	   *fpass;			/* ... as a flag per row */
	int			frows_cap;
	int			null_group;		/* one key: the NULL key's group, -1: none yet */
	struct TAggSlot *slots;		/* open addressing: tag, group index (-1: free), key */
	uint32		nslots;
	uint32		slot_bytes;		/* a slot's size: with the key for one key, without for several */
	int32	   *direct;			/* one key: group of key direct_base + i, or -1 */
	int64		direct_base;
	uint64		direct_cap;		/* its entries (grown for a string's dense ids) */
	uint64		pcache_key[4096];	/* several keys: packed keys -> group */
	int32		pcache_g[4096];
	bool		pcache_used;	/* some entry set since the last reset */
	int32	   *gidx;			/* per batch: each row's group */
	int32	   *lgidx;			/* ... of the listed rows (sparse batches) */
	int32	   *carry_rows;		/* per batch: the row each new group's carried
								 * keys are read from (note_new_group) */
	int			ncarry;
	int			carry_first;	/* the first of those groups */
	int32	   *pend;			/* per batch, several keys: rows to look up */
	uint64	   *phash;			/* their hashes */
	uint64	   *ppacked;		/* their packed keys */
	int			row_cap;
	uint64	   *shash;			/* per batch, sliced: each counted row's keys' value hash */
	int32	   *srows;			/* ... those rows */
	uint64	   *sdict;			/* ... a dictionary chunk's entries' */
	int			shash_cap;
	int			nshash;			/* ... sliced: the rows of the slice (TesseraGroupsSlice) */
	int			sdict_cap;
	MemoryContext cxt;
} TesseraGroups;

/*
 * Aggregate k's state in group group.  (A count-only table's states are its
 * counts, 8 bytes apart: only TAggState.count, the first member, is there.)
 */
static inline TAggState *
TesseraGroupState(TesseraGroups *g, int group, int k)
{
	return (TAggState *) ((char *) g->states + (Size) group * g->group_bytes) + k;
}

/* The bytes a string group key is grouped by (groups.c, slices.c). */
static inline void
TesseraGroupKeyBytes(TAggKey *key, Datum d, const char **data, int *len)
{
	text	   *t = (text *) DatumGetPointer(d);

	/* (a decoded value is never compressed or external: no call per row) */
	if (VARATT_IS_EXTERNAL(t) || VARATT_IS_COMPRESSED(t))
		t = DatumGetTextPP(d);

	*data = VARDATA_ANY(t);
	*len = VARSIZE_ANY_EXHDR(t);
	if (key->kind == TAGG_KEY_BPCHAR)
		while (*len > 0 && (*data)[*len - 1] == ' ')
			(*len)--;
}

extern int64 TesseraGroupNumIntId(Datum d);
extern void TesseraGroupsInit(TesseraGroups *g, List *key_descs, int nspecs, MemoryContext cxt);
extern void TesseraGroupsReset(TesseraGroups *g, int cap);
extern void TesseraGroupsCarry(TesseraGroups *g, int ncarried);
extern void TesseraGroupsCountOnly(TesseraGroups *gt);
extern void TesseraGroupsPresize(TesseraGroups *g, double groups);
extern void TesseraGroupsReserve(TesseraGroups *gt, double groups);
extern int32 *TesseraGroupsAssign(TesseraGroups *g, TesseraBatch *b, const bool *ok, int n,
								  const int *rows, int m);
extern int	TesseraGroupsNewRows(TesseraGroups *gt, int n, bool *mask);
extern void TesseraGroupsFillCarried(TesseraGroups *gt, TesseraBatch *b);
extern int	TesseraGroupsLookup(TesseraGroups *g, int64 *keys, bool *nulls);
extern int	TesseraGroupsAdd(TesseraGroups *g, const int64 *keys, const bool *nulls);
extern void TesseraGroupsKeysOf(TesseraGroups *g, TupleTableSlot *slot, int64 *keys,
								bool *nulls, bool ids);
extern void TesseraGroupsKeysOfDatums(TesseraGroups *gt, const Datum *values, const bool *isnull,
									  int64 *keys, bool *nulls, bool ids);
extern int	TesseraGroupsLookupDatums(TesseraGroups *g, const Datum *values, const bool *isnull);
extern int	TesseraGroupsFindInts(TesseraGroups *g, const Datum *values, const bool *isnull);
extern void TesseraGroupsKeyDatums(TesseraGroups *g, int group, Datum *values, bool *isnull,
								   bool ids);
extern uint64 TesseraGroupsDatumsValueHash(TesseraGroups *gt, const Datum *values,
											 const bool *isnull, bool ids);
extern uint64 TesseraGroupsValueHash(TesseraGroups *g, int group);
extern int	TesseraGroupsValueHashes(TesseraGroups *gt, int nk, TesseraBatch *b, const bool *mask,
									 int n);
extern void TesseraGroupsSlice(TesseraGroups *gt, int nk, TesseraBatch *b, bool *mask, int n,
							   int slice, int nslices);

/* ---- groups past memory (vector/spill.c) ---- */

/*
 * Once the groups outgrow hash_mem they are written, as (keys, states)
 * rows, to partitions by a hash of their keys, and the table starts
 * empty.  After the input each partition is merged back in memory in
 * turn; one that still does not fit is sorted by key and merged one group
 * at a time.
 */
/*
 * Where nearly every row makes a group of its own, the groups are written
 * out at every this many (agg_node.c, tagg_should_spill): a table that
 * size stays in cache.
 */
#define TESSERA_SPILL_WINDOW	65536

typedef struct TesseraSpill
{
	/* hash partitions, made on the first spill */
	int			npart;			/* 0: nothing spilled */
	int			part_cap;
	struct BufFile *file;		/* the partitions' blocks (spill.c) */
	struct TesseraSpillPart *parts; /* [npart] */
	int64		file_blocks;	/* blocks in file */
	int64	   *free_blocks;	/* blocks read back, to be written again */
	int			nfree;
	int			free_cap;
	char	   *rblock;			/* the block being read back ... */
	int			rpart;			/* ... of this partition (-1: none) */
	int			rpos;
	int			ravail;
	int		   *depth;			/* [npart]: splits above it (0: the first set) */
	uint64	   *rows;			/* [npart]: rows written to it */
	int			cur;			/* the partition being merged back, or -1 */
	bool		loaded;			/* the table holds partition cur's groups */
	int			next_group;		/* the table's next group to return */
	double		est_groups;		/* the planner's estimate (partition count) */
	TupleDesc	desc;			/* a spilled row: the keys, then the states */
	TupleTableSlot *next;		/* a sorted partition's next row */
	/* a group's record (spill.c): written from wbuf, read into rbuf */
	char	   *wbuf;
	Size		wcap;
	char	   *rbuf;
	Size		rcap;
	uint32		rlen;
	Datum	   *rvalues;		/* the record read, parsed: keys, then states */
	bool	   *risnull;
	MemoryContext longcxt;
	MemoryContext tmpcxt;
	/* a partition past memory: sorted, merged one group at a time */
	Tuplesortstate *sort;
	bool		pending;		/* next holds the sort's next row */
	uint64		spilled_groups;
	uint64		rows_since;		/* rows folded since the last spill (agg_node.c) */
	bool		window;			/* ... few folded: spill at every few groups */
	int			rounds;			/* times the table was written out */
	int			sorted_parts;	/* partitions that had to be sorted */
	int			split_parts;	/* partitions split again */
} TesseraSpill;

extern void TesseraSpillGroups(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs,
							   MemoryContext longcxt, MemoryContext tmpcxt);
extern void TesseraSpillFinish(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs,
							   MemoryContext longcxt, MemoryContext tmpcxt);
extern bool TesseraSpillNextGroup(TesseraSpill *s, TesseraGroups *g, TAggSpec *specs,
								  int *group);
static inline bool
TesseraSpillActive(const TesseraSpill *s)
{
	return s->npart > 0;
}
extern void TesseraSpillEnd(TesseraSpill *s);


#endif							/* TESSERA_VECTOR_H */
