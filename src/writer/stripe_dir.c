/*-------------------------------------------------------------------------
 *
 * stripe_dir.c
 *	  The layout of a stripe the writer has encoded: its chunks in column
 *	  order and its directory's per-column sections.
 *
 * IDENTIFICATION
 *	  src/writer/stripe_dir.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "tessera/encoding.h"
#include "tessera/format.h"
#include "tessera/writer.h"

/*
 * The stripe's chunks column by column, each column's row groups in order
 * (then the dead row lists), as Parquet lays out a row group: the chunks
 * were appended row group by row group as each filled.  A scan of a few
 * columns then reads a few runs of pages, not a page of every row group
 * -- each page a new backend touches in shared buffers is a page fault,
 * ClickBench's `count(*) WHERE AdvEngineID <> 0` over 1,000 row groups
 * spent more time on them than on its filter.
 */
void
TesseraOrderByColumn(TesseraBuf *data, TesseraChunkDisk *chunks, TesseraChunkDisk *dead,
					 int nrgs, int natts)
{
	MemoryContext old;
	TesseraBuf	out;

	if (nrgs <= 1)
		return;
	old = MemoryContextSwitchTo(GetMemoryChunkContext(data->data));
	TesseraBufInit(&out, data->cap);
	MemoryContextSwitchTo(old);
	for (int a = 0; a < natts; a++)
		for (int g = 0; g < nrgs; g++)
		{
			TesseraChunkDisk *cd = &chunks[g * natts + a];
			Size		off = out.len;

			TesseraBufAppend(&out, data->data + cd->offset, cd->stored_bytes);
			cd->offset = off;
		}
	for (int g = 0; g < nrgs; g++)
	{
		TesseraChunkDisk *cd = &dead[g];
		Size		off = out.len;

		TesseraBufAppend(&out, data->data + cd->offset, cd->stored_bytes);
		cd->offset = off;
	}
	Assert(out.len == data->len);
	TesseraBufFree(data);
	*data = out;
}

/*
 * The directory's column table and its columns' sections (format.h,
 * version 5), after the rest of its head: each column's chunk entries of
 * every row group, then their min/max values, moved from the stripe's one
 * stats area and pointed to from the section's own.  Sets the header's
 * stats_bytes.
 */
void
TesseraAppendSections(TesseraBuf *data, const TesseraBuf *stats_area,
					  const TesseraChunkDisk *chunks, int nrgs, int natts, Size dir_start)
{
	Size		table = data->len - dir_start;
	TesseraChunkDisk *col = palloc(sizeof(TesseraChunkDisk) * Max(nrgs, 1));
	TesseraBuf	vals;
	uint64		stats = 0;

	TesseraBufInit(&vals, 1024);
	TesseraBufAppendSpace(data, sizeof(TesseraDirColumn) * natts);
	memset(data->data + dir_start + table, 0, sizeof(TesseraDirColumn) * natts);
	TesseraBufAlign(data);
	for (int a = 0; a < natts; a++)
	{
		Size		start = data->len;
		TesseraDirColumn *dc;

		vals.len = 0;
		for (int g = 0; g < nrgs; g++)
		{
			TesseraChunkDisk *cd = &col[g];

			*cd = chunks[g * natts + a];
			cd->min_off = cd->min_len = cd->max_off = cd->max_len = 0;
			if (chunks[g * natts + a].flags & TESSERA_CHUNK_HAS_STATS)
			{
				const TesseraChunkDisk *from = &chunks[g * natts + a];

				cd->min_off = (uint32) vals.len;
				cd->min_len = from->min_len;
				TesseraBufAppend(&vals, stats_area->data + from->min_off, from->min_len);
				cd->max_off = (uint32) vals.len;
				cd->max_len = from->max_len;
				TesseraBufAppend(&vals, stats_area->data + from->max_off, from->max_len);
			}
		}
		TesseraBufAppend(data, col, sizeof(TesseraChunkDisk) * nrgs);
		TesseraBufAppend(data, vals.data, vals.len);
		dc = (TesseraDirColumn *) (data->data + dir_start + table) + a;
		dc->offset = (uint32) (start - dir_start);
		dc->stats_bytes = (uint32) vals.len;
		dc->check = TesseraChunkChecksum(TESSERA_DIR_VERSION_COLUMNS, data->data + start,
										 data->len - start);
		stats += vals.len;
		TesseraBufAlign(data);
	}
	((TesseraDirHeader *) (data->data + dir_start))->stats_bytes = (uint32) stats;
	TesseraBufFree(&vals);
	pfree(col);
}

