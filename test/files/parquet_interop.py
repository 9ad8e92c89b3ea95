#!/usr/bin/env python3
"""
Parquet files between tessera and the two implementations people use most,
pyarrow (Arrow C++) and DuckDB:

  1. tessera and heap tables (every type that maps, NULLs, random values)
     written by COPY ... TO and read by pyarrow and by DuckDB: every value
     equal to what PostgreSQL returns for the same rows;
  2. files written by pyarrow (integers signed and unsigned, float16/32/64,
     decimal128/256, strings, large and dictionary strings, binary, fixed
     binary, bool, date32/64, time32/64, timestamps in every unit with and
     without time zone, uuid, lists with NULLs; snappy, zstd, gzip, lz4 and
     none; dictionary and plain pages; many row groups), and Arrow IPC
     (Feather v2) files of the same table, read by COPY ...
     FROM into tessera: the table equals a heap table loaded from the same
     values as CSV;
  3. the same for files written by DuckDB;
  4. COPY ... TO STDOUT and FROM STDIN (psycopg's copy protocol).
Files of 2. and 3. are also read through the foreign data wrapper
tessera_parquet, compared with the same CSV loads.

Usage: parquet_interop.py --dsn DSN --dir DIR  (DIR: a directory both this
process and the server can read and write).  Prints one line per check and
exits 1 if any failed.
"""
import argparse
import datetime
import decimal
import io
import json
import math
import os
import re
import random
import struct
import sys
import uuid

import duckdb
import psycopg
import pyarrow as pa
import pyarrow.parquet as pq

FAILED = []
PASSED = [0]


def check(name, ok, detail=""):
    if ok:
        PASSED[0] += 1
        print(f"  ok      {name}")
    else:
        FAILED.append(name)
        print(f"  FAILED  {name} {detail}")


# ---------------------------------------------------------------------------
# 1. tessera and heap to Parquet, read by pyarrow and DuckDB
# ---------------------------------------------------------------------------

SRC_COLUMNS = """
    id int, i2 smallint, i8 bigint, f4 real, f8 float8, n numeric(15,2), nb numeric(38,10),
    nu numeric, t text, vc varchar(20), c char(5), bo bool, d date, tm time, ts timestamp,
    tz timestamptz, u uuid, j json, jb jsonb, by bytea, ai int[], at text[], ad date[]
"""


def fill_source(cur, table, am):
    cur.execute(f"DROP TABLE IF EXISTS {table}")
    cur.execute(f"CREATE TABLE {table} ({SRC_COLUMNS}) USING {am}")
    cur.execute("SELECT setseed(0.17)")
    cur.execute(f"""
        INSERT INTO {table}
        SELECT g,
               nullif((random() * 60000 - 30000)::int, 7)::smallint,
               (random() * 9e18 - 4.5e18)::bigint,
               CASE WHEN g % 97 = 0 THEN 'NaN'::real ELSE (random() * 1e6 - 5e5)::real END,
               CASE WHEN g % 89 = 0 THEN '-Infinity'::float8 ELSE random() * 1e12 - 5e11 END,
               round((random() * 2e12 - 1e12)::numeric, 2),
               round((random() * 1e20 - 5e19)::numeric, 10),
               CASE WHEN g % 3 = 0 THEN round((random() * 1e6)::numeric, 9) ELSE g END,
               CASE WHEN g % 11 = 0 THEN '' ELSE md5(g::text) || repeat('ü€', g % 4) END,
               left(md5((g * 3)::text), (g % 20)),
               left(md5((g * 5)::text), g % 6),
               random() < 0.5,
               date '1900-01-01' + (random() * 80000)::int,
               time '00:00' + random() * interval '24 hours',
               timestamp '1950-01-01' + random() * interval '100 years',
               timestamptz '1960-01-01 00:00+00' + random() * interval '90 years',
               md5((g * 7)::text)::uuid,
               json_build_object('g', g, 's', md5(g::text)),
               jsonb_build_object('k', array[g, g + 1], 'z', NULL),
               decode(md5((g * 11)::text), 'hex'),
               CASE WHEN g % 5 = 0 THEN NULL WHEN g % 5 = 1 THEN '{{}}'::int[]
                    ELSE array[g, NULL, (random() * 1000)::int] END,
               array[md5(g::text), NULL, ''],
               array[date '2020-01-01' + g % 1000]
        FROM generate_series(1, 20000) g
    """.replace("'{{}}'", "'{}'"))
    # every column NULL once
    cur.execute(f"INSERT INTO {table} (id) VALUES (0)")


def normalize(v):
    """A value from psycopg, pyarrow or DuckDB in one comparable form."""
    if isinstance(v, memoryview):
        return bytes(v)
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone(datetime.timezone.utc)
    if isinstance(v, (list, tuple)):
        return [normalize(x) for x in v]
    if isinstance(v, str) and v[:1] in "{[":
        try:
            return json.loads(v)
        except ValueError:
            return v
    if isinstance(v, decimal.Decimal):
        return v.normalize() if v == v else "NaN"
    return v


def as_float32(v):
    return struct.unpack("f", struct.pack("f", v))[0] if isinstance(v, float) else v


def compare_rows(name, expected, got, columns, float4=("f4",)):
    """Rows of PostgreSQL and of a reader, equal value by value (real
    columns as float32: psycopg gives their shortest decimal form)."""
    if len(expected) != len(got):
        check(name, False, f"{len(got)} rows, expected {len(expected)}")
        return
    bad = []
    for er, gr in zip(expected, got):
        for c, ev, gv in zip(columns, er, gr):
            if c in float4:
                ev, gv = as_float32(ev), as_float32(gv)
            if normalize(ev) != normalize(gv):
                bad.append((er[0], c, ev, gv))
    check(name, not bad, f"{len(bad)} differences, first: {bad[:3]}")


def test_export(conn, d):
    with conn.cursor() as cur:
        for am in ("tessera", "heap"):
            table = f"pqx_src_{am}"
            fill_source(cur, table, am)
            path = os.path.join(d, f"export_{am}.parquet")
            cur.execute(f"COPY {table} TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 7000)")
            cur.execute(f"SELECT * FROM {table} ORDER BY id")
            columns = [c.name for c in cur.description]
            expected = cur.fetchall()
            tab = pq.read_table(path)
            check(f"export/{am}: pyarrow sees {len(columns)} columns, 3 row groups",
                  tab.column_names == columns and pq.ParquetFile(path).num_row_groups == 3,
                  f"{tab.column_names} {pq.ParquetFile(path).num_row_groups}")
            rows = sorted(zip(*[tab.column(c).to_pylist() for c in columns]), key=lambda r: r[0])
            compare_rows(f"export/{am}: pyarrow reads the values PostgreSQL returns", expected, rows, columns)
            got = duckdb.sql(f"SELECT * FROM read_parquet('{path}') ORDER BY id").fetchall()
            compare_rows(f"export/{am}: DuckDB reads the values PostgreSQL returns", expected, got, columns)
            apath = os.path.join(d, f"export_{am}.arrow")
            cur.execute(f"COPY {table} TO '{apath}' (FORMAT arrow, COMPRESSION lz4)")
            tab = pa.ipc.open_file(apath).read_all()
            rows = sorted(zip(*[tab.column(c).to_pylist() for c in columns]), key=lambda r: r[0])
            compare_rows(f"export/{am}: pyarrow reads the Arrow IPC file's values", expected, rows, columns)


# ---------------------------------------------------------------------------
# 2. and 3. files from pyarrow and DuckDB into tessera, against CSV
# ---------------------------------------------------------------------------

def pg_literal(v):
    """A value as PostgreSQL's text input takes it (CSV field or array element)."""
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(v).hex()
    if isinstance(v, datetime.datetime):
        return v.isoformat()
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        parts = []
        for x in v:
            if x is None:
                parts.append("NULL")
            else:
                s = pg_literal(x)
                parts.append('"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"')
        return "{" + ",".join(parts) + "}"
    return str(v)


def to_csv(rows):
    out = io.StringIO()
    for r in rows:
        fields = []
        for v in r:
            if v is None:
                fields.append("")
            else:
                fields.append('"' + pg_literal(v).replace('"', '""') + '"')
        out.write(",".join(fields) + "\n")
    return out.getvalue()


def load_and_compare(conn, name, path, columns_sql, rows):
    """COPY the file into tessera, the CSV of rows into heap; compare."""
    with conn.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS pqx_in, pqx_csv")
        cur.execute(f"CREATE TABLE pqx_in ({columns_sql}) USING tessera")
        cur.execute(f"CREATE TABLE pqx_csv ({columns_sql}) USING heap")
        try:
            cur.execute(f"COPY pqx_in FROM '{path}'")
        except psycopg.Error as e:
            conn.rollback()
            check(name, False, str(e).splitlines()[0])
            return
        with cur.copy("COPY pqx_csv FROM STDIN (FORMAT csv)") as cp:
            cp.write(to_csv(rows))
        cur.execute("SELECT count(*) FROM pqx_in")
        n_in = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM (SELECT * FROM pqx_in EXCEPT ALL SELECT * FROM pqx_csv) x")
        extra = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM (SELECT * FROM pqx_csv EXCEPT ALL SELECT * FROM pqx_in) x")
        missing = cur.fetchone()[0]
        check(name, n_in == len(rows) and extra == 0 and missing == 0,
              f"rows {n_in}/{len(rows)}, extra {extra}, missing {missing}")
        # the same file as a foreign table with the table's columns
        cur.execute("SELECT count(*) FROM pg_foreign_data_wrapper WHERE fdwname = 'tessera_parquet'")
        if cur.fetchone()[0] == 0:
            cur.execute("CREATE FOREIGN DATA WRAPPER tessera_parquet HANDLER tessera.parquet_fdw_handler "
                        "VALIDATOR tessera.parquet_fdw_validator")
        cur.execute("CREATE SERVER IF NOT EXISTS pqx_files FOREIGN DATA WRAPPER tessera_parquet")
        cur.execute("DROP FOREIGN TABLE IF EXISTS pqx_ft")
        cur.execute(f"CREATE FOREIGN TABLE pqx_ft ({columns_sql}) SERVER pqx_files OPTIONS (filename '{path}')")
        cur.execute("SELECT count(*) FROM (SELECT * FROM pqx_ft EXCEPT ALL SELECT * FROM pqx_csv) x")
        extra = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM (SELECT * FROM pqx_csv EXCEPT ALL SELECT * FROM pqx_ft) x")
        missing = cur.fetchone()[0]
        check(name.replace("loads", "reads through the foreign data wrapper"), extra == 0 and missing == 0,
              f"extra {extra}, missing {missing}")
        # aggregates over the foreign table (TesseraAgg's vectors where it
        # takes them: dictionaries, scaled decimals) equal the heap table's
        bad = []
        vectorized = total = 0
        for col, typ in re.findall(r"(\w+) ([a-z0-9 ]+(?:\(\d+(?:,\d+)?\))?(?:\[\])?)\s*(?:,|$)",
                                   " ".join(columns_sql.split())):
            queries = [f"SELECT {col}, count(*) FROM {{t}} GROUP BY {col}"]
            if typ.endswith("[]"):
                pass
            elif typ.startswith(("numeric", "int", "smallint", "bigint")):
                queries.append(f"SELECT sum({col}), min({col}), max({col}), avg({col}), count({col}) FROM {{t}}")
            elif typ.startswith(("text", "date", "timestamp")):
                queries.append(f"SELECT min({col}), max({col}), count(DISTINCT {col}) FROM {{t}}")
            for q in queries:
                cur.execute(f"EXPLAIN {q.format(t='pqx_ft')}")
                vectorized += any("TesseraAgg" in r[0] for r in cur.fetchall())
                total += 1
                cur.execute(f"SELECT count(*) FROM (({q.format(t='pqx_ft')} EXCEPT ALL {q.format(t='pqx_csv')})"
                            f" UNION ALL ({q.format(t='pqx_csv')} EXCEPT ALL {q.format(t='pqx_ft')})) x")
                if cur.fetchone()[0] != 0:
                    bad.append(q)
        check(name.replace("loads as from CSV", "aggregates as the CSV's rows do"),
              not bad and vectorized * 2 > total,
              f"differ: {bad[:3]}; {vectorized} of {total} by TesseraAgg")
    conn.commit()


def maybe(rng, v, p=0.1):
    return None if rng.random() < p else v


def pyarrow_table(n, seed):
    rng = random.Random(seed)
    epoch = datetime.datetime(1970, 1, 1)
    utc = datetime.timezone.utc
    words = ["alpha", "beta", "gamma", "delta", "épsilon", "ζeta", ""]
    cols = {}
    cols["id"] = pa.array(range(n), pa.int32())
    cols["i8"] = pa.array([maybe(rng, rng.randint(-128, 127)) for _ in range(n)], pa.int8())
    cols["u8"] = pa.array([maybe(rng, rng.randint(0, 255)) for _ in range(n)], pa.uint8())
    cols["i16"] = pa.array([maybe(rng, rng.randint(-32768, 32767)) for _ in range(n)], pa.int16())
    cols["u16"] = pa.array([maybe(rng, rng.randint(0, 65535)) for _ in range(n)], pa.uint16())
    cols["u32"] = pa.array([maybe(rng, rng.randint(0, 2**32 - 1)) for _ in range(n)], pa.uint32())
    cols["i64"] = pa.array([maybe(rng, rng.randint(-2**63, 2**63 - 1)) for _ in range(n)], pa.int64())
    cols["u64"] = pa.array([maybe(rng, rng.randint(0, 2**64 - 1)) for _ in range(n)], pa.uint64())
    cols["f32"] = pa.array([maybe(rng, float(pa.scalar(rng.uniform(-1e6, 1e6), pa.float32()).as_py()))
                            for _ in range(n)], pa.float32())
    cols["f64"] = pa.array([maybe(rng, rng.choice([rng.uniform(-1e300, 1e300), float("nan"),
                                                   float("inf"), 0.0, 1e-300]))
                            for _ in range(n)], pa.float64())
    cols["d10"] = pa.array([maybe(rng, decimal.Decimal(rng.randint(-10**10 + 1, 10**10 - 1)).scaleb(-3))
                            for _ in range(n)], pa.decimal128(10, 3))
    cols["d38"] = pa.array([maybe(rng, decimal.Decimal(rng.randint(-10**37, 10**37)).scaleb(-12))
                            for _ in range(n)], pa.decimal128(38, 12))
    cols["d50"] = pa.array([maybe(rng, decimal.Decimal(rng.randint(-10**49, 10**49)).scaleb(-5))
                            for _ in range(n)], pa.decimal256(50, 5))
    cols["s"] = pa.array([maybe(rng, "".join(rng.choice(words) for _ in range(rng.randint(0, 6))))
                          for _ in range(n)], pa.string())
    cols["ls"] = pa.array([maybe(rng, "x" * rng.randint(0, 300)) for _ in range(n)], pa.large_string())
    cols["dict"] = pa.array([maybe(rng, rng.choice(words)) for _ in range(n)]).dictionary_encode()
    cols["bin"] = pa.array([maybe(rng, rng.randbytes(rng.randint(0, 40))) for _ in range(n)], pa.binary())
    cols["fbin"] = pa.array([maybe(rng, rng.randbytes(5)) for _ in range(n)], pa.binary(5))
    cols["b"] = pa.array([maybe(rng, rng.random() < 0.5) for _ in range(n)], pa.bool_())
    cols["d32"] = pa.array([maybe(rng, datetime.date(1900, 1, 1) + datetime.timedelta(days=rng.randint(0, 80000)))
                            for _ in range(n)], pa.date32())
    cols["d64"] = pa.array([maybe(rng, datetime.date(1960, 1, 1) + datetime.timedelta(days=rng.randint(0, 30000)))
                            for _ in range(n)], pa.date64())
    cols["t32"] = pa.array([maybe(rng, (datetime.datetime(2000, 1, 1) + datetime.timedelta(
        milliseconds=rng.randint(0, 86399999))).time()) for _ in range(n)], pa.time32("ms"))
    cols["t64"] = pa.array([maybe(rng, (datetime.datetime(2000, 1, 1) + datetime.timedelta(
        microseconds=rng.randint(0, 86399999999))).time()) for _ in range(n)], pa.time64("us"))
    for unit, name in (("s", "ts_s"), ("ms", "ts_ms"), ("us", "ts_us"), ("ns", "ts_ns")):
        vals = []
        for _ in range(n):
            us = rng.randint(-2 * 10**15, 4 * 10**15)
            us -= us % {"s": 10**6, "ms": 1000, "us": 1, "ns": 1}[unit]
            vals.append(maybe(rng, epoch + datetime.timedelta(microseconds=us)))
        cols[name] = pa.array(vals, pa.timestamp(unit))
    cols["tz_us"] = pa.array([maybe(rng, datetime.datetime(2020, 1, 1, tzinfo=utc) + datetime.timedelta(
        microseconds=rng.randint(-10**15, 10**15))) for _ in range(n)], pa.timestamp("us", tz="UTC"))
    cols["tz_ny"] = pa.array([maybe(rng, datetime.datetime(2020, 1, 1, tzinfo=utc) + datetime.timedelta(
        seconds=rng.randint(-10**9, 10**9))) for _ in range(n)], pa.timestamp("ms", tz="America/New_York"))
    cols["uid"] = pa.array([maybe(rng, uuid.UUID(int=rng.getrandbits(128)).bytes) for _ in range(n)],
                           pa.binary(16))
    cols["li"] = pa.array([maybe(rng, [maybe(rng, rng.randint(-1000, 1000), 0.2) for _ in range(rng.randint(0, 5))])
                           for _ in range(n)], pa.list_(pa.int64()))
    cols["ls_str"] = pa.array([maybe(rng, [maybe(rng, rng.choice(words), 0.2) for _ in range(rng.randint(0, 4))])
                               for _ in range(n)], pa.large_list(pa.string()))
    return pa.table(cols)


PYARROW_SQL = """
    id int, i8 smallint, u8 smallint, i16 smallint, u16 int, u32 bigint, i64 bigint, u64 numeric(20,0),
    f32 real, f64 float8, d10 numeric(10,3), d38 numeric(38,12), d50 numeric(50,5), s text, ls text,
    dict text, bin bytea, fbin bytea, b bool, d32 date, d64 date, t32 time, t64 time,
    ts_s timestamp, ts_ms timestamp, ts_us timestamp, ts_ns timestamp, tz_us timestamptz,
    tz_ny timestamptz, uid uuid, li bigint[], ls_str text[]
"""


def pyarrow_rows(tab):
    rows = list(zip(*[tab.column(c).to_pylist() for c in tab.column_names]))
    out = []
    for r in rows:
        r = list(r)
        i = tab.column_names.index("uid")
        if r[i] is not None:
            r[i] = str(uuid.UUID(bytes=r[i]))
        out.append(r)
    return out


def test_pyarrow_files(conn, d):
    tab = pyarrow_table(6000, 5)
    rows = pyarrow_rows(tab)
    variants = [
        ("snappy, dictionary pages, 4 row groups", dict(compression="snappy", row_group_size=1500)),
        ("dictionaries falling back to plain pages",
         dict(compression="snappy", dictionary_pagesize_limit=2048, data_page_size=2048)),
        ("zstd, plain pages", dict(compression="zstd", use_dictionary=False)),
        ("gzip, small data pages", dict(compression="gzip", data_page_size=4096)),
        ("lz4", dict(compression="lz4")),
        ("uncompressed, data page v2", dict(compression="none", data_page_version="2.0")),
    ]
    for label, opts in variants:
        path = os.path.join(d, f"pyarrow_{len(label)}.parquet")
        pq.write_table(tab, path, **opts)
        load_and_compare(conn, f"pyarrow file ({label}) loads as from CSV", path, PYARROW_SQL, rows)
    # Arrow IPC files (Feather v2): lz4 (pyarrow's default), zstd, none, small batches
    import pyarrow.feather as feather
    for comp in ("lz4", "zstd", "uncompressed"):
        path = os.path.join(d, f"pyarrow_{comp}.arrow")
        feather.write_feather(tab, path, compression=comp, chunksize=1000)
        load_and_compare(conn, f"pyarrow Arrow IPC file ({comp}) loads as from CSV", path, PYARROW_SQL, rows)


DUCKDB_SELECT = """
    SELECT i AS id,
           CASE WHEN i % 13 = 0 THEN NULL ELSE (hash(i) % 2000000000)::INTEGER END AS a,
           (hash(i * 3) % 9000000000000000000)::BIGINT AS b,
           (i % 250)::UTINYINT AS ut,
           ((hash(i) % 100000000) / 1000.0)::DECIMAL(18,3) AS dec,
           ((hash(i * 5) % 1000000000000)::DECIMAL(38,10) / 7)::DECIMAL(38,10) AS dec38,
           CASE WHEN i % 7 = 0 THEN NULL ELSE md5(i::VARCHAR) || repeat('ñ', i % 3) END AS s,
           md5(i::VARCHAR)::BLOB AS bl,
           i % 2 = 0 AS bo,
           DATE '1950-01-01' + (i * 3)::INTEGER AS dt,
           TIME '00:00:00' + to_microseconds((hash(i) % 86400000000)::BIGINT) AS tm,
           TIMESTAMP '1969-06-01' + to_microseconds((hash(i * 7) % 3000000000000000)::BIGINT) AS ts,
           TIMESTAMPTZ '2001-01-01 00:00:00+00' + to_seconds((hash(i * 11) % 900000000)::BIGINT) AS tz,
           uuid() AS u,
           CASE WHEN i % 5 = 0 THEN NULL ELSE [i, NULL, i * 2] END AS li,
           ['a' || i, NULL, ''] AS ls,
           (i % 1000)::FLOAT AS f,
           (i / 3)::DOUBLE AS dbl
    FROM range(20000) t(i)
"""

DUCKDB_SQL = """
    id bigint, a int, b bigint, ut smallint, dec numeric(18,3), dec38 numeric(38,10), s text,
    bl bytea, bo bool, dt date, tm time, ts timestamp, tz timestamptz, u uuid, li bigint[], ls text[],
    f real, dbl float8
"""


def test_duckdb_files(conn, d):
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"CREATE TABLE src AS {DUCKDB_SELECT}")
    rows = con.execute("SELECT * FROM src ORDER BY id").fetchall()
    rows = [[str(v) if isinstance(v, uuid.UUID) else v for v in r] for r in rows]
    for comp, extra in (("zstd", ", ROW_GROUP_SIZE 4096"), ("snappy", ""), ("uncompressed", "")):
        path = os.path.join(d, f"duckdb_{comp}.parquet")
        con.execute(f"COPY (SELECT * FROM src ORDER BY id) TO '{path}' (FORMAT parquet, COMPRESSION {comp}{extra})")
        load_and_compare(conn, f"DuckDB file ({comp}) loads as from CSV", path, DUCKDB_SQL, rows)


# ---------------------------------------------------------------------------
# 4. STDOUT and STDIN
# ---------------------------------------------------------------------------

def test_stdio(conn):
    with conn.cursor() as cur:
        data = bytearray()
        with cur.copy("COPY pqx_src_tessera TO STDOUT (FORMAT parquet, COMPRESSION zstd)") as cp:
            for block in cp:
                data += block
        tab = pq.read_table(pa.BufferReader(bytes(data)))
        cur.execute("SELECT count(*), sum(id), sum(length(t)) FROM pqx_src_tessera")
        count, sid, slen = cur.fetchone()
        t = tab.column("t").to_pylist()
        check("COPY TO STDOUT: pyarrow reads the rows",
              tab.num_rows == count and sum(tab.column("id").to_pylist()) == sid and
              sum(len(x) for x in t if x is not None) == slen)
        cur.execute("DROP TABLE IF EXISTS pqx_stdin")
        cur.execute(f"CREATE TABLE pqx_stdin ({SRC_COLUMNS}) USING tessera")
        with cur.copy("COPY pqx_stdin FROM STDIN (FORMAT parquet)") as cp:
            for i in range(0, len(data), 65536):
                cp.write(bytes(data[i:i + 65536]))
        cur.execute("""SELECT count(*) FROM (SELECT id, t, n, ts, tz, ai, jb FROM pqx_stdin
                       EXCEPT ALL SELECT id, t, n, ts, tz, ai, jb FROM pqx_src_tessera) x""")
        diff = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM pqx_stdin")
        check("COPY FROM STDIN: the rows written to STDOUT come back", diff == 0 and cur.fetchone()[0] == count)
        conn.commit()
        # a file that is not Parquet, from STDIN: an error, and the session goes on
        try:
            with cur.copy("COPY pqx_stdin FROM STDIN (FORMAT parquet)") as cp:
                cp.write(b"not a parquet file")
            check("COPY FROM STDIN of garbage fails", False, "no error")
        except psycopg.Error as e:
            conn.rollback()
            check("COPY FROM STDIN of garbage fails", e.sqlstate == "22P04", e.sqlstate)
        cur.execute("SELECT 1")
        check("the session goes on after a failed COPY FROM STDIN", cur.fetchone()[0] == 1)
        # a role without pg_read_server_files may not hand the reader a file
        cur.execute("DROP ROLE IF EXISTS pqx_user")
        cur.execute("CREATE ROLE pqx_user")
        cur.execute("GRANT INSERT ON pqx_stdin TO pqx_user")
        conn.commit()
        cur.execute("SET ROLE pqx_user")
        try:
            with cur.copy("COPY pqx_stdin FROM STDIN (FORMAT parquet)") as cp:
                cp.write(bytes(data[:65536]))
            check("COPY FROM STDIN needs pg_read_server_files", False, "no error")
        except psycopg.Error as e:
            conn.rollback()
            check("COPY FROM STDIN needs pg_read_server_files", e.sqlstate == "42501", e.sqlstate)
        cur.execute("RESET ROLE")
        cur.execute("DROP OWNED BY pqx_user")
        cur.execute("DROP ROLE pqx_user")
    conn.commit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--dir", required=True)
    args = ap.parse_args()
    with psycopg.connect(args.dsn) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS tessera")
        conn.execute("SET TimeZone = 'UTC'")
        test_export(conn, args.dir)
        conn.commit()
        test_pyarrow_files(conn, args.dir)
        test_duckdb_files(conn, args.dir)
        test_stdio(conn)
        with conn.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS pqx_src_tessera, pqx_src_heap, pqx_in, pqx_csv, pqx_stdin")
            cur.execute("DROP FOREIGN DATA WRAPPER IF EXISTS tessera_parquet CASCADE")
    print(f"{PASSED[0]} passed, {len(FAILED)} failed")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
