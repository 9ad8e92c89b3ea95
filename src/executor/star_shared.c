/*-------------------------------------------------------------------------
 *
 * star_shared.c
 *	  A parallel star join's dimension tables, built by one process and
 *	  read by all: copied into the query's DSA area once built.
 *
 * NOTES
 *	  In a parallel TesseraAgg or TesseraJoin every process probes the
 *	  same dimensions with its share of the table's rows.  Each built its
 *	  own tables: on two cores, three processes read the same dimensions
 *	  (TPC-H q09: part, partsupp, orders and supplier, 180 ms per process,
 *	  540 ms of CPU for 180 ms of work, most of the query's wall time).
 *	  Now each dimension is built by the first process to claim it, as a
 *	  serial plan would (star.c): the processes, each claiming the
 *	  dimensions no other has, build different dimensions at once.  The
 *	  builder copies the dimension's table into one chunk of the query's
 *	  DSA area -- its key table (a direct array and its bits, or a hash
 *	  table's entries and its bits), a `<>` join's values, the gathered
 *	  columns (by-value Datums as they are, by-reference values after
 *	  them, each Datum then an offset into the chunk) -- and wakes the
 *	  others, which (done with their own) wait on a condition variable and
 *	  then point their tables at the chunks (by-reference columns get an
 *	  array of local pointers; DSA chunks map at different addresses in
 *	  each process).  The tables are read-only once built: a probe only
 *	  looks keys up (a left join, which marks its rows, is serial only).
 *	  If a chunk cannot be allocated, each process builds that dimension
 *	  itself, as before.  A process that fails while building raises its
 *	  error to the leader, which cancels the query and so the waiting
 *	  workers.
 *
 * IDENTIFICATION
 *	  src/executor/star_shared.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "tessera/tableam.h"
#include "nodes.h"

typedef enum StarSharedState
{
	STAR_SHARED_NONE,			/* no process has claimed it */
	STAR_SHARED_BUILDING,		/* a process is building it */
	STAR_SHARED_BUILT,			/* its chunk is its table */
	STAR_SHARED_LOCAL			/* could not be shared: each builds its own */
} StarSharedState;

typedef struct StarSharedDim
{
	pg_atomic_uint32 state;		/* StarSharedState */
	dsa_pointer chunk;			/* its StarChunk, once built */
} StarSharedDim;

typedef struct TesseraStarShared
{
	ConditionVariable cv;		/* a dimension's state changed */
	int			ndims;
	StarSharedDim dims[FLEXIBLE_ARRAY_MEMBER];
} TesseraStarShared;

/* A dimension's table in one chunk; the offsets are from its start, 0 for none. */
typedef struct StarChunk
{
	int			nrows;
	int			ncols;
	int64		min;
	int64		max;
	uint64		hash_size;
	uint32		hash_members;
	uint32		hash_sizemask;
	uint32		hash_grow;
	Size		direct;
	Size		present;
	Size		bits;
	Size		hash;
	Size		ne_first;
	Size		ne_multi;
	Size		cols[FLEXIBLE_ARRAY_MEMBER];	/* per column: values, nulls */
} StarChunk;

/*
 * TesseraStarInitShared
 *		The leader's part, when the node's parallel state is set up:
 *		the shared state in the query's DSA area (InvalidDsaPointer
 *		without one: each process then builds its own tables).
 */
dsa_pointer
TesseraStarInitShared(TesseraStar *st, dsa_area *area)
{
	dsa_pointer p;
	TesseraStarShared *sh;

	st->shared = NULL;
	st->area = NULL;
	if (area == NULL || st->ndims == 0 || st->left)
		return InvalidDsaPointer;
	p = dsa_allocate_extended(area, offsetof(TesseraStarShared, dims) +
							  sizeof(StarSharedDim) * st->ndims, DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(p))
		return InvalidDsaPointer;
	sh = dsa_get_address(area, p);
	ConditionVariableInit(&sh->cv);
	sh->ndims = st->ndims;
	for (int d = 0; d < st->ndims; d++)
	{
		pg_atomic_init_u32(&sh->dims[d].state, STAR_SHARED_NONE);
		sh->dims[d].chunk = InvalidDsaPointer;
	}
	st->shared = sh;
	st->area = area;
	return p;
}

/* A worker's part: the leader's shared state, if it made one. */
void
TesseraStarAttachShared(TesseraStar *st, dsa_area *area, dsa_pointer p)
{
	st->shared = NULL;
	st->area = NULL;
	if (area == NULL || !DsaPointerIsValid(p) || st->ndims == 0)
		return;
	st->shared = dsa_get_address(area, p);
	st->area = area;
}

/* Before a rescan (the leader, workers not running): the tables are built again. */
void
TesseraStarReInitShared(TesseraStar *st)
{
	TesseraStarShared *sh = st->shared;

	if (sh == NULL)
		return;
	for (int d = 0; d < sh->ndims; d++)
	{
		if (DsaPointerIsValid(sh->dims[d].chunk))
			dsa_free(st->area, sh->dims[d].chunk);
		sh->dims[d].chunk = InvalidDsaPointer;
		pg_atomic_write_u32(&sh->dims[d].state, STAR_SHARED_NONE);
	}
}

/* The bytes of a by-reference value of column c. */
static inline Size
star_value_size(TesseraStarDim *dim, int c, Datum value)
{
	return MAXALIGN(datumGetSize(value, false, dim->collen[c]));
}

/*
 * TesseraStarPublishDim
 *		Copy dimension d's table (h: its hash table's arrays, if any) into
 *		a chunk of the DSA area; false if there is no room.
 */
bool
TesseraStarPublishDim(TesseraStar *st, int d, const StarHashArrays *h)
{
	TesseraStarDim *dim = &st->dims[d];
	uint64		range = dim->nrows > 0 ? (uint64) dim->max - (uint64) dim->min : 0;
	Size		words = dim->nrows > 0 ? (Size) (range / 64 + 1) : 0;
	void	   *hdata = h->data;
	Size		hbytes = h->data != NULL ? h->bytes : 0;
	Size		size,
				off;
	dsa_pointer p;
	StarChunk  *ch;
	char	   *base;

	/* the sizes: header, tables, columns, by-reference values */
	size = MAXALIGN(offsetof(StarChunk, cols) + sizeof(Size) * 2 * dim->ncols);
	if (dim->direct != NULL)
		size += MAXALIGN(sizeof(int32) * ((Size) range + 1));
	if (dim->present != NULL)
		size += MAXALIGN(sizeof(uint64) * words);
	if (dim->bits != NULL)
		size += MAXALIGN(sizeof(uint64) * words);
	size += MAXALIGN(hbytes);
	if (dim->ne_first != NULL)
		size += MAXALIGN(sizeof(int64) * dim->nrows) + MAXALIGN(dim->nrows);
	for (int c = 0; c < dim->ncols; c++)
	{
		size += MAXALIGN(sizeof(Datum) * dim->nrows) + MAXALIGN(dim->nrows);
		if (!dim->colbyval[c])
			for (int r = 0; r < dim->nrows; r++)
				if (!dim->nulls[c][r])
					size += star_value_size(dim, c, dim->values[c][r]);
	}
	p = dsa_allocate_extended(st->area, size, DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);
	if (!DsaPointerIsValid(p))
		return false;
	st->shared->dims[d].chunk = p;
	base = dsa_get_address(st->area, p);
	ch = (StarChunk *) base;
	memset(ch, 0, offsetof(StarChunk, cols));
	ch->nrows = dim->nrows;
	ch->ncols = dim->ncols;
	ch->min = dim->min;
	ch->max = dim->max;
	ch->hash_size = h->size;
	ch->hash_members = h->members;
	ch->hash_sizemask = h->sizemask;
	ch->hash_grow = h->grow;
	off = MAXALIGN(offsetof(StarChunk, cols) + sizeof(Size) * 2 * dim->ncols);
#define STAR_COPY(field, src, bytes) \
	do { \
		ch->field = off; \
		memcpy(base + off, (src), (bytes)); \
		off += MAXALIGN(bytes); \
	} while (0)
	if (dim->direct != NULL)
		STAR_COPY(direct, dim->direct, sizeof(int32) * ((Size) range + 1));
	if (dim->present != NULL)
		STAR_COPY(present, dim->present, sizeof(uint64) * words);
	if (dim->bits != NULL)
		STAR_COPY(bits, dim->bits, sizeof(uint64) * words);
	if (hdata != NULL)
		STAR_COPY(hash, hdata, hbytes);
	if (dim->ne_first != NULL)
	{
		STAR_COPY(ne_first, dim->ne_first, sizeof(int64) * dim->nrows);
		STAR_COPY(ne_multi, dim->ne_multi, dim->nrows);
	}
	for (int c = 0; c < dim->ncols; c++)
	{
		Datum	   *values;

		ch->cols[2 * c] = off;
		values = (Datum *) (base + off);
		memcpy(values, dim->values[c], sizeof(Datum) * dim->nrows);
		off += MAXALIGN(sizeof(Datum) * dim->nrows);
		STAR_COPY(cols[2 * c + 1], dim->nulls[c], dim->nrows);
		if (dim->colbyval[c])
			continue;
		/* by reference: the value after the tables, the Datum its offset */
		for (int r = 0; r < dim->nrows; r++)
		{
			Size		len;

			if (dim->nulls[c][r])
				continue;
			len = star_value_size(dim, c, dim->values[c][r]);
			memcpy(base + off, DatumGetPointer(dim->values[c][r]),
				   datumGetSize(dim->values[c][r], false, dim->collen[c]));
			values[r] = (Datum) off;
			off += len;
		}
	}
#undef STAR_COPY
	Assert(off <= size);
	return true;
}

/*
 * TesseraStarAttachDim
 *		Point dimension d's table at its chunk (in st->cxt, just reset);
 *		h: its hash table's arrays, for the caller to look up in.
 */
void
TesseraStarAttachDim(TesseraStar *st, int d, StarHashArrays *h)
{
	TesseraStarDim *dim = &st->dims[d];
	char	   *base = dsa_get_address(st->area, st->shared->dims[d].chunk);
	StarChunk  *ch = (StarChunk *) base;

	dim->nrows = ch->nrows;
	dim->min = ch->min;
	dim->max = ch->max;
	dim->direct = ch->direct ? (int32 *) (base + ch->direct) : NULL;
	dim->present = ch->present ? (uint64 *) (base + ch->present) : NULL;
	dim->bits = ch->bits ? (uint64 *) (base + ch->bits) : NULL;
	h->data = ch->hash ? base + ch->hash : NULL;
	h->bytes = 0;
	h->size = ch->hash_size;
	h->members = ch->hash_members;
	h->sizemask = ch->hash_sizemask;
	h->grow = ch->hash_grow;
	dim->ne_first = ch->ne_first ? (int64 *) (base + ch->ne_first) : NULL;
	dim->ne_multi = ch->ne_multi ? (bool *) (base + ch->ne_multi) : NULL;
	dim->matched = NULL;
	dim->values = MemoryContextAlloc(st->cxt, sizeof(Datum *) * Max(dim->ncols, 1));
	dim->nulls = MemoryContextAlloc(st->cxt, sizeof(bool *) * Max(dim->ncols, 1));
	dim->vbase = MemoryContextAllocZero(st->cxt, sizeof(char *) * Max(dim->ncols, 1));
	for (int c = 0; c < dim->ncols; c++)
	{
		dim->values[c] = (Datum *) (base + ch->cols[2 * c]);
		dim->nulls[c] = (bool *) (base + ch->cols[2 * c + 1]);
		/*
		 * by-reference values are offsets from the chunk, made pointers as
		 * they are gathered (a pointer array per process cost each one a
		 * pass over the rows and their pages: 1.5M orders rows in q12)
		 */
		if (!dim->colbyval[c])
			dim->vbase[c] = base;
	}
}

/*
 * TesseraStarClaimDim
 *		Is dimension d this process's to build (then TesseraStarPublishDim
 *		and TesseraStarDimDone)?  The first process to ask builds it: the
 *		processes of a plan, each claiming the dimensions no other has,
 *		build different dimensions at once.
 */
bool
TesseraStarClaimDim(TesseraStar *st, int d)
{
	uint32		expected = STAR_SHARED_NONE;

	return pg_atomic_compare_exchange_u32(&st->shared->dims[d].state, &expected,
										  STAR_SHARED_BUILDING);
}

/* The builder's last step for dimension d: it is there (ok) or will not be; wake the others. */
void
TesseraStarDimDone(TesseraStar *st, int d, bool ok)
{
	TesseraStarShared *sh = st->shared;

	/* (the chunk written before the state that says so) */
	pg_write_barrier();
	pg_atomic_write_u32(&sh->dims[d].state, ok ? STAR_SHARED_BUILT : STAR_SHARED_LOCAL);
	ConditionVariableBroadcast(&sh->cv);
}

/*
 * TesseraStarWaitDim
 *		Wait until another process has built dimension d: true if it is in
 *		shared memory (TesseraStarAttachDim), false if it could not be put
 *		there (the caller builds its own).
 */
bool
TesseraStarWaitDim(TesseraStar *st, int d)
{
	TesseraStarShared *sh = st->shared;
	uint32		state;

	if (pg_atomic_read_u32(&sh->dims[d].state) == STAR_SHARED_BUILDING)
	{
		ConditionVariablePrepareToSleep(&sh->cv);
		while (pg_atomic_read_u32(&sh->dims[d].state) == STAR_SHARED_BUILDING)
			ConditionVariableSleep(&sh->cv, PG_WAIT_EXTENSION);
		ConditionVariableCancelSleep();
	}
	state = pg_atomic_read_u32(&sh->dims[d].state);
	/* (the chunk read after the state that says it is written) */
	pg_read_barrier();
	return state == STAR_SHARED_BUILT;
}
