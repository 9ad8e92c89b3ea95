/*-------------------------------------------------------------------------
 *
 * frame.c
 *	  Framed chunks: a chunk's payload cut into frames that are compressed
 *	  and checksummed one by one, so that a single value is read without
 *	  decompressing the whole chunk.
 *
 * NOTES
 *	  A chunk of 10,000 values is a unit for scans, but a point read wants
 *	  one value of it: decompressing a 330 KB zstd payload of md5 text for
 *	  it was half the time of a lookup by primary key (0.08x heap's rate).
 *	  Frames of TESSERA_FRAME_BYTES raw bytes (TESSERA_FRAME_RAW_BYTES when
 *	  the codec does not pay) bound that work: a read takes
 *	  the frame table (the chunk's first bytes), then reads, checks and
 *	  decompresses the frames its value's bytes lie in.  Scans decode every
 *	  frame into one contiguous payload, so nothing past this file knows a
 *	  payload was framed.  The layout is in format.h (TesseraFrameHeader).
 *
 *	  Chunks of at most TESSERA_FRAME_MIN raw bytes are not framed: reading
 *	  all of one costs about what reading a frame does.
 *
 *	  The codec rule stays the chunk's (codec.c): it is kept if the frames
 *	  together pay for it; then each frame it does not shrink is stored
 *	  raw.  Every offset and size in a table is checked before use
 *	  (TesseraFrameTableRead); a bad frame is reported through the caller's
 *	  corruption callback.
 *
 *	  TesseraChunkView is how single-value reads see a payload: complete
 *	  (unframed chunks), or filled frame by frame on demand through
 *	  TesseraViewEnsure, whose caller says which raw bytes it is about to
 *	  read (access.c, intcodec.c and decimal.c know their layouts); the
 *	  view's owner (the fetch cache) says where a frame comes from.
 *
 * IDENTIFICATION
 *	  src/encoding/frame.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "tessera/encoding.h"
#include "tessera/tessera.h"

/*
 * Do frames of TESSERA_FRAME_WIDE_BYTES compress raw much better than frames
 * of TESSERA_FRAME_BYTES?  Text with a vocabulary (comments, addresses,
 * URLs) finds its matches across a few KB: TPC-H's l_comment takes 28% more
 * in 4 KB frames than compressed whole, 10% more in 16 KB ones, while random
 * text (md5) compresses the same in any frame.  Decided on the chunk's first
 * wide frame: a tenth smaller in one piece than in four.
 */
static bool
wide_frames_pay(int codec, int level, const TesseraBuf *raw)
{
	TesseraBuf	probe;
	Size		narrow = 0;
	Size		wide;

	if (raw->len < 2 * (Size) TESSERA_FRAME_WIDE_BYTES)
		return false;
	TesseraBufInit(&probe, TESSERA_FRAME_WIDE_BYTES * 2 + 256);
	for (Size from = 0; from < TESSERA_FRAME_WIDE_BYTES; from += TESSERA_FRAME_BYTES)
	{
		Size		n = TesseraCompress(codec, level, raw->data + from, TESSERA_FRAME_BYTES, &probe);

		narrow += n > 0 ? n : TESSERA_FRAME_BYTES;
	}
	wide = TesseraCompress(codec, level, raw->data, TESSERA_FRAME_WIDE_BYTES, &probe);
	TesseraBufFree(&probe);
	return wide > 0 && wide < narrow - narrow / 10;
}

/*
 * TesseraFrameChunk
 *		Store raw as a framed chunk in *out (a new buffer) with codec, with
 *		the plain stream index given (index_count offsets of every
 *		index_every-th value of the stream at raw offset index_base; none
 *		if index_count is 0).  Returns the codec applied (NONE: every frame
 *		raw) and sets *crc to the chunk's checksum.  Compressed chunks have
 *		frames of TESSERA_FRAME_BYTES, or TESSERA_FRAME_WIDE_BYTES where
 *		those compress much better (a codec needs room to find its
 *		matches); raw ones of TESSERA_FRAME_RAW_BYTES, since a value read
 *		from them copies and checksums a frame and decompresses nothing.
 */
int
TesseraFrameChunk(int codec, int level, const TesseraBuf *raw, uint32 index_every,
				  uint32 index_base, const uint32 *index, uint32 index_count,
				  TesseraBuf *out, uint32 *crc)
{
	uint32		frame_bytes = TESSERA_FRAME_BYTES;
	uint32		nframes = (uint32) ((raw->len + frame_bytes - 1) / frame_bytes);
	Size		table_bytes;
	TesseraFrameHeader hdr;
	uint32	   *ends;
	uint32	   *sums;
	Size		comp_total = 0;
	Size		comp_off = 0;
	TesseraBuf	comp;
	Size	   *comp_len = NULL;

	Assert(raw->len <= PG_UINT32_MAX);

	if (codec != TESSERA_CODEC_NONE)
		codec = TesseraCodecChoose(codec, level, raw->data, raw->len);
	if (codec != TESSERA_CODEC_NONE && wide_frames_pay(codec, level, raw))
	{
		frame_bytes = TESSERA_FRAME_WIDE_BYTES;
		nframes = (uint32) ((raw->len + frame_bytes - 1) / frame_bytes);
	}

	/* the frames compressed, if the codec pays over the whole chunk */
	if (codec != TESSERA_CODEC_NONE)
	{
		TesseraBufInit(&comp, raw->len / 2 + 64);
		comp_len = palloc(sizeof(Size) * nframes);
		for (uint32 k = 0; k < nframes; k++)
		{
			Size		from = (Size) k * frame_bytes;
			Size		len = Min((Size) frame_bytes, raw->len - from);
			Size		n = TesseraCompress(codec, level, raw->data + from, len, &comp);

			comp_len[k] = n;
			comp_total += (n > 0 && n < len) ? n : len;
		}
		if (!TesseraCodecPays(codec, raw->len, comp_total))
		{
			codec = TESSERA_CODEC_NONE;
			TesseraBufFree(&comp);
			pfree(comp_len);
			comp_len = NULL;
		}
	}
	if (codec == TESSERA_CODEC_NONE)
	{
		frame_bytes = TESSERA_FRAME_RAW_BYTES;
		nframes = (uint32) ((raw->len + frame_bytes - 1) / frame_bytes);
	}
	table_bytes = TesseraFrameTableSize(nframes, index_count);

	TesseraBufInit(out, table_bytes + (codec != TESSERA_CODEC_NONE ? comp_total : raw->len));
	memset(TesseraBufAppendSpace(out, table_bytes), 0, table_bytes);
	for (uint32 k = 0; k < nframes; k++)
	{
		Size		from = (Size) k * frame_bytes;
		Size		len = Min((Size) frame_bytes, raw->len - from);
		const char *src = raw->data + from;
		Size		start = out->len;

		if (codec != TESSERA_CODEC_NONE)
		{
			if (comp_len[k] > 0 && comp_len[k] < len)
			{
				src = comp.data + comp_off;
				len = comp_len[k];
			}
			comp_off += comp_len[k];
		}
		TesseraBufAppend(out, src, len);
		/* the table moves with the buffer: address it afresh */
		ends = (uint32 *) (out->data + sizeof(TesseraFrameHeader));
		sums = ends + nframes;
		ends[k] = (uint32) (out->len - table_bytes);
		sums[k] = TesseraChunkChecksum(TESSERA_DIR_VERSION_FRAMES, out->data + start,
									   out->len - start);
	}
	ends = (uint32 *) (out->data + sizeof(TesseraFrameHeader));
	sums = ends + nframes;
	if (index_count > 0)
		memcpy(sums + nframes, index, sizeof(uint32) * index_count);
	memset(&hdr, 0, sizeof(hdr));
	hdr.nframes = nframes;
	hdr.frame_bytes = frame_bytes;
	hdr.index_every = index_count > 0 ? index_every : 0;
	hdr.index_count = index_count;
	hdr.index_base = index_count > 0 ? index_base : 0;
	memcpy(out->data, &hdr, sizeof(hdr));
	*crc = TesseraChunkChecksum(TESSERA_DIR_VERSION_FRAMES, out->data, table_bytes);

	if (comp_len != NULL)
	{
		pfree(comp_len);
		TesseraBufFree(&comp);
	}
	return codec;
}

/*
 * TesseraFrameTableRead
 *		Check the frame table at the start of a framed chunk's stored bytes
 *		(at least the table's bytes; have says how many are there) and fill
 *		*ft.  False if it is malformed or longer than have.
 */
bool
TesseraFrameTableRead(const TesseraChunkDisk *chunk, const char *stored, Size have,
					  TesseraFrameTable *ft)
{
	TesseraFrameHeader hdr;
	uint32		prev = 0;

	if (have < sizeof(hdr) || chunk->stored_bytes < sizeof(hdr))
		return false;
	memcpy(&hdr, stored, sizeof(hdr));
	if (hdr.frame_bytes == 0 || hdr.frame_bytes > 1024 * 1024 || hdr.flags != 0 ||
		hdr.nframes != (chunk->raw_bytes + (uint64) hdr.frame_bytes - 1) / hdr.frame_bytes ||
		hdr.index_count > chunk->value_count ||
		(hdr.index_count > 0) != (hdr.index_every > 0) ||
		hdr.index_base > chunk->raw_bytes)
		return false;
	ft->table_bytes = TesseraFrameTableSize(hdr.nframes, hdr.index_count);
	if (ft->table_bytes > have || ft->table_bytes > chunk->stored_bytes)
		return false;
	ft->hdr = hdr;
	ft->ends = (const uint32 *) (stored + sizeof(TesseraFrameHeader));
	ft->sums = ft->ends + hdr.nframes;
	ft->index = ft->sums + hdr.nframes;
	for (uint32 k = 0; k < hdr.nframes; k++)
	{
		uint32		raw_len = TesseraFrameRawBytes(chunk, ft, k);
		uint32		len = ft->ends[k] - prev;

		/* a frame is stored raw (its raw size) or smaller */
		if (ft->ends[k] < prev || len == 0 || len > raw_len)
			return false;
		prev = ft->ends[k];
	}
	if (ft->table_bytes + prev != chunk->stored_bytes)
		return false;
	for (uint32 i = 1; i < hdr.index_count; i++)
		if (ft->index[i] < ft->index[i - 1])
			return false;
	return true;
}

/* Raw bytes of frame k. */
uint32
TesseraFrameRawBytes(const TesseraChunkDisk *chunk, const TesseraFrameTable *ft, uint32 k)
{
	uint64		from = (uint64) k * ft->hdr.frame_bytes;

	return (uint32) Min((uint64) ft->hdr.frame_bytes, chunk->raw_bytes - from);
}

/*
 * TesseraFrameDecode
 *		Decode frame k's stored bytes (len of them at src, checksummed here)
 *		into dst, which has room for its raw bytes.
 */
void
TesseraFrameDecode(const TesseraChunkDisk *chunk, const TesseraFrameTable *ft, uint32 k,
			 const char *src, Size len, char *dst, TesseraCorruptFn corrupt, void *arg)
{
	uint32		raw_len = TesseraFrameRawBytes(chunk, ft, k);

	if (TesseraChunkChecksum(TESSERA_DIR_VERSION_FRAMES, src, len) != ft->sums[k])
		corrupt(arg, "chunk frame checksum mismatch");
	if (len == raw_len)
		memcpy(dst, src, len);
	else if (chunk->codec == TESSERA_CODEC_NONE ||
			 !TesseraDecompress(chunk->codec, src, len, dst, raw_len))
		corrupt(arg, "chunk frame decompression failed");
}

/*
 * TesseraFramesDecode
 *		The whole raw payload of a framed chunk from all its stored bytes
 *		(table checked by the caller's checksum), palloc'd in the current
 *		context with TESSERA_DECODE_PADDING zero bytes after it.  Compressed
 *		frames come from source (if given) where it has them.
 */
char *
TesseraFramesDecode(const TesseraChunkDisk *chunk, const char *stored,
					const TesseraFrameSource *source, TesseraCorruptFn corrupt, void *arg)
{
	TesseraFrameTable ft;
	char	   *buf;
	uint32		prev = 0;

	if (!TesseraFrameTableRead(chunk, stored, chunk->stored_bytes, &ft))
		corrupt(arg, "chunk frame table is malformed");
	buf = MemoryContextAllocHuge(CurrentMemoryContext,
								 (Size) chunk->raw_bytes + TESSERA_DECODE_PADDING);
	for (uint32 k = 0; k < ft.hdr.nframes; k++)
	{
		char	   *dst = buf + (Size) k * ft.hdr.frame_bytes;
		uint32		len = ft.ends[k] - prev;
		uint32		raw_len = TesseraFrameRawBytes(chunk, &ft, k);
		bool		compressed = len < raw_len && source != NULL;

		if (!compressed || !source->get(source->arg, k, ft.sums[k], raw_len, dst))
		{
			TesseraFrameDecode(chunk, &ft, k, stored + ft.table_bytes + prev, len, dst,
							   corrupt, arg);
			if (compressed)
				source->put(source->arg, k, ft.sums[k], raw_len, dst);
		}
		prev = ft.ends[k];
	}
	memset(buf + chunk->raw_bytes, 0, TESSERA_DECODE_PADDING);
	return buf;
}

/*
 * TesseraViewInit
 *		A view of a framed chunk whose table ft describes (its memory lives
 *		as long as the view), over a payload buffer raw of raw_bytes +
 *		TESSERA_DECODE_PADDING and presence flags have (one per frame, all
 *		false: nothing is in raw yet).  load puts a frame's raw bytes into
 *		raw when a read needs them.
 */
void
TesseraViewInit(TesseraChunkView *v, const TesseraChunkDisk *chunk, const TesseraFrameTable *ft,
				char *raw, bool *have,
				bool (*load) (void *arg, uint32 k, char *frame, uint32 off, uint32 len),
				void *load_arg)
{
	memset(v, 0, sizeof(TesseraChunkView));
	v->chunk = chunk;
	v->framed = true;
	v->ft = *ft;
	v->raw = raw;
	v->have = have;
	v->load = load;
	v->load_arg = load_arg;
	memset(raw + chunk->raw_bytes, 0, TESSERA_DECODE_PADDING);
}

/* A view of a complete payload (an unframed chunk, or every frame read). */
void
TesseraViewInitRaw(TesseraChunkView *v, const TesseraChunkDisk *chunk, const char *raw)
{
	memset(v, 0, sizeof(TesseraChunkView));
	v->chunk = chunk;
	v->raw = (char *) raw;
}

/*
 * TesseraViewEnsure
 *		Make raw bytes [p, p + len) of the view's payload present (clipped to
 *		the payload), asking for them frame by frame.  A frame's owner may
 *		put just those bytes in place (a copy from a cache) or the whole
 *		frame (a decode); only a whole one is remembered as present.
 */
void
TesseraViewEnsure(void *arg, const char *p, Size len)
{
	TesseraChunkView *v = (TesseraChunkView *) arg;
	Size		off;
	Size		end;
	Size		fb;

	if (!v->framed || len == 0)
		return;
	if (p < v->raw || p >= v->raw + v->chunk->raw_bytes)
		return;					/* padding, or nothing of the payload */
	off = p - v->raw;
	end = Min(off + len, (Size) v->chunk->raw_bytes);
	fb = v->ft.hdr.frame_bytes;
	for (uint32 k = (uint32) (off / fb); (Size) k * fb < end; k++)
	{
		Size		from = Max(off, (Size) k * fb) - (Size) k * fb;
		Size		to = Min(end, (Size) (k + 1) * fb) - (Size) k * fb;

		if (v->have[k])
			continue;
		if (v->load(v->load_arg, k, v->raw + (Size) k * fb, (uint32) from, (uint32) (to - from)))
			v->have[k] = true;
	}
}

/*
 * TesseraChunkStoredChecksum
 *		The checksum of a chunk's stored bytes as its directory records it:
 *		of all of them, or of a framed chunk's frame table (whose frames
 *		are checked as they are decoded).
 */
uint32
TesseraChunkStoredChecksum(uint32 dir_version, const TesseraChunkDisk *chunk, const char *stored)
{
	Size		len = chunk->stored_bytes;

	if (chunk->flags & TESSERA_CHUNK_FRAMED)
	{
		TesseraFrameHeader hdr;

		if (len < sizeof(hdr))
			return ~chunk->crc;
		memcpy(&hdr, stored, sizeof(hdr));
		if ((uint64) hdr.nframes + hdr.index_count > len)
			return ~chunk->crc;
		len = Min(len, TesseraFrameTableSize(hdr.nframes, hdr.index_count));
	}
	return TesseraChunkChecksum(dir_version, stored, len);
}
