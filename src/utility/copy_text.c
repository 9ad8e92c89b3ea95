/*-------------------------------------------------------------------------
 *
 * copy_text.c
 *	  COPY FROM text or CSV into a tessera table with the types' input
 *	  functions run in a background worker.
 *
 * NOTES
 *	  Half of what COPY FROM costs the backend is splitting lines into
 *	  fields, half is the types' input functions.  For a COPY that CopyFrom
 *	  would run as nothing more than parse, insert and index (a plain tessera
 *	  table without triggers, CHECK constraints or generated columns, every
 *	  column from the input, no WHERE, FREEZE or FORCE_* options), the
 *	  backend here only splits the lines (NextCopyFromRawFields, as
 *	  NextCopyFrom does) into batches of columns of text, and from the first
 *	  full batch on hands each batch to a worker (writer/encoder.c in its
 *	  converting mode), which runs the input functions and sends the values
 *	  back while the backend splits the next batch.  The backend then writes
 *	  the batch as columns (TesseraInsertColumns) and makes its index
 *	  entries; the encoder worker encodes its row groups as for any load.
 *
 *	  Errors are PostgreSQL's own.  NULL in a NOT NULL column is seen while
 *	  splitting; the worker catches a conversion error and reports the
 *	  column as failed.  Before any error is raised, everything before its
 *	  row is made sure of: the batch in flight is waited for, and a batch
 *	  that failed (or whose worker is gone) and the rows of the current one
 *	  are converted again here, row by row and column by column as
 *	  NextCopyFrom converts them, under CopyFrom's error context -- so the
 *	  first bad value raises its error, as CopyFrom would.  Only unique
 *	  violations can come in another order than CopyFrom's: CopyFrom makes
 *	  index entries every thousand rows, here after each batch is converted.
 *
 *	  Only types whose input functions depend on nothing the worker does
 *	  not share (TesseraConvertEligible; the worker is given DateStyle,
 *	  IntervalStyle, TimeZone and timezone_abbreviations) go this way.
 *
 * IDENTIFICATION
 *	  src/utility/copy_text.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "commands/copy.h"
#include "commands/copyfrom_internal.h"
#include "commands/progress.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_relation.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "tessera/catalog.h"
#include "tessera/compat.h"
#include "tessera/encoder.h"
#include "tessera/files.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/xlog.h"

int			tessera_debug_copy_batch_rows = 0;

/* a batch is sent when it has this many rows or this many bytes of text */
#define BATCH_ROWS		65536
#define BATCH_BYTES		((Size) 8 * 1024 * 1024)

/* rows of the input as columns of text, then of values */
typedef struct Batch
{
	MemoryContext cxt;			/* its arrays, kept from batch to batch */
	MemoryContext vcxt;			/* values converted here, reset after each batch */
	int			nrows;
	int			cap;
	uint32		seq;			/* its number as sent to the worker; 0 if not sent */
	uint64	   *linenos;
	bool	  **isnull;			/* per COPY column */
	Datum	  **offs;			/* offsets of the fields in text */
	StringInfoData text;		/* the lines' fields, each ending in '\0' */
	Size		bytes;
	Datum	  **values;			/* converted, per COPY column */
	bool	  **nulls;
	char	  **vbytes;			/* the worker's by-reference values, per column */
	Size	   *vbytes_cap;
	int			converted;		/* columns back from the worker */
	bool		failed;			/* one of them could not be converted there */
} Batch;

typedef struct TextCopy
{
	Relation	rel;
	CopyFromState cstate;
	int			ncols;
	int		   *atts;			/* COPY column -> attribute index */
	FmgrInfo   *in_functions;	/* per COPY column */
	Oid		   *ioparams;
	int32	   *typmods;
	bool	   *notnull;		/* per COPY column: NOT NULL */
	int			batch_rows;
	TesseraConvertColumn *conv;
	TesseraEncoder *worker;
	bool		worker_tried;
	uint32		seq;
	Batch		batches[2];
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	CommandId	cid;
	int			ti_options;
	Datum	  **attvalues;
	bool	  **attnulls;
	uint64		processed;
} TextCopy;

/* options CopyFrom would handle no differently for the raw fields */
static bool
options_ok(List *options)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, "format") == 0)
		{
			char	   *fmt;

			if (def->arg == NULL || !IsA(def->arg, String))
				return false;
			fmt = strVal(def->arg);
			if (strcmp(fmt, "text") != 0 && strcmp(fmt, "csv") != 0)
				return false;
		}
		else if (strcmp(def->defname, "delimiter") != 0 &&
				 strcmp(def->defname, "null") != 0 &&
				 strcmp(def->defname, "header") != 0 &&
				 strcmp(def->defname, "quote") != 0 &&
				 strcmp(def->defname, "escape") != 0 &&
				 strcmp(def->defname, "encoding") != 0)
			return false;
	}
	return true;
}

/*
 * May this COPY go the text way?  Anything CopyFrom would do more than
 * parse, insert and index, or would refuse, is left to it (it then raises
 * its own errors).
 */
static bool
copy_ok(Relation rel, List *attnums)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			live = 0;

	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relispartition ||
		rel->trigdesc != NULL || !IsTesseraRelation(rel) ||
		(desc->constr != NULL && desc->constr->num_check > 0) ||
		check_enable_rls(RelationGetRelid(rel), InvalidOid, true) == RLS_ENABLED ||
		TesseraLogicalWanted(rel, 0))
		return false;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		if (att->attgenerated || !TesseraConvertEligible(att->atttypid))
			return false;
		live++;
	}
	return live > 0 && list_length(attnums) == live;
}

/* the batch, empty, with room for a batch of rows */
static void
batch_init(TextCopy *tc, Batch *b, MemoryContext parent)
{
	MemoryContext old;

	b->cxt = AllocSetContextCreate(parent, "tessera COPY batch", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(b->cxt);
	b->cap = tc->batch_rows;
	b->linenos = palloc(sizeof(uint64) * b->cap);
	b->isnull = palloc(sizeof(bool *) * tc->ncols);
	b->offs = palloc(sizeof(Datum *) * tc->ncols);
	b->values = palloc(sizeof(Datum *) * tc->ncols);
	b->nulls = palloc(sizeof(bool *) * tc->ncols);
	b->vbytes = palloc0(sizeof(char *) * tc->ncols);
	b->vbytes_cap = palloc0(sizeof(Size) * tc->ncols);
	for (int c = 0; c < tc->ncols; c++)
	{
		b->isnull[c] = palloc(b->cap);
		b->offs[c] = palloc(sizeof(Datum) * b->cap);
		b->values[c] = palloc(sizeof(Datum) * b->cap);
		b->nulls[c] = palloc(b->cap);
	}
	initStringInfo(&b->text);
	/* offset 0 is a '\0' of its own: NULLs point there */
	appendStringInfoChar(&b->text, '\0');
	MemoryContextSwitchTo(old);
	b->vcxt = AllocSetContextCreate(b->cxt, "tessera COPY values", ALLOCSET_DEFAULT_SIZES);
	b->nrows = 0;
	b->seq = 0;
	b->bytes = 0;
	b->converted = 0;
	b->failed = false;
}

/* the batch emptied for the next rows */
static void
batch_reset(TextCopy *tc, Batch *b)
{
	resetStringInfo(&b->text);
	appendStringInfoChar(&b->text, '\0');
	MemoryContextReset(b->vcxt);
	b->nrows = 0;
	b->seq = 0;
	b->bytes = 0;
	b->converted = 0;
	b->failed = false;
}

/*
 * Convert rows [from, to) of the batch here, row by row and column by
 * column, under CopyFrom's error context: the first value its type does
 * not take raises PostgreSQL's error for it.  ncols_last limits the
 * columns of the last row (a row missing fields).
 */
static void
convert_here(TextCopy *tc, Batch *b, int from, int to, int ncols_last)
{
	CopyFromState cstate = tc->cstate;
	uint64		save_lineno = cstate->cur_lineno;
	bool		save_valid = cstate->line_buf_valid;
	MemoryContext old = MemoryContextSwitchTo(b->vcxt);

	cstate->line_buf_valid = false;
	for (int r = from; r < to; r++)
	{
		int			n = (r == to - 1) ? ncols_last : tc->ncols;

		cstate->cur_lineno = b->linenos[r];
		for (int c = 0; c < n; c++)
		{
			char	   *s = b->isnull[c][r] ? NULL : b->text.data + b->offs[c][r];

			cstate->cur_attname = NameStr(TupleDescAttr(RelationGetDescr(tc->rel),
														tc->atts[c])->attname);
			cstate->cur_attval = s;
			b->values[c][r] = InputFunctionCall(&tc->in_functions[c], s, tc->ioparams[c],
												tc->typmods[c]);
			b->nulls[c][r] = (s == NULL);
			cstate->cur_attname = NULL;
			cstate->cur_attval = NULL;
		}
	}
	MemoryContextSwitchTo(old);
	cstate->cur_lineno = save_lineno;
	cstate->line_buf_valid = save_valid;
}

/* The worker's callback: a column of a batch, converted. */
static void
take_converted(void *arg, const TesseraConvertResult *res)
{
	TextCopy   *tc = arg;
	Batch	   *b = NULL;

	for (int i = 0; i < 2; i++)
		if (tc->batches[i].seq == res->seq && res->seq != 0)
			b = &tc->batches[i];
	if (b == NULL || res->col < 0 || res->col >= tc->ncols ||
		(!res->failed && res->nrows != b->nrows))
		elog(ERROR, "tessera encoder sent back a column that was not asked for (column %d, batch %u)",
			 res->col, res->seq);
	b->converted++;
	if (res->failed)
	{
		b->failed = true;
		return;
	}
	memcpy(b->nulls[res->col], res->isnull, res->nrows);
	if (tc->conv[res->col].typbyval)
		memcpy(b->values[res->col], res->values, sizeof(Datum) * res->nrows);
	else
	{
		char	   *bytes;

		/* (the column's buffer only grows: no new memory to fault in per batch) */
		if (b->vbytes_cap[res->col] < res->nbytes)
		{
			Size		cap = Max(res->nbytes, b->vbytes_cap[res->col] * 2);

			if (b->vbytes[res->col] != NULL)
				pfree(b->vbytes[res->col]);
			b->vbytes[res->col] = MemoryContextAllocHuge(b->cxt, cap);
			b->vbytes_cap[res->col] = cap;
		}
		bytes = b->vbytes[res->col];
		memcpy(bytes, res->bytes, res->nbytes);
		for (int r = 0; r < res->nrows; r++)
		{
			if (!res->isnull[r] && res->values[r] >= res->nbytes)
				elog(ERROR, "tessera encoder sent back a value out of its column's bytes");
			b->values[res->col][r] = res->isnull[r] ? (Datum) 0 :
				PointerGetDatum(bytes + res->values[r]);
		}
	}
}

/* The worker is gone (or failed to start): the rest is converted here. */
static void
drop_worker(TextCopy *tc)
{
	if (tc->worker != NULL)
		TesseraEncoderStop(tc->worker);
	tc->worker = NULL;
}

/* Send the batch's columns to the worker (if there is one). */
static void
send_batch(TextCopy *tc, Batch *b)
{
	if (tc->worker == NULL && !tc->worker_tried)
	{
		tc->worker_tried = true;
		tc->worker = TesseraConverterStart(tc->conv, tc->ncols, b->bytes,
										   RelationGetRelationName(tc->rel),
										   take_converted, tc);
	}
	if (tc->worker == NULL)
		return;
	b->seq = ++tc->seq;
	/* the batch's text, then each column's NULL flags and offsets into it */
	if (!TesseraEncoderSend(tc->worker, TESSERA_CONVERT_TEXT, 0, true, false, NULL, NULL,
							b->text.data, b->text.len))
	{
		drop_worker(tc);
		return;
	}
	for (int c = 0; c < tc->ncols; c++)
		if (!TesseraEncoderSend(tc->worker, c, b->nrows, false, c == tc->ncols - 1,
								b->isnull[c], b->offs[c], NULL, 0))
		{
			drop_worker(tc);
			return;
		}
}

/*
 * Make sure of every value of a batch: wait for the worker's columns, and
 * convert here what failed there or did not come back (raising the first
 * error, as CopyFrom would).
 */
static void
complete_batch(TextCopy *tc, Batch *b)
{
	if (b->nrows == 0)
		return;
	while (b->seq != 0 && tc->worker != NULL && b->converted < tc->ncols)
		if (!TesseraEncoderReceive(tc->worker))
			drop_worker(tc);
	if (b->seq == 0 || b->failed || b->converted < tc->ncols)
		convert_here(tc, b, 0, b->nrows, tc->ncols);
	b->seq = 0;
}

/* The batch's rows into the table and its indexes. */
static void
write_batch(TextCopy *tc, Batch *b)
{
	TupleDesc	desc = RelationGetDescr(tc->rel);
	CopyFromState cstate = tc->cstate;
	uint64		save_lineno = cstate->cur_lineno;
	bool		save_valid = cstate->line_buf_valid;
	ItemPointerData *tids;

	if (b->nrows == 0)
		return;
	for (int c = 0; c < tc->ncols; c++)
	{
		tc->attvalues[tc->atts[c]] = b->values[c];
		tc->attnulls[tc->atts[c]] = b->nulls[c];
	}
	for (int a = 0; a < desc->natts; a++)
		if (TupleDescAttr(desc, a)->attisdropped)
		{
			tc->attvalues[a] = MemoryContextAllocZero(b->vcxt, sizeof(Datum) * b->nrows);
			tc->attnulls[a] = MemoryContextAlloc(b->vcxt, b->nrows);
			memset(tc->attnulls[a], true, b->nrows);
		}
	tids = MemoryContextAlloc(b->vcxt, sizeof(ItemPointerData) * b->nrows);
	cstate->line_buf_valid = false;
	cstate->cur_lineno = b->linenos[0];
	if (!TesseraInsertColumns(tc->rel, tc->attvalues, tc->attnulls, b->nrows, tc->cid,
							  tc->ti_options, tids))
		elog(ERROR, "tessera: a COPY by columns into a table whose changes are decoded");
	if (tc->rri->ri_NumIndices > 0)
		for (int r = 0; r < b->nrows; r++)
		{
			TupleTableSlot *slot = tc->slot;

			cstate->cur_lineno = b->linenos[r];
			ExecClearTuple(slot);
			for (int a = 0; a < desc->natts; a++)
			{
				slot->tts_values[a] = tc->attvalues[a][r];
				slot->tts_isnull[a] = tc->attnulls[a][r];
			}
			ExecStoreVirtualTuple(slot);
			slot->tts_tid = tids[r];
			slot->tts_tableOid = RelationGetRelid(tc->rel);
			list_free(TesseraExecInsertIndexTuples(tc->rri, slot, tc->estate));
			ResetPerTupleExprContext(tc->estate);
		}
	cstate->cur_lineno = save_lineno;
	cstate->line_buf_valid = save_valid;
	tc->processed += b->nrows;
	pgstat_progress_update_param(PROGRESS_COPY_TUPLES_PROCESSED, (int64) tc->processed);
}

/*
 * Before an error of row r of the current batch cur (whose fields, the
 * first nfields of them, are valid where nfields >= 0) is raised:
 * everything before it is made sure of, so that an earlier error is raised
 * first, then the row's own first fields are converted.
 */
static void
errors_before(TextCopy *tc, Batch *cur, int r, int nfields)
{
	Batch	   *other = (cur == &tc->batches[0]) ? &tc->batches[1] : &tc->batches[0];

	complete_batch(tc, other);
	if (r > 0)
		convert_here(tc, cur, 0, r, tc->ncols);
	if (nfields > 0)
	{
		CopyFromState cstate = tc->cstate;
		bool		save_valid = cstate->line_buf_valid;

		/* the row itself: its line is still the current one */
		cur->linenos[r] = cstate->cur_lineno;
		convert_here(tc, cur, r, r + 1, nfields);
		cstate->line_buf_valid = save_valid;
	}
}

/* Raise NOT NULL's error for row r of cur, after what comes before it. */
static void
not_null_error(TextCopy *tc, Batch *cur, int r)
{
	TupleDesc	desc = RelationGetDescr(tc->rel);
	TupleTableSlot *slot = tc->slot;

	errors_before(tc, cur, r, tc->ncols);
	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * desc->natts);
	for (int c = 0; c < tc->ncols; c++)
	{
		slot->tts_values[tc->atts[c]] = cur->values[c][r];
		slot->tts_isnull[tc->atts[c]] = cur->nulls[c][r];
	}
	ExecStoreVirtualTuple(slot);
	ExecConstraints(tc->rri, slot, tc->estate);
	elog(ERROR, "NOT NULL check passed a NULL value");
}

/* The next line's fields, or false at the end; errors raised after the rows before them. */
static bool
next_fields(TextCopy *tc, Batch *cur, char ***fields, int *nfields)
{
	MemoryContext cxt = CurrentMemoryContext;
	bool		ok = false;

	PG_TRY();
	{
		ok = NextCopyFromRawFields(tc->cstate, fields, nfields);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		errors_before(tc, cur, cur->nrows, -1);
		ReThrowError(edata);
	}
	PG_END_TRY();
	return ok;
}

/* Split the next line into cur; false at the end of the input. */
static bool
split_line(TextCopy *tc, Batch *cur)
{
	char	  **fields;
	int			nfields;
	int			r = cur->nrows;
	bool		null_notnull = false;
	StringInfo	abuf = &tc->cstate->attribute_buf;
	StringInfo	text = &cur->text;
	Size		base = text->len;
	bool		whole;

	if (!next_fields(tc, cur, &fields, &nfields))
		return false;
	if (nfields > tc->ncols)
	{
		errors_before(tc, cur, r, -1);
		ereport(ERROR,
				(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
				 errmsg("extra data after last expected column")));
	}
	/*
	 * The fields lie one after the other in the parser's buffer, each ending
	 * in '\0' (its length leaves out the last one): the line's go into the
	 * batch's text in one copy, and each field is its offset there.  A field
	 * found anywhere else is copied on its own.
	 */
	whole = (abuf->data[abuf->len] == '\0');
	if (whole)
	{
		Size		len = abuf->len + 1;

		if (text->len + len >= text->maxlen)
			enlargeStringInfo(text, len);
		memcpy(text->data + text->len, abuf->data, len);
		text->len += len;
		cur->bytes += len;
	}
	for (int c = 0; c < nfields; c++)
	{
		char	   *s = fields[c];

		cur->isnull[c][r] = (s == NULL);
		if (s == NULL)
		{
			cur->offs[c][r] = 0;
			null_notnull |= tc->notnull[c];
		}
		else if (whole && s >= abuf->data && s <= abuf->data + abuf->len)
			cur->offs[c][r] = base + (s - abuf->data);
		else
		{
			cur->offs[c][r] = text->len;
			appendBinaryStringInfo(text, s, strlen(s) + 1);
			cur->bytes += strlen(s) + 1;
		}
	}
	cur->bytes += (sizeof(Datum) + 1) * tc->ncols;
	cur->linenos[r] = tc->cstate->cur_lineno;
	if (nfields < tc->ncols)
	{
		errors_before(tc, cur, r, nfields);
		ereport(ERROR,
				(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
				 errmsg("missing data for column \"%s\"",
						NameStr(TupleDescAttr(RelationGetDescr(tc->rel),
											  tc->atts[nfields])->attname))));
	}
	if (null_notnull)
		not_null_error(tc, cur, r);
	cur->nrows++;
	return true;
}

static void
text_copy_run(TextCopy *tc)
{
	Batch	   *cur = &tc->batches[0];
	Batch	   *flight = &tc->batches[1];

	for (;;)
	{
		bool		more = true;

		while (cur->nrows < cur->cap && cur->bytes < BATCH_BYTES)
		{
			CHECK_FOR_INTERRUPTS();
			if (!(more = split_line(tc, cur)))
				break;
		}
		/* a full batch goes to the worker; a last one too if it is running */
		if (more || tc->worker != NULL)
			send_batch(tc, cur);
		complete_batch(tc, flight);
		write_batch(tc, flight);
		batch_reset(tc, flight);
		if (!more)
		{
			complete_batch(tc, cur);
			write_batch(tc, cur);
			break;
		}
		/* the batch in flight is now cur; the next rows go to the other */
		{
			Batch	   *t = cur;

			cur = flight;
			flight = t;
		}
	}
}

/*
 * TesseraTextCopyFrom
 *		Run COPY FROM (text or CSV) into a tessera table with the input
 *		functions in a worker; false if this COPY is CopyFrom's to run.
 */
bool
TesseraTextCopyFrom(ParseState *pstate, CopyStmt *stmt, uint64 *processed)
{
	Relation	rel;
	Oid			relid;
	List	   *attnums;
	TextCopy	tc;
	ParseNamespaceItem *nsitem;
	Bitmapset  *cols = NULL;
	ListCell   *lc;
	TupleDesc	desc;
	ErrorContextCallback errcallback;
	MemoryContext cxt;

	if (!tessera_encoder_worker || !stmt->is_from || stmt->is_program ||
		stmt->relation == NULL || stmt->whereClause != NULL || stmt->query != NULL ||
		!IsUnderPostmaster || XactReadOnly || IsInParallelMode() || RecoveryInProgress() ||
		!options_ok(stmt->options) ||
		(stmt->filename != NULL && !has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES)))
		return false;
	relid = RangeVarGetRelid(stmt->relation, RowExclusiveLock, true);
	if (!OidIsValid(relid) ||
		pg_class_aclcheck(relid, GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		return false;
	rel = table_open(relid, NoLock);
	desc = RelationGetDescr(rel);
	attnums = CopyGetAttnums(desc, rel, stmt->attlist);
	if (!copy_ok(rel, attnums))
	{
		table_close(rel, NoLock);
		return false;
	}

	memset(&tc, 0, sizeof(tc));
	cxt = AllocSetContextCreate(CurrentMemoryContext, "tessera COPY", ALLOCSET_DEFAULT_SIZES);
	tc.rel = rel;
	tc.ncols = list_length(attnums);
	tc.batch_rows = tessera_debug_copy_batch_rows > 0 ? tessera_debug_copy_batch_rows : BATCH_ROWS;
	tc.atts = palloc(sizeof(int) * tc.ncols);
	tc.in_functions = palloc(sizeof(FmgrInfo) * tc.ncols);
	tc.ioparams = palloc(sizeof(Oid) * tc.ncols);
	tc.typmods = palloc(sizeof(int32) * tc.ncols);
	tc.conv = palloc0(sizeof(TesseraConvertColumn) * tc.ncols);
	tc.notnull = palloc(sizeof(bool) * tc.ncols);
	foreach(lc, attnums)
	{
		int			c = foreach_current_index(lc);
		Form_pg_attribute att = TupleDescAttr(desc, lfirst_int(lc) - 1);
		Oid			infunc;

		tc.atts[c] = lfirst_int(lc) - 1;
		getTypeInputInfo(att->atttypid, &infunc, &tc.ioparams[c]);
		fmgr_info(infunc, &tc.in_functions[c]);
		tc.typmods[c] = att->atttypmod;
		tc.notnull[c] = att->attnotnull;
		tc.conv[c].reads_now = TesseraConvertReadsNow(att->atttypid);
		tc.conv[c].infunc = infunc;
		tc.conv[c].ioparam = tc.ioparams[c];
		tc.conv[c].typmod = att->atttypmod;
		tc.conv[c].typlen = att->attlen;
		tc.conv[c].typbyval = att->attbyval;
		cols = bms_add_member(cols, lfirst_int(lc) - FirstLowInvalidHeapAttributeNumber);
	}
	nsitem = addRangeTableEntryForRelation(pstate, rel, RowExclusiveLock, NULL, false, false);
	TesseraCheckInsertPermission(pstate, nsitem, cols);

	tc.cstate = BeginCopyFrom(pstate, rel, NULL, stmt->filename, false, NULL, stmt->attlist,
							  stmt->options);
	tc.estate = CreateExecutorState();
	tc.rri = makeNode(ResultRelInfo);
	tc.cid = GetCurrentCommandId(true);
	tc.attvalues = palloc0(sizeof(Datum *) * desc->natts);
	tc.attnulls = palloc0(sizeof(bool *) * desc->natts);
	if (rel->rd_createSubid != InvalidSubTransactionId ||
		TesseraRelFirstLocatorSubid(rel) != InvalidSubTransactionId)
		tc.ti_options |= TABLE_INSERT_SKIP_FSM;
	TesseraExecInitRangeTable(tc.estate, pstate);
	ExecInitResultRelation(tc.estate, tc.rri, 1);
	TesseraCheckValidInsertRel(tc.rri);
	ExecOpenIndices(tc.rri, false);
	tc.slot = table_slot_create(rel, NULL);
	batch_init(&tc, &tc.batches[0], cxt);
	batch_init(&tc, &tc.batches[1], cxt);

	errcallback.callback = CopyFromErrorCallback;
	errcallback.arg = (void *) tc.cstate;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;
	PG_TRY();
	{
		text_copy_run(&tc);
	}
	PG_CATCH();
	{
		/* the worker ends when its segment is detached */
		if (tc.worker != NULL)
			TesseraEncoderStop(tc.worker);
		PG_RE_THROW();
	}
	PG_END_TRY();
	error_context_stack = errcallback.previous;
	drop_worker(&tc);

	table_finish_bulk_insert(rel, tc.ti_options);
	ExecDropSingleTupleTableSlot(tc.slot);
	ExecCloseResultRelations(tc.estate);
	ExecCloseRangeTableRelations(tc.estate);
	FreeExecutorState(tc.estate);
	EndCopyFrom(tc.cstate);
	MemoryContextDelete(cxt);
	table_close(rel, NoLock);
	*processed = tc.processed;
	return true;
}
