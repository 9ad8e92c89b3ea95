/*-------------------------------------------------------------------------
 *
 * rowgroup.c
 *	  Encoding a write state's row groups: in the backend, or by the
 *	  encoder worker (encoder.c) while the backend buffers the next one.
 *
 * IDENTIFICATION
 *	  src/writer/rowgroup.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "tessera/encoder.h"
#include "tessera/encoding.h"
#include "tessera/format.h"
#include "tessera/tessera.h"

#include "write_state.h"

void
TesseraInitRowGroupBuf(RowGroupBuf *buf, int natts)
{
	buf->cap = 0;
	buf->values = palloc0(sizeof(Datum *) * Max(natts, 1));
	buf->isnull = palloc0(sizeof(bool *) * Max(natts, 1));
	buf->bytes = palloc0(sizeof(ColBytes) * Max(natts, 1));
}

/* The buffer's values are encoded: empty its columns' bytes. */
void
TesseraResetRowGroupBuf(WriteState *ws, RowGroupBuf *buf)
{
	for (int i = 0; i < ws->natts; i++)
	{
		ColBytes   *cb = &buf->bytes[i];

		/* what an outsized row group grew is not kept for the next */
		if (cb->cap > TESSERA_ROW_GROUP_BYTE_LIMIT / 4)
		{
			pfree(cb->data);
			cb->data = NULL;
			cb->cap = 0;
		}
		cb->len = 0;
	}
}

/* Append an encoded chunk to the stripe's data and describe it in cd. */
static void
place_chunk(WriteState *ws, TesseraChunkDisk *cd, const char *stored, Size stored_len,
			const TesseraEncoderResult *r)
{
	cd->offset = ws->data.len;
	TesseraBufAppend(&ws->data, stored, stored_len);
	cd->stored_bytes = (uint32) stored_len;
	cd->raw_bytes = r->raw_bytes;
	cd->crc = r->crc;
	if (r->framed)
		cd->flags |= TESSERA_CHUNK_FRAMED;
	cd->value_count = r->value_count;
	cd->logical_bytes = (uint32) Min(r->logical_bytes, (uint64) PG_UINT32_MAX);
	cd->encoding = r->encoding;
	cd->codec = r->codec;
}

/*
 * Encode column i of the row group in buf (nrows rows, by-reference values
 * as offsets into the column's bytes) into cd.
 */
static void
encode_column(WriteState *ws, RowGroupBuf *buf, int nrows, int i, TesseraChunkDisk *cd)
{
	TesseraEncodedChunk enc;
	TesseraEncoderResult r;
	MemoryContext old;
	Datum	   *values = buf->values[i];

	memset(cd, 0, sizeof(TesseraChunkDisk));
	cd->offset = ws->data.len;
	if (ws->kinds[i] == WK_DROPPED)
	{
		cd->encoding = TESSERA_ENC_ABSENT;
		return;
	}
	if (ws->kinds[i] != WK_BYVAL)
	{
		char	   *base = buf->bytes[i].data;
		bool	   *isnull = buf->isnull[i];

		for (int j = 0; j < nrows; j++)
			if (!isnull[j])
				values[j] = PointerGetDatum(base + values[j]);
	}

	old = MemoryContextSwitchTo(ws->enc_cxt);
	TesseraEncodeChunk(&ws->types[i], values, buf->isnull[i], nrows,
					   ws->opts.compression, ws->opts.compression_level, &enc);
	MemoryContextSwitchTo(old);

	memset(&r, 0, sizeof(r));
	r.framed = enc.framed;
	r.crc = enc.framed ? enc.crc :
		TesseraChunkChecksum(TESSERA_DIR_VERSION_FRAMES, enc.stored.data, enc.stored.len);
	r.raw_bytes = enc.raw_bytes;
	r.logical_bytes = enc.logical_bytes;
	r.value_count = enc.value_count;
	r.encoding = enc.encoding;
	r.codec = enc.codec;
	place_chunk(ws, cd, enc.stored.data, enc.stored.len, &r);
	if (enc.has_stats &&
		TesseraStatSerialize(&ws->types[i], enc.min, &ws->stats, &cd->min_off, &cd->min_len) &&
		TesseraStatSerialize(&ws->types[i], enc.max, &ws->stats, &cd->max_off, &cd->max_len))
		cd->flags |= TESSERA_CHUNK_HAS_STATS;
	MemoryContextReset(ws->enc_cxt);
}

/* The encoder's callback: a chunk of the row group in flight is back. */
static void
chunk_back(void *arg, const TesseraEncoderResult *r)
{
	WriteState *ws = (WriteState *) arg;
	TesseraChunkDisk *cd;

	if (ws->sent_rg < 0 || r->col < 0 || r->col >= ws->natts || ws->sent_done[r->col])
		elog(ERROR, "tessera encoder sent back a chunk that was not asked for (column %d, row group %d)",
			 r->col, ws->sent_rg);
	cd = &ws->chunks[ws->sent_rg * ws->natts + r->col];
	memset(cd, 0, sizeof(TesseraChunkDisk));
	place_chunk(ws, cd, r->stored, r->stored_len, r);
	if (r->has_stats)
	{
		cd->min_off = (uint32) ws->stats.len;
		cd->min_len = r->min_len;
		TesseraBufAppend(&ws->stats, r->min, r->min_len);
		cd->max_off = (uint32) ws->stats.len;
		cd->max_len = r->max_len;
		TesseraBufAppend(&ws->stats, r->max, r->max_len);
		cd->flags |= TESSERA_CHUNK_HAS_STATS;
	}
	ws->sent_done[r->col] = true;
	ws->sent_pending--;
}

/*
 * The encoder's callback while the queue to the worker is full: encode the
 * last column of the row group that is not sent yet here.
 */
static bool
take_unsent(void *arg)
{
	WriteState *ws = (WriteState *) arg;

	while (ws->send_end - 1 > ws->send_col)
	{
		int			i = --ws->send_end;

		if (ws->sent_done[i])
			continue;
		encode_column(ws, &ws->sent, ws->sent_rows, i, &ws->chunks[ws->sent_rg * ws->natts + i]);
		ws->sent_done[i] = true;
		ws->sent_pending--;
		return true;
	}
	return false;
}

/*
 * The worker is gone: encode what it did not send back of the row group in
 * flight, and go on without it.
 */
static void
encoder_gone(WriteState *ws)
{
	if (ws->sent_rg >= 0)
	{
		for (int i = 0; i < ws->natts; i++)
			if (!ws->sent_done[i])
				encode_column(ws, &ws->sent, ws->sent_rows, i,
							  &ws->chunks[ws->sent_rg * ws->natts + i]);
		TesseraResetRowGroupBuf(ws, &ws->sent);
		ws->sent_rg = -1;
	}
	TesseraEncoderStop(ws->encoder);
	ws->encoder = NULL;
	ws->encoder_tried = true;
}

/* Wait until the row group in flight is back. */
void
TesseraDrainEncoder(WriteState *ws)
{
	if (ws->sent_rg < 0)
		return;
	/* rather than wait, encode what the worker has not begun, from the end */
	for (int i = ws->natts - 1; i >= 0 && ws->sent_pending > 0; i--)
	{
		if (ws->sent_done[i])
			continue;
		if (!TesseraEncoderClaim(ws->encoder, i))
			break;
		encode_column(ws, &ws->sent, ws->sent_rows, i, &ws->chunks[ws->sent_rg * ws->natts + i]);
		ws->sent_done[i] = true;
		ws->sent_pending--;
	}
	while (ws->sent_pending > 0)
	{
		if (!TesseraEncoderReceive(ws->encoder))
		{
			encoder_gone(ws);
			return;
		}
	}
	TesseraResetRowGroupBuf(ws, &ws->sent);
	ws->sent_rg = -1;
}

/* Stop the encoder worker of ws, after what it has is back. */
void
TesseraStopEncoder(WriteState *ws)
{
	if (ws->encoder == NULL)
		return;
	TesseraDrainEncoder(ws);
	if (ws->encoder)
	{
		TesseraEncoderStop(ws->encoder);
		ws->encoder = NULL;
	}
}

/*
 * Does the row group being finished go to an encoder worker?  From a load's
 * second full row group on, where a worker may be had: a shorter load is
 * over before a worker would have started.
 */
static bool
want_encoder(WriteState *ws)
{
	MemoryContext old;
	Size		bytes = 0;

	if (ws->encoder != NULL)
		return ws->rg_ndead == 0;
	if (!tessera_encoder_worker || ws->encoder_tried || !ws->eligible ||
		ws->early_deltas == NULL || ws->rg_ndead > 0 ||
		ws->full_rgs < 1 || ws->rg_rows < ws->rg_limit ||
		!IsUnderPostmaster || IsParallelWorker())
		return false;
	ws->encoder_tried = true;
	/* what this row group would take in the queue, as the next should */
	for (int i = 0; i < ws->natts; i++)
		if (ws->kinds[i] != WK_DROPPED)
			bytes += 64 + (sizeof(Datum) + 1) * ws->rg_rows + ws->cur.bytes[i].len;
	old = MemoryContextSwitchTo(ws->cxt);
	ws->encoder = TesseraEncoderStart(ws->types, ws->natts, ws->opts.compression,
									  ws->opts.compression_level, bytes, get_rel_name(ws->relid),
									  chunk_back, take_unsent, ws);
	MemoryContextSwitchTo(old);
	return ws->encoder != NULL;
}

/*
 * Send the current row group (index g of the stripe) to the encoder, after
 * the one before it is back; false if the worker is gone and the row group
 * is still to be encoded.
 */
static bool
send_row_group(WriteState *ws, int g)
{
	RowGroupBuf tmp;
	int			last = -1;
	bool		first = true;

	TesseraDrainEncoder(ws);
	if (ws->encoder == NULL)
		return false;

	/* the current values are in flight; the next row group fills the other buffer */
	tmp = ws->sent;
	ws->sent = ws->cur;
	ws->cur = tmp;
	ws->sent_rg = g;
	ws->sent_rows = ws->rg_rows;
	ws->sent_pending = 0;
	for (int i = 0; i < ws->natts; i++)
	{
		ws->sent_done[i] = (ws->kinds[i] == WK_DROPPED);
		if (ws->sent_done[i])
		{
			TesseraChunkDisk *cd = &ws->chunks[g * ws->natts + i];

			memset(cd, 0, sizeof(TesseraChunkDisk));
			cd->offset = ws->data.len;
			cd->encoding = TESSERA_ENC_ABSENT;
		}
		else
		{
			ws->sent_pending++;
			last = i;
		}
	}
	ws->send_end = last + 1;
	for (int i = 0; i < ws->send_end; i++)
	{
		if (ws->sent_done[i])
			continue;
		ws->send_col = i;
		if (!TesseraEncoderSend(ws->encoder, i, ws->sent_rows, first, i == ws->send_end - 1,
								ws->sent.isnull[i], ws->sent.values[i],
								ws->sent.bytes[i].data, ws->sent.bytes[i].len))
		{
			encoder_gone(ws);
			break;
		}
		first = false;
	}
	ws->send_col = ws->send_end = -1;
	return true;
}

/* Encode the buffered row group into the stripe's data (or send it to be). */
void
TesseraFinishRowGroup(WriteState *ws)
{
	TesseraRowGroupDisk *rg;
	MemoryContext old;
	int			g;

	if (ws->rg_rows == 0)
		return;
	if (ws->nrgs == ws->rgs_cap)
	{
		ws->rgs_cap *= 2;
		ws->rgs = repalloc(ws->rgs, sizeof(TesseraRowGroupDisk) * ws->rgs_cap);
		ws->chunks = repalloc_huge(ws->chunks,
								   sizeof(TesseraChunkDisk) * ws->rgs_cap * Max(ws->natts, 1));
		ws->dead = repalloc(ws->dead, sizeof(TesseraChunkDisk) * ws->rgs_cap);
	}
	g = ws->nrgs;
	rg = &ws->rgs[g];
	rg->first_rownum = ws->stripe.first_rownum + (ws->stripe_rows - ws->rg_rows);
	rg->row_count = ws->rg_rows;
	rg->flags = TESSERA_RG_DENSE;

	if (!want_encoder(ws) || !send_row_group(ws, g))
		for (int i = 0; i < ws->natts; i++)
			encode_column(ws, &ws->cur, ws->rg_rows, i, &ws->chunks[g * ws->natts + i]);

	/* the folded rows' list: their indexes, bit-packed, then the codec */
	memset(&ws->dead[g], 0, sizeof(TesseraChunkDisk));
	ws->dead[g].encoding = TESSERA_ENC_INT;
	if (ws->rg_ndead > 0)
	{
		TesseraChunkDisk *cd = &ws->dead[g];
		TesseraBuf	raw;
		TesseraBuf	comp;
		TesseraBuf *out = &raw;

		old = MemoryContextSwitchTo(ws->enc_cxt);
		TesseraBufInit(&raw, 64 + sizeof(int64) * ws->rg_ndead);
		TesseraEncodeInts(ws->rg_dead, ws->rg_ndead, &raw);
		cd->codec = TesseraCompressIfPays(ws->opts.compression, ws->opts.compression_level,
										  &raw, &comp);
		if (cd->codec != TESSERA_CODEC_NONE)
			out = &comp;
		MemoryContextSwitchTo(old);
		cd->offset = ws->data.len;
		cd->stored_bytes = (uint32) out->len;
		cd->raw_bytes = (uint32) raw.len;
		cd->value_count = (uint32) ws->rg_ndead;
		cd->crc = TesseraChunkChecksum(TESSERA_DIR_VERSION_FRAMES, out->data, out->len);
		TesseraBufAppend(&ws->data, out->data, out->len);
		MemoryContextReset(ws->enc_cxt);
		ws->any_dead = true;
		ws->rg_ndead = 0;
	}

	if (ws->rg_rows >= ws->rg_limit)
		ws->full_rgs++;
	ws->nrgs++;
	ws->rg_rows = 0;
	ws->rg_bytes = 0;
	TesseraResetRowGroupBuf(ws, &ws->cur);
}

