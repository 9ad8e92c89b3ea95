"""A generator of the Star Schema Benchmark's tables (issue 19): lineorder,
date, customer, supplier and part as the SSB specification defines them
(P. O'Neil, E. O'Neil, X. Chen, "Star Schema Benchmark", revision 3, 2009,
sections 2.1-2.5, which derive them from TPC-H's generator), written once
as CSV files (with a header line) into <data dir>/ssb-sf<SF>/ and cached.

Sizes at scale factor SF:

- lineorder: SF x 6,000,000 rows, orders of 1 to 7 lines (uniform), the
  last order cut short where the count is reached;
- customer SF x 30,000; supplier SF x 2,000 (at least 1 each);
- part 200,000 x floor(1 + log2 SF) for SF >= 1 (the specification's
  formula), 200,000 x SF below 1, where the formula has no meaning;
- date: every day of 1992-01-01 .. 1998-12-31, 2,557 rows (often given
  as 2,556; the range has 2,557 days, 1992 and 1996 being leap years).

Values (every draw uniform, from numpy's PCG64 raw bits, seeded):

- lo_orderkey: the i-th order's key keeps the first 8 of every 32 keys,
  as TPC-H's and SSB's orders do (1..8, 33..40, ...); lo_linenumber 1..n;
- lo_custkey, lo_partkey, lo_suppkey uniform over their dimension's keys;
- lo_orderdate uniform over 1992-01-01 .. 1998-08-02 (the last date minus
  151 days, as TPC-H's o_orderdate); lo_commitdate = lo_orderdate + 30..90
  days; both as the date key yyyymmdd;
- lo_orderpriority one of 5 per order, lo_shippriority '0', lo_shipmode one
  of 7 per line; lo_quantity 1..50, lo_discount 0..10 (percent), lo_tax 0..8
  (percent), per line;
- money in cents, integers, derived as the specification's generator
  derives them from the part's retail price
  p = 90000 + (partkey / 10) mod 20001 + 100 x (partkey mod 1000) cents:
  lo_extendedprice = lo_quantity x p, lo_revenue = lo_extendedprice x
  (100 - lo_discount) / 100, lo_supplycost = 6 x p / 10, lo_ordtotalprice
  = the order's sum of lo_revenue x (100 + lo_tax) / 100 (integer
  divisions, truncating);
- customer and supplier: 'Customer#000000001', an address of 10..25
  letters and digits, a nation of the 25 (TPC-H's, in their 5 regions), a
  city = the nation's name cut or blank-padded to 9 characters + a digit
  0..9 ('UNITED KI1', 'CHINA    3'; 250 cities), a phone
  '<10 + nation>-ddd-ddd-dddd', a market segment of 5 (customer);
- part: p_mfgr 'MFGR#1'..'MFGR#5', p_category = p_mfgr + 1..5 ('MFGR#12',
  25), p_brand1 = p_category + 1..40 ('MFGR#1221', 1,000), p_name two
  different colors of TPC-H's 92, p_color the name's first, p_type one of
  TPC-H's 150, p_size 1..50, p_container one of TPC-H's 40;
- date: d_date 'January 1, 1992', d_dayofweek 'Sunday'..'Saturday' with
  d_daynuminweek 1..7 (weeks start on Sunday), d_month, d_year,
  d_yearmonthnum 199201, d_yearmonth 'Jan1992', d_daynuminmonth,
  d_daynuminyear, d_monthnuminyear, d_weeknuminyear = (d_daynuminyear - 1)
  / 7 + 1 (1..53), d_sellingseason as the specification's generator names
  them (Winter January-March, Spring April, Summer May-August, Fall
  September-October, Christmas November-December), the flags 0/1:
  d_lastdayinweekfl (Saturday), d_lastdayinmonthfl, d_holidayfl (New
  Year's Day, Independence Day, Christmas Eve and Day, New Year's Eve,
  Memorial Day, Labor Day, Thanksgiving), d_weekdayfl (Monday-Friday).

Fast and small: every column is drawn by numpy and formatted into a byte
matrix (digits, or rows of a table of texts), 200,000 lineorder rows at a
time; no per-row Python.  Deterministic for a given scale factor: any numpy
gives the same files."""

from __future__ import annotations

import calendar
import datetime
import math
import os
import shutil
import time
from typing import Optional

from .ssb_queries import TABLES, columns

VERSION = 1        # bump when the rows change: a cached directory of another version is regenerated
SEED = 19920101
ORDERS_PER_CHUNK = 50_000            # ~200,000 lineorder rows

REGIONS = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
NATIONS = [  # TPC-H's 25 nations and their regions (index into REGIONS)
    ("ALGERIA", 0), ("ARGENTINA", 1), ("BRAZIL", 1), ("CANADA", 1), ("EGYPT", 4), ("ETHIOPIA", 0),
    ("FRANCE", 3), ("GERMANY", 3), ("INDIA", 2), ("INDONESIA", 2), ("IRAN", 4), ("IRAQ", 4), ("JAPAN", 2),
    ("JORDAN", 4), ("KENYA", 0), ("MOROCCO", 0), ("MOZAMBIQUE", 0), ("PERU", 1), ("CHINA", 2),
    ("ROMANIA", 3), ("SAUDI ARABIA", 4), ("VIETNAM", 2), ("RUSSIA", 3), ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1)]
SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"]
PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"]
SHIPMODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
COLORS = (  # TPC-H's 92 part-name words
    "almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood burnished "
    "chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick "
    "floral forest frosted gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki lace "
    "lavender lawn lemon light lime linen magenta maroon medium metallic midnight mint misty moccasin "
    "navajo navy olive orange orchid pale papaya peach peru pink plum powder puff purple red rose rosy "
    "royal saddle salmon sandy seashell sienna sky slate smoke snow spring steel tan thistle tomato "
    "turquoise violet wheat white yellow").split()
TYPES = [f"{a} {b} {c}" for a in ("STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO")
         for b in ("ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED")
         for c in ("TIN", "NICKEL", "BRASS", "STEEL", "COPPER")]
CONTAINERS = [f"{a} {b}" for a in ("SM", "LG", "MED", "JUMBO", "WRAP")
              for b in ("CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM")]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]   # date.weekday()'s order
ALNUM = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

FIRST_DAY = datetime.date(1992, 1, 1)
LAST_DAY = datetime.date(1998, 12, 31)
N_DAYS = (LAST_DAY - FIRST_DAY).days + 1                # 2557
LAST_ORDER_DAY = N_DAYS - 1 - 151                       # 1998-08-02, as TPC-H's o_orderdate
TABLE_IDS = {"lineorder": 1, "date": 2, "customer": 3, "supplier": 4, "part": 5}


def dir_name(sf: float) -> str:
    return f"ssb-sf{sf:g}"


def row_counts(sf: float) -> dict:
    """Rows of each table at scale factor `sf`."""
    parts = 200_000 * math.floor(1 + math.log2(sf)) if sf >= 1 else round(200_000 * sf)
    return {"lineorder": max(1, round(sf * 6_000_000)), "date": N_DAYS,
            "customer": max(1, round(sf * 30_000)), "supplier": max(1, round(sf * 2_000)), "part": max(1, parts)}


def retail_price(partkey):
    """The part's retail price in cents (TPC-H's formula), for ints or arrays."""
    return 90000 + (partkey // 10) % 20001 + 100 * (partkey % 1000)


def order_key(i):
    """The key of the i-th order (0-based): the first 8 of every 32 keys."""
    return (i // 8) * 32 + i % 8 + 1


# ---------------------------------------------------------------- randomness and formatting

class Rand:
    """Uniform integers from PCG64's raw 64-bit output only, so that the
    stream does not depend on how a numpy version implements its
    distributions."""

    def __init__(self, np, *key: int):
        self.np = np
        self.bits = np.random.PCG64(np.random.SeedSequence([SEED, *key]))

    def ints(self, n: int, lo: int, hi: int):
        """n ints in lo..hi (inclusive): the high 32 bits scaled."""
        np = self.np
        top = self.bits.random_raw(n) >> np.uint64(32)
        return ((top * np.uint64(hi - lo + 1)) >> np.uint64(32)).astype(np.int64) + lo


def digits(np, values, width: Optional[int] = None, zero_pad: bool = False):
    """Non-negative integers as a byte matrix (n, width) of their decimal
    digits, right-aligned; leading positions are 0 bytes (dropped when the
    line is written) unless `zero_pad`."""
    v = np.asarray(values, dtype=np.int64)
    if width is None:
        width = len(str(int(v.max()))) if v.size else 1
    out = np.empty((v.size, width), dtype=np.uint8)
    x = v.copy()
    for i in range(width - 1, -1, -1):
        out[:, i] = 48 + x % 10
        x //= 10
    if not zero_pad:
        nd = np.ones(v.size, dtype=np.int64)
        t = v // 10
        while t.any():
            nd += t > 0
            t //= 10
        out[np.arange(width)[None, :] < (width - nd)[:, None]] = 0
    return out


def texts(np, strings: list):
    """A table of texts as a byte matrix (k, width), 0-padded: index its
    rows by code to get a column."""
    b = [s.encode() for s in strings]
    w = max(len(s) for s in b)
    return np.array(b, dtype=f"S{w}").view(np.uint8).reshape(len(b), w)


def literal(np, n: int, s: str):
    return np.tile(np.frombuffer(s.encode(), dtype=np.uint8), (n, 1))


def csv_lines(np, cols: list) -> bytes:
    """CSV lines from byte-matrix columns (none may hold a comma, a quote
    or a 0 byte; none is empty)."""
    n = cols[0].shape[0]
    comma, newline = literal(np, n, ","), literal(np, n, "\n")
    parts = []
    for c in cols:
        parts += [c, comma]
    parts[-1] = newline
    flat = np.hstack(parts).ravel()
    return flat[flat != 0].tobytes()


def header(table: str) -> bytes:
    return (",".join(columns(table)) + "\n").encode()


# ---------------------------------------------------------------- the tables

def day_keys(np):
    """d_datekey (yyyymmdd) of day 0 .. N_DAYS - 1."""
    days = [FIRST_DAY + datetime.timedelta(days=i) for i in range(N_DAYS)]
    return np.array([d.year * 10000 + d.month * 100 + d.day for d in days], dtype=np.int64)


def season(month: int) -> str:
    if month <= 3:
        return "Winter"
    if month == 4:
        return "Spring"
    if month <= 8:
        return "Summer"
    if month <= 10:
        return "Fall"
    return "Christmas"


def holiday(d: datetime.date) -> bool:
    if (d.month, d.day) in ((1, 1), (7, 4), (12, 24), (12, 25), (12, 31)):
        return True
    if d.month == 5 and d.weekday() == 0 and d.day + 7 > 31:          # Memorial Day: May's last Monday
        return True
    if d.month == 9 and d.weekday() == 0 and d.day <= 7:              # Labor Day: September's first Monday
        return True
    return d.month == 11 and d.weekday() == 3 and 22 <= d.day <= 28   # Thanksgiving: the fourth Thursday


def date_lines() -> bytes:
    out = []
    for i in range(N_DAYS):
        d = FIRST_DAY + datetime.timedelta(days=i)
        month = MONTHS[d.month - 1]
        dow = (d.weekday() + 1) % 7 + 1                 # Sunday 1 .. Saturday 7
        yday = d.timetuple().tm_yday
        last_in_month = d.day == calendar.monthrange(d.year, d.month)[1]
        out.append(",".join(str(x) for x in (
            d.year * 10000 + d.month * 100 + d.day, f'"{month} {d.day}, {d.year}"', WEEKDAYS[d.weekday()],
            month, d.year, d.year * 100 + d.month, f"{month[:3]}{d.year}", dow, d.day, yday, d.month,
            (yday - 1) // 7 + 1, season(d.month), int(dow == 7), int(last_in_month), int(holiday(d)),
            int(dow not in (1, 7)))))
    return ("\n".join(out) + "\n").encode()


def cities(np):
    """The 250 cities, nation i's digit k at 10 i + k."""
    return texts(np, [f"{name[:9]:<9}{k}" for name, _ in NATIONS for k in range(10)])


def address(np, r: Rand, n: int):
    chars = np.frombuffer(ALNUM.encode(), dtype=np.uint8)[r.ints(n * 25, 0, len(ALNUM) - 1)].reshape(n, 25)
    length = r.ints(n, 10, 25)
    chars[np.arange(25)[None, :] >= length[:, None]] = 0
    return chars


def company_lines(np, table: str, n: int) -> bytes:
    """customer or supplier rows."""
    r = Rand(np, TABLE_IDS[table])
    keys = np.arange(1, n + 1)
    nation = r.ints(n, 0, len(NATIONS) - 1)
    city = nation * 10 + r.ints(n, 0, 9)
    regions = np.array([reg for _, reg in NATIONS])
    dash = literal(np, n, "-")
    cols = [digits(np, keys), np.hstack([literal(np, n, "Customer#" if table == "customer" else "Supplier#"),
                                          digits(np, keys, 9, zero_pad=True)]),
            address(np, r, n), cities(np)[city], texts(np, [name for name, _ in NATIONS])[nation],
            texts(np, REGIONS)[regions[nation]],
            np.hstack([digits(np, nation + 10), dash, digits(np, r.ints(n, 100, 999)), dash,
                       digits(np, r.ints(n, 100, 999)), dash, digits(np, r.ints(n, 1000, 9999))])]
    if table == "customer":
        cols.append(texts(np, SEGMENTS)[r.ints(n, 0, len(SEGMENTS) - 1)])
    return csv_lines(np, cols)


def part_lines(np, n: int) -> bytes:
    r = Rand(np, TABLE_IDS["part"])
    c1 = r.ints(n, 0, len(COLORS) - 1)
    c2 = (c1 + r.ints(n, 1, len(COLORS) - 1)) % len(COLORS)       # another color
    colors = texts(np, COLORS)
    mfgr, cat, brand = r.ints(n, 1, 5), r.ints(n, 1, 5), r.ints(n, 1, 40)
    brands = texts(np, [f"MFGR#{m}{c}{b}" for m in range(1, 6) for c in range(1, 6) for b in range(1, 41)])
    cols = [digits(np, np.arange(1, n + 1)), np.hstack([colors[c1], literal(np, n, " "), colors[c2]]),
            texts(np, [f"MFGR#{m}" for m in range(1, 6)])[mfgr - 1],
            texts(np, [f"MFGR#{m}{c}" for m in range(1, 6) for c in range(1, 6)])[(mfgr - 1) * 5 + cat - 1],
            brands[((mfgr - 1) * 5 + cat - 1) * 40 + brand - 1], colors[c1],
            texts(np, TYPES)[r.ints(n, 0, len(TYPES) - 1)], digits(np, r.ints(n, 1, 50)),
            texts(np, CONTAINERS)[r.ints(n, 0, len(CONTAINERS) - 1)]]
    return csv_lines(np, cols)


def lineorder_chunks(np, counts: dict):
    """The lineorder table's lines, a chunk of ORDERS_PER_CHUNK orders at a time."""
    target = counts["lineorder"]
    keys = day_keys(np)
    lookup = {name: texts(np, values) for name, values in (("prio", PRIORITIES), ("mode", SHIPMODES))}
    done = first_order = chunk = 0
    while done < target:
        r = Rand(np, TABLE_IDS["lineorder"], chunk)
        k = ORDERS_PER_CHUNK
        lines = r.ints(k, 1, 7)
        cust = r.ints(k, 1, counts["customer"])
        oday = r.ints(k, 0, LAST_ORDER_DAY)
        prio = r.ints(k, 0, len(PRIORITIES) - 1)
        ends = np.cumsum(lines)
        if done + ends[-1] >= target:              # the last chunk: cut where the count is reached
            m = int(np.searchsorted(ends, target - done)) + 1
            lines, cust, oday, prio = lines[:m].copy(), cust[:m], oday[:m], prio[:m]
            lines[-1] -= int(ends[m - 1]) - (target - done)
            ends = np.cumsum(lines)
        m = lines.size
        n = int(ends[-1])
        starts = ends - lines
        order = np.repeat(np.arange(m), lines)
        partkey = r.ints(n, 1, counts["part"])
        suppkey = r.ints(n, 1, counts["supplier"])
        qty, disc, tax = r.ints(n, 1, 50), r.ints(n, 0, 10), r.ints(n, 0, 8)
        commit = oday[order] + r.ints(n, 30, 90)
        mode = r.ints(n, 0, len(SHIPMODES) - 1)
        price = retail_price(partkey)
        ext = qty * price
        revenue = ext * (100 - disc) // 100
        total = np.add.reduceat(revenue * (100 + tax) // 100, starts)
        cols = [digits(np, order_key(first_order + order)), digits(np, np.arange(n) - starts[order] + 1),
                digits(np, cust[order]), digits(np, partkey), digits(np, suppkey), digits(np, keys[oday[order]]),
                lookup["prio"][prio[order]], literal(np, n, "0"), digits(np, qty), digits(np, ext),
                digits(np, total[order]), digits(np, disc), digits(np, revenue), digits(np, 6 * price // 10),
                digits(np, tax), digits(np, keys[commit]), lookup["mode"][mode]]
        done += n
        yield csv_lines(np, cols), done
        first_order += m
        chunk += 1


def generate(path: str, sf: float, log=None) -> dict:
    """Write the five tables at scale factor `sf` into directory `path`
    (table.csv each, a header line first).  Returns facts (seconds, rows, bytes)."""
    try:
        import numpy as np
    except ImportError as e:  # matplotlib (bench/setup.sh) brings numpy
        raise RuntimeError("the SSB generator needs numpy (bench/setup.sh installs it)") from e
    start = time.perf_counter()
    counts = row_counts(sf)
    os.makedirs(path, exist_ok=True)
    total = 0
    for table in TABLES:
        with open(os.path.join(path, f"{table}.csv"), "wb") as f:
            f.write(header(table))
            if table == "lineorder":
                for i, (block, rows) in enumerate(lineorder_chunks(np, counts)):
                    f.write(block)
                    if log and i % 10 == 9:
                        log(f"  ssb lineorder: {rows:,} rows of {counts['lineorder']:,}")
            elif table == "date":
                f.write(date_lines())
            elif table == "part":
                f.write(part_lines(np, counts["part"]))
            else:
                f.write(company_lines(np, table, counts[table]))
        total += os.path.getsize(os.path.join(path, f"{table}.csv"))
    with open(os.path.join(path, "VERSION"), "w") as f:
        f.write(f"{VERSION}\n")
    return {"seconds": round(time.perf_counter() - start, 3), "rows": counts, "bytes": total}


def cached(path: str) -> bool:
    try:
        with open(os.path.join(path, "VERSION")) as f:
            if f.read().strip() != str(VERSION):
                return False
    except OSError:
        return False
    return all(os.path.exists(os.path.join(path, f"{t}.csv")) for t in TABLES)


def ensure(data_dir: str, sf: float, log=None) -> tuple:
    """The cached CSV directory of scale factor `sf`: (path, facts or None
    if it was there)."""
    path = os.path.join(data_dir, dir_name(sf))
    if cached(path):
        return path, None
    if log:
        log(f"  generating SSB SF {sf:g} into {path}")
    tmp = path + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    facts = generate(tmp, sf, log=log)
    shutil.rmtree(path, ignore_errors=True)
    os.rename(tmp, path)
    return path, facts
