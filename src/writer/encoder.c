/*-------------------------------------------------------------------------
 *
 * encoder.c
 *	  A background worker that encodes a bulk load's row groups while the
 *	  backend parses the next one.
 *
 * NOTES
 *	  COPY parses every field in the backend before the table AM sees the
 *	  row, and then the writer encodes and compresses each row group: one
 *	  process does both, one after the other.  From a load's second full
 *	  row group on, the writer hands each row group to a worker of its own
 *	  instead, a column at a time through a shm_mq (the NULL flags, the
 *	  Datums -- by-reference ones as offsets into the column's bytes --
 *	  and the bytes), and goes on parsing; the worker runs the very
 *	  TesseraEncodeChunk the backend would have and sends each chunk back
 *	  through a second queue: its fields, its bytes and its serialized
 *	  min/max.  The backend writes the stripes, their WAL and the catalog
 *	  as before.
 *
 *	  At most one row group is in flight.  When the backend would wait for
 *	  it (its next row group is full, or the stripe is), it encodes columns
 *	  the worker has not begun itself, from the last one down; a column is
 *	  claimed by an atomic exchange of the row group's number, so each is
 *	  encoded once, by whoever comes first.  The writer keeps the row
 *	  group's values until every chunk of it is back: if the worker is gone (it could not
 *	  start, it failed, it was terminated) the backend encodes what is
 *	  missing itself.  The stripe is then byte for byte the one the backend
 *	  would have written alone, and an error of the encoder is raised
 *	  again by the backend, in its own transaction and with its context.
 *
 *	  The worker runs no user code.  Only tables whose columns have
 *	  built-in types, element types and collations are sent, so the
 *	  comparison functions of the chunks' min/max summaries are built-in
 *	  ones; the worker connects to the table's database (a collation's
 *	  locale is looked up in pg_collation, in a transaction per row group)
 *	  as the bootstrap superuser, like the compaction worker.
 *
 *	  The queues live in a DSM segment of the backend's top transaction;
 *	  the writer stops the worker when its write state goes (commit,
 *	  subtransaction abort, a dropped table) and an abort detaches the
 *	  segment, which ends the worker.
 *
 * IDENTIFICATION
 *	  src/writer/encoder.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shm_mq.h"
#include "storage/shm_toc.h"
#include "tcop/tcopprot.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

#include "tessera/encoder.h"
#include "tessera/format.h"
#include "tessera/tessera.h"

bool		tessera_encoder_worker = true;
int			tessera_debug_encoder_exit_after = 0;

#define ENCODER_MAGIC		0x7465656e
#define ENCODER_KEY_SHARED	1
#define ENCODER_KEY_TYPES	2
#define ENCODER_KEY_INPUT	3
#define ENCODER_KEY_OUTPUT	4
#define ENCODER_KEY_CLAIMS	5

/* what the worker does with the columns it gets */
#define ENCODER_ENCODE		0	/* encode them into chunks */
#define ENCODER_CONVERT		1	/* run their input functions on COPY's text */

/* messages a worker transaction lasts at most */
#define XACT_MESSAGES		256

/*
 * The queue to the worker holds a row group and a half as the backend sends
 * it (row_group_bytes): the backend then hands a row group over and goes back
 * to parsing, where with a smaller queue it would encode the columns that do
 * not fit itself (a ClickBench row group of 105 columns is 15 MB).  Chunks
 * come back compressed, into a queue a quarter of its size.  The segment is
 * kept within 64 MB, as a parallel query's would be.
 */
#define MIN_INPUT_QUEUE		((Size) 2 * 1024 * 1024)
#define MAX_INPUT_QUEUE		((Size) 48 * 1024 * 1024)
#define MIN_OUTPUT_QUEUE	((Size) 1024 * 1024)

typedef struct EncoderShared
{
	Oid			dboid;
	int			natts;
	int			codec;
	int			level;
	int			exit_after;		/* testing: messages after which the worker quits */
	int			mode;			/* ENCODER_ENCODE or ENCODER_CONVERT */
	pid_t		leader_pid;
	/* the backend's settings that input functions read (ENCODER_CONVERT) */
	char		datestyle[64];
	char		intervalstyle[64];
	char		timezone[256];
	char		tzabbrevs[256];
	char		array_nulls[8];
} EncoderShared;

/* a column of a row group, backend to worker; then isnull, Datums, bytes */
typedef struct EncoderColumnMsg
{
	int32		col;
	int32		nrows;
	uint32		flags;
	uint32		seq;			/* the row group's number, from 1 */
	uint64		nbytes;
} EncoderColumnMsg;

#define MSG_FIRST	0x01		/* the row group's first column */
#define MSG_LAST	0x02		/* and its last */

/* a converted column, worker to backend; then isnull, Datums, bytes (none if failed) */
typedef struct EncoderConvertedMsg
{
	int32		col;
	int32		nrows;
	uint32		seq;
	uint32		failed;
	uint64		nbytes;
} EncoderConvertedMsg;

/* an encoded chunk, worker to backend; then its bytes, min and max */
typedef struct EncoderChunkMsg
{
	int32		col;
	uint8		encoding;
	uint8		codec;
	bool		framed;
	bool		has_stats;
	uint32		crc;
	uint32		raw_bytes;
	uint32		value_count;
	uint32		min_len;
	uint32		max_len;
	uint32		pad;
	uint64		logical_bytes;
	uint64		stored_len;
} EncoderChunkMsg;

struct TesseraEncoder
{
	dsm_segment *seg;
	pg_atomic_uint32 *claims;	/* per column: the last row group claimed */
	uint32		seq;			/* the row group being sent */
	uint64		sent;			/* columns sent */
	uint64		claimed;		/* of them, taken back */
	double		send_wait;		/* seconds waited for room in the queue */
	double		receive_wait;	/* seconds waited for chunks */
	BackgroundWorkerHandle *handle;
	shm_mq_handle *input;
	shm_mq_handle *output;
	TesseraEncoderDeliver deliver;
	TesseraConvertDeliver deliver_converted;
	TesseraEncoderHelp help;
	void	   *arg;
};

PGDLLEXPORT void tessera_encoder_main(Datum main_arg);

/* Is type (or a domain over it) built in, and its elements if an array? */
static bool
builtin_type(Oid typid)
{
	Oid			base = getBaseType(typid);
	Oid			elem;

	if (base >= FirstGenbkiObjectId || get_typtype(base) != TYPTYPE_BASE)
		return false;
	elem = get_element_type(base);
	return !OidIsValid(elem) ||
		(elem < FirstGenbkiObjectId && get_typtype(elem) == TYPTYPE_BASE);
}

/*
 * TesseraEncoderEligible
 *		May rows of this descriptor be encoded by the worker?  Only if the
 *		encoder would call nothing but built-in functions on them.
 */
bool
TesseraEncoderEligible(TupleDesc desc)
{
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);

		if (attr->attisdropped)
			continue;
		if (!builtin_type(attr->atttypid))
			return false;
		if (OidIsValid(attr->attcollation) && attr->attcollation >= FirstNormalObjectId)
			return false;
	}
	return true;
}

/*
 * A worker in mode for natts columns described by types[0..natts) (each of
 * type_size bytes), its queues of these sizes; NULL if none can be had (no
 * background worker slot, no dynamic shared memory).
 */
static TesseraEncoder *
start_worker(int mode, const void *types, Size type_size, int natts, Size input_bytes,
			 Size output_bytes, int codec, int level)
{
	shm_toc_estimator e;
	Size		size;
	dsm_segment *seg;
	shm_toc    *toc;
	EncoderShared *shared;
	void	   *shared_types;
	shm_mq	   *input;
	shm_mq	   *output;
	pg_atomic_uint32 *claims;
	BackgroundWorker bgw;
	BackgroundWorkerHandle *handle;
	TesseraEncoder *encoder;
	ResourceOwner save_owner = CurrentResourceOwner;

	shm_toc_initialize_estimator(&e);
	shm_toc_estimate_chunk(&e, sizeof(EncoderShared));
	shm_toc_estimate_chunk(&e, type_size * Max(natts, 1));
	shm_toc_estimate_chunk(&e, input_bytes);
	shm_toc_estimate_chunk(&e, output_bytes);
	shm_toc_estimate_chunk(&e, sizeof(pg_atomic_uint32) * Max(natts, 1));
	shm_toc_estimate_keys(&e, 5);
	size = shm_toc_estimate(&e);

	/* the segment lives as long as the transaction, not the statement */
	CurrentResourceOwner = TopTransactionResourceOwner;
	seg = dsm_create(size, DSM_CREATE_NULL_IF_MAXSEGMENTS);
	CurrentResourceOwner = save_owner;
	if (seg == NULL)
		return NULL;

	toc = shm_toc_create(ENCODER_MAGIC, dsm_segment_address(seg), size);
	shared = shm_toc_allocate(toc, sizeof(EncoderShared));
	memset(shared, 0, sizeof(EncoderShared));
	shared->dboid = MyDatabaseId;
	shared->natts = natts;
	shared->codec = codec;
	shared->level = level;
	shared->exit_after = tessera_debug_encoder_exit_after;
	shared->mode = mode;
	shared->leader_pid = MyProcPid;
	if (mode == ENCODER_CONVERT)
	{
		snprintf(shared->datestyle, sizeof(shared->datestyle), "%s",
				 GetConfigOption("datestyle", false, false));
		snprintf(shared->intervalstyle, sizeof(shared->intervalstyle), "%s",
				 GetConfigOption("intervalstyle", false, false));
		snprintf(shared->timezone, sizeof(shared->timezone), "%s",
				 GetConfigOption("timezone", false, false));
		snprintf(shared->tzabbrevs, sizeof(shared->tzabbrevs), "%s",
				 GetConfigOption("timezone_abbreviations", false, false));
		snprintf(shared->array_nulls, sizeof(shared->array_nulls), "%s",
				 GetConfigOption("array_nulls", false, false));
	}
	shm_toc_insert(toc, ENCODER_KEY_SHARED, shared);
	/* (the comparison functions' FmgrInfo is made again by the worker) */
	shared_types = shm_toc_allocate(toc, type_size * Max(natts, 1));
	memcpy(shared_types, types, type_size * natts);
	shm_toc_insert(toc, ENCODER_KEY_TYPES, shared_types);
	input = shm_mq_create(shm_toc_allocate(toc, input_bytes), input_bytes);
	shm_toc_insert(toc, ENCODER_KEY_INPUT, input);
	output = shm_mq_create(shm_toc_allocate(toc, output_bytes), output_bytes);
	shm_toc_insert(toc, ENCODER_KEY_OUTPUT, output);
	claims = shm_toc_allocate(toc, sizeof(pg_atomic_uint32) * Max(natts, 1));
	for (int i = 0; i < natts; i++)
		pg_atomic_init_u32(&claims[i], 0);
	shm_toc_insert(toc, ENCODER_KEY_CLAIMS, claims);
	shm_mq_set_sender(input, MyProc);
	shm_mq_set_receiver(output, MyProc);

	memset(&bgw, 0, sizeof(bgw));
	snprintf(bgw.bgw_name, BGW_MAXLEN, "tessera encoder for PID %d", MyProcPid);
	snprintf(bgw.bgw_type, BGW_MAXLEN, "tessera encoder");
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_ConsistentState;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "tessera");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "tessera_encoder_main");
	bgw.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
	bgw.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&bgw, &handle))
	{
		dsm_detach(seg);
		return NULL;
	}

	encoder = palloc0(sizeof(TesseraEncoder));
	encoder->seg = seg;
	encoder->claims = claims;
	encoder->handle = handle;
	encoder->input = shm_mq_attach(input, seg, handle);
	encoder->output = shm_mq_attach(output, seg, handle);
	return encoder;
}

/*
 * TesseraEncoderStart
 *		A worker for rows of these column types, or NULL if none can be had.
 *		deliver is called with each chunk that comes back.
 */
TesseraEncoder *
TesseraEncoderStart(const TesseraColumnType *types, int natts, int codec, int level,
					Size row_group_bytes, const char *relname, TesseraEncoderDeliver deliver,
					TesseraEncoderHelp help, void *arg)
{
	Size		input_bytes = Min(Max(row_group_bytes + row_group_bytes / 2, MIN_INPUT_QUEUE),
								  MAX_INPUT_QUEUE);
	TesseraEncoder *encoder;

	encoder = start_worker(ENCODER_ENCODE, types, sizeof(TesseraColumnType), natts, input_bytes,
						   Max(input_bytes / 4, MIN_OUTPUT_QUEUE), codec, level);
	if (encoder == NULL)
		return NULL;
	encoder->deliver = deliver;
	encoder->help = help;
	encoder->arg = arg;
	elog(DEBUG1, "tessera: encoding row groups of \"%s\" in a background worker", relname);
	return encoder;
}

/*
 * TesseraConvertEligible
 *		May the worker run the input function of typid for COPY?  Built-in
 *		base types (and arrays of them) whose input reads no catalog by name
 *		and no setting but those the worker is given: not the reg* types
 *		(search_path, this transaction's catalog), aclitem (role names), money
 *		(lc_monetary), xml (xmloption) or timetz (a zone's offset on today's
 *		date).  Dates and
 *		times that say 'now' or 'today' are the backend's to read (see
 *		says_now).
 */
bool
TesseraConvertEligible(Oid typid)
{
	Oid			elem = get_element_type(typid);
	Oid			t = OidIsValid(elem) ? elem : typid;
	Oid			infunc;
	Oid			ioparam;

	if (typid >= FirstGenbkiObjectId || get_typtype(typid) != TYPTYPE_BASE ||
		t >= FirstGenbkiObjectId || get_typtype(t) != TYPTYPE_BASE)
		return false;
	getTypeInputInfo(t, &infunc, &ioparam);
	if (!func_strict(infunc))
		return false;
	switch (t)
	{
		case REGCLASSOID:
		case REGTYPEOID:
		case REGPROCOID:
		case REGPROCEDUREOID:
		case REGOPEROID:
		case REGOPERATOROID:
		case REGCONFIGOID:
		case REGDICTIONARYOID:
		case REGNAMESPACEOID:
		case REGROLEOID:
		case REGCOLLATIONOID:
		case CASHOID:
		case XMLOID:
		case ACLITEMOID:		/* role names */
		case TIMETZOID:			/* a zone's offset on the current date */
			return false;
		default:
			return true;
	}
}

/*
 * TesseraConverterStart
 *		A worker that runs the input functions of cols on COPY's text, a
 *		column of a batch at a time; NULL if none can be had.  batch_bytes
 *		is about what a batch's columns take as sent.  deliver is called
 *		with each converted column.
 */
TesseraEncoder *
TesseraConverterStart(const TesseraConvertColumn *cols, int ncols, Size batch_bytes,
					  const char *relname, TesseraConvertDeliver deliver, void *arg)
{
	Size		queue = Min(Max(batch_bytes + batch_bytes / 2, MIN_INPUT_QUEUE), MAX_INPUT_QUEUE);
	TesseraEncoder *encoder;

	encoder = start_worker(ENCODER_CONVERT, cols, sizeof(TesseraConvertColumn), ncols, queue,
						   queue, 0, 0);
	if (encoder == NULL)
		return NULL;
	encoder->deliver_converted = deliver;
	encoder->arg = arg;
	elog(DEBUG1, "tessera: converting COPY's fields for \"%s\" in a background worker", relname);
	return encoder;
}

/* Hand one converted column that came back to the COPY. */
static void
deliver_converted(TesseraEncoder *encoder, const char *data, Size len)
{
	EncoderConvertedMsg msg;
	TesseraConvertResult r;
	Size		head = sizeof(EncoderConvertedMsg);

	StaticAssertStmt(sizeof(EncoderConvertedMsg) == MAXALIGN(sizeof(EncoderConvertedMsg)),
					 "the converted column message header is aligned");
	if (len < head)
		elog(ERROR, "tessera encoder sent a message of %zu bytes", len);
	memcpy(&msg, data, sizeof(msg));
	if (msg.nrows < 0 ||
		len != head + (msg.failed ? 0 : MAXALIGN(msg.nrows) + sizeof(Datum) * msg.nrows + msg.nbytes))
		elog(ERROR, "tessera encoder sent a message of %zu bytes for a column of %d rows",
			 len, msg.nrows);
	r.col = msg.col;
	r.seq = msg.seq;
	r.failed = msg.failed != 0;
	r.nrows = msg.nrows;
	r.isnull = (const bool *) (data + head);
	r.values = (const Datum *) (data + head + MAXALIGN(msg.nrows));
	r.bytes = (const char *) (r.values + msg.nrows);
	r.nbytes = msg.nbytes;
	encoder->deliver_converted(encoder->arg, &r);
}

/* Hand one message that came back to the writer. */
static void
deliver_chunk(TesseraEncoder *encoder, const char *data, Size len)
{
	EncoderChunkMsg msg;
	TesseraEncoderResult r;
	const char *p = data + MAXALIGN(sizeof(EncoderChunkMsg));

	if (len < MAXALIGN(sizeof(EncoderChunkMsg)))
		elog(ERROR, "tessera encoder sent a message of %zu bytes", len);
	memcpy(&msg, data, sizeof(msg));
	if (MAXALIGN(sizeof(EncoderChunkMsg)) + msg.stored_len + msg.min_len + msg.max_len != len)
		elog(ERROR, "tessera encoder sent a message of %zu bytes for a chunk of %llu",
			 len, (unsigned long long) msg.stored_len);
	r.col = msg.col;
	r.stored = p;
	r.stored_len = msg.stored_len;
	r.framed = msg.framed;
	r.crc = msg.crc;
	r.raw_bytes = msg.raw_bytes;
	r.logical_bytes = msg.logical_bytes;
	r.value_count = msg.value_count;
	r.encoding = msg.encoding;
	r.codec = msg.codec;
	r.has_stats = msg.has_stats;
	r.min = p + msg.stored_len;
	r.min_len = msg.min_len;
	r.max = r.min + msg.min_len;
	r.max_len = msg.max_len;
	encoder->deliver(encoder->arg, &r);
}

/* a message from the worker to its callback */
static void
deliver(TesseraEncoder *encoder, const char *data, Size len)
{
	if (encoder->deliver_converted != NULL)
		deliver_converted(encoder, data, len);
	else
		deliver_chunk(encoder, data, len);
}

/*
 * TesseraEncoderSend
 *		Send a column of a row group: nrows NULL flags and Datums, by-reference
 *		ones as offsets into bytes[0..nbytes).  While the queue is full,
 *		chunks that come back are delivered, and the help callback may take
 *		a column that is still to be sent and encode it in the backend.
 *		false if the worker is gone (nothing was or will be delivered for
 *		this column).
 */
bool
TesseraEncoderSend(TesseraEncoder *encoder, int col, int nrows, bool first, bool last,
				   const bool *isnull, const Datum *values, const char *bytes, Size nbytes)
{
	EncoderColumnMsg msg;
	static const char zeros[MAXIMUM_ALIGNOF];
	shm_mq_iovec iov[5];
	int			niov = 0;
	instr_time	start;
	instr_time	end;

	if (first)
		encoder->seq++;
	memset(&msg, 0, sizeof(msg));
	msg.col = col;
	msg.nrows = nrows;
	msg.flags = (first ? MSG_FIRST : 0) | (last ? MSG_LAST : 0);
	msg.seq = encoder->seq;
	encoder->sent++;
	msg.nbytes = nbytes;
	StaticAssertStmt(sizeof(EncoderColumnMsg) == MAXALIGN(sizeof(EncoderColumnMsg)),
					 "the column message header is aligned");
	iov[niov].data = (const char *) &msg;
	iov[niov++].len = sizeof(msg);
	iov[niov].data = (const char *) isnull;
	iov[niov++].len = nrows;
	if (MAXALIGN(nrows) != (Size) nrows)
	{
		iov[niov].data = zeros;
		iov[niov++].len = MAXALIGN(nrows) - nrows;
	}
	iov[niov].data = (const char *) values;
	iov[niov++].len = sizeof(Datum) * nrows;
	if (nbytes > 0)
	{
		iov[niov].data = bytes;
		iov[niov++].len = nbytes;
	}

	for (;;)
	{
		shm_mq_result res = shm_mq_sendv(encoder->input, iov, niov, true, true);
		Size		len;
		void	   *data;

		if (res == SHM_MQ_SUCCESS)
			return true;
		if (res == SHM_MQ_DETACHED)
			return false;

		/* full: take what came back, so that the worker can go on */
		res = shm_mq_receive(encoder->output, &len, &data, true);
		if (res == SHM_MQ_SUCCESS)
		{
			deliver(encoder, data, len);
			continue;
		}
		if (res == SHM_MQ_DETACHED)
			return false;
		/* rather than wait for room, encode a column that is not sent yet */
		if (encoder->help != NULL && encoder->help(encoder->arg))
			continue;
		INSTR_TIME_SET_CURRENT(start);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1, PG_WAIT_EXTENSION);
		INSTR_TIME_SET_CURRENT(end);
		INSTR_TIME_SUBTRACT(end, start);
		encoder->send_wait += INSTR_TIME_GET_DOUBLE(end);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Claim a column of row group seq: true if nobody has.  A claim is the
 * number of the latest row group claimed and only grows, so that the worker,
 * still going through the messages of columns the backend took from an
 * earlier row group, sees them taken even after the backend has claimed
 * columns of a later one.
 */
static bool
claim(pg_atomic_uint32 *slot, uint32 seq)
{
	uint32		cur = pg_atomic_read_u32(slot);

	while (cur < seq)
	{
		if (pg_atomic_compare_exchange_u32(slot, &cur, seq))
			return true;
	}
	return false;
}

/*
 * TesseraEncoderClaim
 *		Take column col of the row group last sent back from the worker, to
 *		encode it here: true unless the worker has begun it (or is done with
 *		it).  The worker takes columns in order, so once one is its, every
 *		one before it is too.  Nothing comes back for a column taken here.
 */
bool
TesseraEncoderClaim(TesseraEncoder *encoder, int col)
{
	if (!claim(&encoder->claims[col], encoder->seq))
		return false;
	encoder->claimed++;
	return true;
}

/*
 * TesseraEncoderReceive
 *		Wait for the next chunk and deliver it; false if the worker is gone.
 */
bool
TesseraEncoderReceive(TesseraEncoder *encoder)
{
	Size		len;
	void	   *data;
	instr_time	start;
	instr_time	end;
	shm_mq_result res;

	INSTR_TIME_SET_CURRENT(start);
	res = shm_mq_receive(encoder->output, &len, &data, false);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	encoder->receive_wait += INSTR_TIME_GET_DOUBLE(end);
	if (res != SHM_MQ_SUCCESS)
		return false;
	deliver(encoder, data, len);
	return true;
}

/*
 * TesseraEncoderStop
 *		Detach from the worker, which then exits (quietly: a signal would
 *		have it log a FATAL line for every load).
 */
void
TesseraEncoderStop(TesseraEncoder *encoder)
{
	if (encoder->deliver_converted != NULL)
		elog(DEBUG1, "tessera: the converting worker had %llu columns of %u batches; waited %.3f s to send, %.3f s for values",
			 (unsigned long long) encoder->sent, encoder->seq, encoder->send_wait,
			 encoder->receive_wait);
	else
		elog(DEBUG1, "tessera: the encoder worker had %llu columns of %u row groups, %llu of them taken back; waited %.3f s to send, %.3f s for chunks",
			 (unsigned long long) encoder->sent, encoder->seq,
			 (unsigned long long) encoder->claimed, encoder->send_wait, encoder->receive_wait);
	dsm_detach(encoder->seg);
	pfree(encoder->handle);
	pfree(encoder);
}

/* ---- the worker ---- */

/* Encode the column in one message; send the chunk back. */
static void
encode_column(const char *data, Size len, TesseraColumnType *types, const EncoderShared *shared,
			  pg_atomic_uint32 *claims, shm_mq_handle *output)
{
	EncoderColumnMsg msg;
	const bool *isnull;
	const Datum *sent;
	const char *bytes;
	Datum	   *values;
	TesseraEncodedChunk enc;
	TesseraBuf	stats;
	EncoderChunkMsg out;
	shm_mq_iovec iov[3];
	uint32		off;
	TesseraColumnType *type;

	memcpy(&msg, data, sizeof(msg));
	if (msg.col < 0 || msg.col >= shared->natts || msg.nrows <= 0 ||
		len != sizeof(msg) + MAXALIGN(msg.nrows) + sizeof(Datum) * msg.nrows + msg.nbytes)
		elog(ERROR, "tessera encoder received a message of %zu bytes", len);
	/* the backend may have taken it while it waited for the row group */
	if (!claim(&claims[msg.col], msg.seq))
		return;
	type = &types[msg.col];
	isnull = (const bool *) (data + sizeof(msg));
	sent = (const Datum *) (data + sizeof(msg) + MAXALIGN(msg.nrows));
	bytes = (const char *) (sent + msg.nrows);
	if (type->typbyval)
		values = (Datum *) sent;
	else
	{
		values = palloc(sizeof(Datum) * msg.nrows);
		for (int r = 0; r < msg.nrows; r++)
		{
			if (!isnull[r] && sent[r] >= msg.nbytes)
				elog(ERROR, "tessera encoder received a value out of its column's bytes");
			values[r] = isnull[r] ? (Datum) 0 : PointerGetDatum(bytes + sent[r]);
		}
	}

	TesseraEncodeChunk(type, values, isnull, msg.nrows, shared->codec, shared->level, &enc);

	memset(&out, 0, sizeof(out));
	TesseraBufInit(&stats, 64);
	if (enc.has_stats &&
		TesseraStatSerialize(type, enc.min, &stats, &off, &out.min_len) &&
		TesseraStatSerialize(type, enc.max, &stats, &off, &out.max_len))
		out.has_stats = true;
	else
		out.min_len = out.max_len = 0;
	out.col = msg.col;
	out.encoding = enc.encoding;
	out.codec = enc.codec;
	out.framed = enc.framed;
	out.crc = enc.framed ? enc.crc :
		TesseraChunkChecksum(TESSERA_DIR_VERSION_FRAMES, enc.stored.data, enc.stored.len);
	out.raw_bytes = enc.raw_bytes;
	out.value_count = enc.value_count;
	out.logical_bytes = enc.logical_bytes;
	out.stored_len = enc.stored.len;
	StaticAssertStmt(sizeof(EncoderChunkMsg) == MAXALIGN(sizeof(EncoderChunkMsg)),
					 "the chunk message header is aligned");

	iov[0].data = (const char *) &out;
	iov[0].len = sizeof(out);
	iov[1].data = enc.stored.data;
	iov[1].len = enc.stored.len;
	iov[2].data = stats.data;
	iov[2].len = out.min_len + out.max_len;
	if (shm_mq_sendv(output, iov, 3, false, true) != SHM_MQ_SUCCESS)
		proc_exit(0);			/* the backend detached */
}

/*
 * Does a date or time (or an array of them) say 'now', 'today', 'tomorrow'
 * or 'yesterday'?  Those read the transaction's start, which is the
 * backend's, not the worker's: such a column is reported failed and the
 * backend converts the batch.
 */
static bool
says_now(const char *s)
{
	static const char *const words[] = {"now", "today", "tomorrow", "yesterday"};

	for (; *s; s++)
	{
		char		c = *s | 0x20;

		if (c != 'n' && c != 't' && c != 'y')
			continue;
		for (int i = 0; i < lengthof(words); i++)
			if (pg_strncasecmp(s, words[i], strlen(words[i])) == 0)
				return true;
	}
	return false;
}

/*
 * TesseraConvertReadsNow
 *		Is typid (or its element type) a date or time that may say 'now'?
 */
bool
TesseraConvertReadsNow(Oid typid)
{
	Oid			elem = get_element_type(typid);

	switch (OidIsValid(elem) ? elem : typid)
	{
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return true;
		default:
			return false;
	}
}

/*
 * Run the input function of the column in one message on its text and send
 * the values back: by-value ones as Datums, others copied into the
 * message's bytes (each at a MAXALIGN offset, given in its Datum).  An
 * error (a value the type does not take) is caught in a subtransaction and
 * reported as the column's failure: the backend converts the batch again
 * itself, row by row, for PostgreSQL's own error and context.
 */
static void
convert_column(const char *data, Size len, const TesseraConvertColumn *cols, FmgrInfo *flinfo,
			   const EncoderShared *shared, pg_atomic_uint32 *claims, shm_mq_handle *output,
			   StringInfo text)
{
	EncoderColumnMsg msg;
	EncoderConvertedMsg out;
	const bool *isnull;
	const Datum *sent;
	const char *bytes;
	Datum	   *values;
	StringInfoData buf;
	shm_mq_iovec iov[4];
	static const char zeros[MAXIMUM_ALIGNOF];
	const TesseraConvertColumn *col;
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	memcpy(&msg, data, sizeof(msg));
	if (msg.col == TESSERA_CONVERT_TEXT)
	{
		/* a batch's text, which its columns' offsets point into */
		if (msg.nrows != 0 || msg.nbytes == 0 || len != sizeof(msg) + msg.nbytes ||
			data[len - 1] != '\0')
			elog(ERROR, "tessera encoder received a message of %zu bytes", len);
		resetStringInfo(text);
		appendBinaryStringInfo(text, data + sizeof(msg), msg.nbytes);
		return;
	}
	if (msg.col < 0 || msg.col >= shared->natts || msg.nrows <= 0 || msg.nbytes != 0 ||
		len != sizeof(msg) + MAXALIGN(msg.nrows) + sizeof(Datum) * msg.nrows ||
		text->len == 0)
		elog(ERROR, "tessera encoder received a message of %zu bytes", len);
	if (!claim(&claims[msg.col], msg.seq))
		return;
	col = &cols[msg.col];
	isnull = (const bool *) (data + sizeof(msg));
	sent = (const Datum *) (data + sizeof(msg) + MAXALIGN(msg.nrows));
	bytes = text->data;
	msg.nbytes = text->len;
	values = palloc(sizeof(Datum) * msg.nrows);
	initStringInfo(&buf);

	memset(&out, 0, sizeof(out));
	out.col = msg.col;
	out.seq = msg.seq;
	out.nrows = msg.nrows;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		for (int r = 0; r < msg.nrows; r++)
		{
			Datum		d;
			Size		size;

			if (isnull[r])
			{
				values[r] = (Datum) 0;
				continue;
			}
			if (sent[r] >= msg.nbytes)
				elog(ERROR, "tessera encoder received a value out of its column's bytes");
			if (col->reads_now && says_now(bytes + sent[r]))
				elog(ERROR, "a value that reads the transaction's time");
			d = InputFunctionCall(&flinfo[msg.col], (char *) bytes + sent[r], col->ioparam,
								  col->typmod);
			if (col->typbyval)
			{
				values[r] = d;
				continue;
			}
			size = datumGetSize(d, false, col->typlen);
			values[r] = (Datum) buf.len;
			appendBinaryStringInfo(&buf, DatumGetPointer(d), size);
			if (MAXALIGN(buf.len) != (Size) buf.len)
				appendBinaryStringInfo(&buf, zeros, MAXALIGN(buf.len) - buf.len);
		}
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		out.failed = 1;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;

	iov[0].data = (const char *) &out;
	iov[0].len = sizeof(out);
	if (out.failed)
	{
		if (shm_mq_sendv(output, iov, 1, false, true) != SHM_MQ_SUCCESS)
			proc_exit(0);
		return;
	}
	out.nbytes = buf.len;
	iov[1].data = (const char *) isnull;
	iov[1].len = MAXALIGN(msg.nrows);	/* (the message's padding after them) */
	iov[2].data = (const char *) values;
	iov[2].len = sizeof(Datum) * msg.nrows;
	iov[3].data = buf.data;
	iov[3].len = buf.len;
	if (shm_mq_sendv(output, iov, 4, false, true) != SHM_MQ_SUCCESS)
		proc_exit(0);			/* the backend detached */
}

/* The backend's settings that input functions read, in the worker. */
static void
set_input_settings(const EncoderShared *shared)
{
	StartTransactionCommand();
	SetConfigOption("datestyle", shared->datestyle, PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("intervalstyle", shared->intervalstyle, PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("timezone", shared->timezone, PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("timezone_abbreviations", shared->tzabbrevs, PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("array_nulls", shared->array_nulls, PGC_USERSET, PGC_S_SESSION);
	CommitTransactionCommand();
}

void
tessera_encoder_main(Datum main_arg)
{
	dsm_segment *seg;
	shm_toc    *toc;
	EncoderShared *shared;
	TesseraColumnType *types = NULL;
	TesseraConvertColumn *cols = NULL;
	FmgrInfo   *flinfo = NULL;
	StringInfoData text;		/* the batch's text (converting) */
	shm_mq	   *input;
	shm_mq	   *output;
	shm_mq_handle *inqh;
	shm_mq_handle *outqh;
	pg_atomic_uint32 *claims;
	MemoryContext cxt;
	int			messages = 0;
	int			in_xact = 0;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	CurrentResourceOwner = ResourceOwnerCreate(NULL, "tessera encoder");
	seg = dsm_attach(DatumGetUInt32(main_arg));
	if (seg == NULL)
		proc_exit(0);			/* the backend is done already */
	dsm_pin_mapping(seg);
	toc = shm_toc_attach(ENCODER_MAGIC, dsm_segment_address(seg));
	if (toc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("invalid magic number in dynamic shared memory segment")));
	shared = shm_toc_lookup(toc, ENCODER_KEY_SHARED, false);
	input = shm_toc_lookup(toc, ENCODER_KEY_INPUT, false);
	output = shm_toc_lookup(toc, ENCODER_KEY_OUTPUT, false);
	claims = shm_toc_lookup(toc, ENCODER_KEY_CLAIMS, false);
	shm_mq_set_receiver(input, MyProc);
	shm_mq_set_sender(output, MyProc);
	inqh = shm_mq_attach(input, seg, NULL);
	outqh = shm_mq_attach(output, seg, NULL);

	BackgroundWorkerInitializeConnectionByOid(shared->dboid, InvalidOid,
											  BGWORKER_BYPASS_ALLOWCONN);
	if (shared->mode == ENCODER_CONVERT)
	{
		pgstat_report_activity(STATE_RUNNING,
							   psprintf("converting COPY fields for process %d",
										(int) shared->leader_pid));
		set_input_settings(shared);
		cols = MemoryContextAlloc(TopMemoryContext,
								  sizeof(TesseraConvertColumn) * Max(shared->natts, 1));
		memcpy(cols, shm_toc_lookup(toc, ENCODER_KEY_TYPES, false),
			   sizeof(TesseraConvertColumn) * shared->natts);
		flinfo = MemoryContextAlloc(TopMemoryContext, sizeof(FmgrInfo) * Max(shared->natts, 1));
		for (int i = 0; i < shared->natts; i++)
			fmgr_info_cxt(cols[i].infunc, &flinfo[i], TopMemoryContext);
		text.data = MemoryContextAlloc(TopMemoryContext, 1024);
		text.maxlen = 1024;
		resetStringInfo(&text);
	}
	else
	{
		pgstat_report_activity(STATE_RUNNING,
							   psprintf("encoding row groups for process %d",
										(int) shared->leader_pid));
		types = MemoryContextAlloc(TopMemoryContext,
								   sizeof(TesseraColumnType) * Max(shared->natts, 1));
		memcpy(types, shm_toc_lookup(toc, ENCODER_KEY_TYPES, false),
			   sizeof(TesseraColumnType) * shared->natts);
		for (int i = 0; i < shared->natts; i++)
			if (types[i].stats == TESSERA_STATS_CMP)
				fmgr_info_cxt(types[i].cmp.fn_oid, &types[i].cmp, TopMemoryContext);
	}

	cxt = AllocSetContextCreate(TopMemoryContext, "tessera encoder", ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		Size		len;
		void	   *data;
		shm_mq_result res;
		MemoryContext old;

		res = shm_mq_receive(inqh, &len, &data, true);
		if (res == SHM_MQ_WOULD_BLOCK)
		{
			/* nothing to do: no transaction stays open while the worker waits */
			if (IsTransactionState())
				CommitTransactionCommand();
			in_xact = 0;
			res = shm_mq_receive(inqh, &len, &data, false);
		}
		if (res != SHM_MQ_SUCCESS)
			break;				/* the backend detached */
		if (len < sizeof(EncoderColumnMsg))
			elog(ERROR, "tessera encoder received a message of %zu bytes", len);

		/*
		 * The comparisons of the min/max summaries may look up the catalog
		 * (a collation's locale, an array's element type), which takes a
		 * transaction; one lasts while messages keep coming, up to
		 * XACT_MESSAGES of them, and holds no snapshot between them.
		 */
		if (!IsTransactionState())
			StartTransactionCommand();
		old = MemoryContextSwitchTo(cxt);
		if (shared->mode == ENCODER_CONVERT)
			convert_column(data, len, cols, flinfo, shared, claims, outqh, &text);
		else
			encode_column(data, len, types, shared, claims, outqh);
		MemoryContextSwitchTo(old);
		MemoryContextReset(cxt);
		InvalidateCatalogSnapshot();
		if (++in_xact >= XACT_MESSAGES)
		{
			CommitTransactionCommand();
			in_xact = 0;
		}

		if (shared->exit_after > 0 && ++messages >= shared->exit_after)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	if (IsTransactionState())
		CommitTransactionCommand();
	proc_exit(0);
}
