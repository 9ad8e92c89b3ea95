"""A generator of ClickBench-like `hits` rows (issue 18): the 105 columns of
ClickBench's table with web-analytics distributions, written once as CSV and
cached.  ClickBench's own data set (100M rows of anonymized Yandex.Metrica
hits, 75 GB as TSV) is too large to fetch here, and a sample of it would not
scale; this makes any number of rows that look alike to the 43 queries.

What the rows are like (shares of rows, not of distinct values):

- sites: 4,000 counters, each a site with its own domain, pages, charset and
  code version.  CounterID 1704 has 16% of the hits, 33290 13%, 14 11%,
  62 (the one queries q36..q42 filter on) 6.5%, the rest a Zipf-like tail;
  ClickBench's file is clustered by its key, and so are these rows: sorted by
  (CounterID, EventDate, UserID, EventTime, WatchID) -- the primary key.
- pages: 35% of a site's hits are its home page, the rest Zipf-like over its
  pages (~58,000 pages in all); home pages' URLs are 15-40 characters,
  the others' 50-175 (68 on average over the hits); titles 10-100 (45 on
  average), none on 4% of the pages.  4% of the hits are clicks on
  outbound links (IsLink: a random page of any site; 15% of them
  downloads).  0.8% of the pages carry `utm_source=google`, and one small
  site lives on `maps.google.ru` (`URL LIKE '%google%'`: ~0.6% of the
  rows, '%.google.%' ~0.15%); 2% of the other pages' titles name Google
  (~1% of the rows).
- users: rows/8 users (at least 2,000), Zipf-like activity (the busiest
  ~0.1% of the hits); each has a fixed device (browser, OS, screen;
  7.5% are phones or tablets with a MobilePhoneModel), region (Zipf over
  3,000 regions), IP (shared behind NATs: Zipf over rows/16 addresses),
  age, sex, interests and time zone.  User 435090932899640449 (q19) is
  the 41st busiest.
- traffic: 38% internal (Referer another page of the site, TraficSourceID
  -1), 17.5% direct (empty Referer, 0), 35% search engines (2; yandex.ru
  58%, google.ru 36%, go.mail.ru, bing.com), 5% other sites (1), 2% ads
  (AdvEngineID <> 0, 3), 1.5% social networks (5), 0.5% mail (6), 0.5%
  saved pages (empty Referer, 4).  38% of
  the search hits have a SearchPhrase (~13% of the rows; 30,000 phrases,
  Zipf-like).
- time: July 2013, weekdays busier than weekends, afternoons and evenings
  busier than nights; EventDate is EventTime's date; ClientEventTime and
  LocalEventTime follow the user's time zone.  1% of the hits are recorded
  twice (same WatchID, 1-30 s apart, same day).
- flags: IsRefresh 8%, DontCountHits 3%, IsNotBounce 30%, IsEvent 2%, ...
- URLHash and RefererHash: a 64-bit hash of the string (blake2b), the same
  for the same text in either column; two strings are given the constants
  ClickBench's q40 and q41 ask for: site 62's second page (RefererHash
  3594120000172545465) and its home page (URLHash 2868770270353813622).
- WindowClientWidth/Height: per hit, from the screen: 30% maximized
  windows, 70% anything smaller.

Deterministic: everything comes from numpy's PCG64 raw bits (and Python's
random.Random for the texts), seeded, so any numpy gives the same file.
Fast: numpy draws, every text formed once per distinct value, a line
joined per row (~15 s and ~630 MB per million rows here).
"""

from __future__ import annotations

import hashlib
import os
import random
import time
from typing import Optional

from .clickbench_queries import columns

VERSION = 1        # bump when the rows change: the cached file's name carries it
SEED = 20130701

# ClickBench's q40 and q41 look for these hashes
REFERER_HASH_Q40 = 3594120000172545465
URL_HASH_Q41 = 2868770270353813622
USER_Q19 = 435090932899640449

BIG_COUNTERS = [(1704, 0.16), (33290, 0.13), (14, 0.11), (62, 0.065)]
N_SITES = 4000
N_PAGES = 60000
N_REGIONS = 3000
N_PHRASES = 30000
JULY_2013 = 1372636800  # 2013-07-01 00:00:00 as epoch seconds (the date is what matters)

REFERER_TYPES = [  # (name, share, TraficSourceID)
    ("internal", 0.38, -1), ("direct", 0.175, 0), ("search", 0.35, 2), ("external", 0.05, 1),
    ("ads", 0.02, 3), ("social", 0.015, 5), ("mail", 0.005, 6), ("saved", 0.005, 4)]
SEARCH_ENGINES = [  # (SearchEngineID, share of search hits, referer vocabulary size)
    (2, 0.58, 20000), (3, 0.36, 12000), (4, 0.04, 1500), (5, 0.02, 800)]
ADV_ENGINES = [(2, 0.55), (3, 0.25), (4, 0.08), (12, 0.05), (13, 0.04), (27, 0.03)]


def file_name(rows: int) -> str:
    return f"clickbench-v{VERSION}-{rows}.csv"


# ---------------------------------------------------------------- randomness

class Rand:
    """Uniform draws from PCG64's raw 64-bit output only, so that the stream
    does not depend on how a numpy version implements its distributions."""

    def __init__(self, np, *key: int):
        self.np = np
        self.bits = np.random.PCG64(np.random.SeedSequence([SEED, *key]))

    def raw(self, n: int):
        return self.bits.random_raw(n)

    def uni(self, n: int):
        """n floats in [0, 1)."""
        return (self.raw(n) >> self.np.uint64(11)).astype(self.np.float64) * (1.0 / (1 << 53))

    def below(self, n: int, k) -> "np.ndarray":
        """n ints in [0, k) (k a scalar or an array)."""
        return self.np.minimum((self.uni(n) * k).astype(self.np.int64), self.np.asarray(k) - 1)

    def power(self, n: int, k, a: float):
        """n ints in [0, k), Zipf-like: floor(k * u^a); a > 1 favours small ones."""
        return self.np.minimum((k * self.uni(n) ** a).astype(self.np.int64), self.np.asarray(k) - 1)

    def pick(self, n: int, cdf):
        """n indexes drawn by a cumulative distribution."""
        return self.np.searchsorted(cdf, self.uni(n) * cdf[-1], side="right")

    def int64(self, n: int):
        return self.raw(n).view(self.np.int64)


def cdf_of(np, weights):
    return np.cumsum(np.asarray(weights, dtype=np.float64))


# ---------------------------------------------------------------- text

SYLLABLES = ["ka", "ro", "mi", "te", "lo", "va", "ni", "sa", "po", "re", "du", "ma", "ki", "to", "le", "na",
             "bo", "ri", "se", "ta", "go", "pe", "zu", "li", "mo", "da", "fi", "ne", "ko", "ra", "vi", "tu",
             "str", "an", "el", "or", "in", "us", "er", "al", "on", "ex", "is", "ar"]
TLDS = [".ru"] * 6 + [".com", ".net", ".org", ".ua", ".by", ".kz", ".su", ".info"]
SECTIONS = ["news", "catalog", "forum", "blog", "shop", "video", "photo", "auto", "sport", "market",
            "games", "music", "films", "realty", "jobs", "travel", "health", "tech", "kino", "weather"]
EXTS = [".html", ".htm", ".php", "/", ".aspx", ""]
PARAMS = ["id", "page", "sort", "p", "cat", "item", "ref", "from", "view", "lang", "city", "q"]
GOOGLE_TITLES = ["Google Chrome", "Google Maps", "Google Play", "Google Translate", "Google Earth",
                 "Google search", "Google Docs", "Google Android"]


class Words:
    def __init__(self, rng: random.Random, n: int = 4000):
        seen, out = set(), []
        while len(out) < n:
            w = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 2, 3, 3, 3, 4))))
            if w not in seen:
                seen.add(w)
                out.append(w)
        self.list = out
        self.rng = rng

    def some(self, k: int) -> list:
        """k words, Zipf-like (common words are common)."""
        n = len(self.list)
        return [self.list[min(int(n * self.rng.random() ** 2.2), n - 1)] for _ in range(k)]


def csv_text(s: str) -> str:
    """A CSV field: quoted when empty (an unquoted empty field is NULL to
    COPY) or when it holds a quote, comma or line break."""
    if s == "" or any(c in s for c in ',"\n\r'):
        return '"' + s.replace('"', '""') + '"'
    return s


def text_hash(s: str) -> int:
    """The URLHash / RefererHash of a string: signed 64 bits of blake2b."""
    return int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8, person=b"clickbench").digest(),
                          "little", signed=True)


# ---------------------------------------------------------------- the fixed tables

class Tables:
    """Sites, pages, titles, referers, phrases, devices, users: everything
    that rows only point into.  Texts are kept as their CSV fields."""

    def __init__(self, np, rows: int):
        self.np = np
        rng = random.Random(SEED)
        words = Words(rng)
        r = Rand(np, 1)

        # -- sites (counters): the big four, then a Zipf-like tail
        big_ids = [c for c, _ in BIG_COUNTERS]
        tail_ids = sorted(set(rng.sample(range(100, 250000), N_SITES * 2)) - set(big_ids))
        rng.shuffle(tail_ids)
        ids = big_ids + tail_ids[:N_SITES - len(big_ids)]
        rest = 1.0 - sum(s for _, s in BIG_COUNTERS)
        tail = 1.0 / np.arange(1, N_SITES - len(big_ids) + 1) ** 1.1
        share = np.concatenate([[s for _, s in BIG_COUNTERS], tail / tail.sum() * rest])
        self.site_counter = np.array(ids, dtype=np.int64)
        self.site_share = share
        pages = np.maximum(2, (N_PAGES * share ** 0.75 / (share ** 0.75).sum()).astype(np.int64))
        self.site_pages = pages
        self.site_page0 = np.concatenate([[0], np.cumsum(pages)[:-1]])   # index of its home page
        n_pages = int(pages.sum())
        self.n_pages = n_pages

        domains, seen = [], set()
        for i in range(N_SITES):
            while True:
                d = "".join(words.some(rng.choice((1, 1, 2)))) + rng.choice(TLDS)
                if d not in seen:
                    break
            seen.add(d)
            domains.append(d)
        google_site = 40                    # a small site (~0.1% of the hits) on a Google host
        domains[google_site] = "maps.google.ru"
        names = [d.split(".")[0].capitalize() for d in domains]

        # -- pages: URL and title of each
        urls, titles = [], []
        for s in range(N_SITES):
            www = "" if domains[s].count(".") > 1 or rng.random() < 0.3 else "www."
            base = f"http://{www}{domains[s]}/"
            for p in range(int(pages[s])):
                if p == 0:
                    urls.append(base)
                else:
                    path = rng.choice(SECTIONS) + "/"
                    if rng.random() < 0.5:
                        path += words.some(1)[0] + "/"
                    slug = "-".join(words.some(rng.randint(3, 8)))
                    url = f"{base}{path}{slug}{rng.choice(EXTS)}"
                    if rng.random() < 0.75:
                        url += "?" + "&".join(f"{rng.choice(PARAMS)}={rng.randint(1, 999999)}"
                                              for _ in range(rng.randint(1, 4)))
                    url = url[:150]
                    if rng.random() < 0.008:
                        url += ("&" if "?" in url else "?") + "utm_source=google&utm_medium=cpc"
                    urls.append(url)
                roll = rng.random()
                if roll < 0.04:
                    titles.append("")
                else:
                    t = " ".join(words.some(rng.randint(2, 9))).capitalize()
                    if roll < 0.06 and p > 0:      # not on home pages: they carry a third of the hits
                        t = f"{rng.choice(GOOGLE_TITLES)}: {t}"
                    titles.append(f"{t} - {names[s]}")

        # -- referer texts that are not pages
        def search_refs(engine, k):
            out = []
            for _ in range(k):
                q = "+".join(words.some(rng.randint(1, 4)))
                if engine == 2:
                    out.append(f"http://yandex.ru/yandsearch?text={q}&lr={rng.randint(1, 300)}"
                               f"&clid={rng.randint(1000, 99999)}")
                elif engine == 3:
                    out.append(f"http://www.google.ru/search?q={q}&ie=UTF-8&oe=UTF-8&hl=ru")
                elif engine == 4:
                    out.append(f"http://go.mail.ru/search?q={q}&fr=main")
                else:
                    out.append(f"http://www.bing.com/search?q={q}&form=QBLH")
            return out

        strings = [""] + urls           # STR: every URL / referer text; 0 is ''
        self.page_str0 = 1
        self.search_str0 = []
        for engine, _, k in SEARCH_ENGINES:
            self.search_str0.append((len(strings), k))
            strings += search_refs(engine, k)
        self.ads_str0 = len(strings)
        ads = [f"http://an.yandex.ru/count/{rng.getrandbits(64):x}{rng.getrandbits(32):x}" for _ in range(1500)]
        ads += [f"http://www.googleadservices.com/pagead/aclk?sa=L&ai={rng.getrandbits(64):x}&adurl="
                for _ in range(700)]
        strings += ads
        self.n_ads = len(ads)
        self.social_str0 = len(strings)
        social = ([f"http://vk.com/away.php?to={rng.getrandbits(40):x}" for _ in range(400)] +
                  [f"http://www.facebook.com/l.php?u={rng.getrandbits(40):x}" for _ in range(200)] +
                  [f"http://t.co/{rng.getrandbits(40):x}" for _ in range(100)] +
                  [f"http://www.odnoklassniki.ru/dk?st.cmd=outLinkWarning&st.rfn={rng.getrandbits(40):x}"
                   for _ in range(100)])
        strings += social
        self.n_social = len(social)
        self.mail_str0 = len(strings)
        mail = [f"http://e.mail.ru/message/{rng.getrandbits(48)}" for _ in range(200)]
        mail += [f"https://mail.google.com/mail/u/0/#inbox/{rng.getrandbits(48):x}" for _ in range(100)]
        strings += mail
        self.n_mail = len(mail)

        hashes = [text_hash(s) for s in strings]
        site62 = big_ids.index(62)
        home62 = self.page_str0 + int(self.site_page0[site62])
        hashes[home62] = URL_HASH_Q41
        hashes[home62 + 1] = REFERER_HASH_Q40
        self.str_csv = np.array([csv_text(s) for s in strings], dtype=object)
        self.str_hash = np.array([str(h) for h in hashes], dtype=object)
        self.title_csv = np.array([csv_text(t) for t in titles], dtype=object)

        # -- per site
        self.site_counter_txt = np.array([str(c) for c in ids], dtype=object)
        self.site_class = np.array([str(v) for v in r.below(N_SITES, 3)], dtype=object)
        self.site_urlcat = np.array([str(v) for v in r.below(N_SITES, 40)], dtype=object)
        self.site_region = np.array([str(v) for v in r.power(N_SITES, N_REGIONS, 2.0)], dtype=object)
        self.site_charset = np.array([csv_text(v) for v in
                                      np.array(["utf-8", "windows-1251", "koi8-r"])[r.pick(N_SITES, cdf_of(np, [6, 3.5, .5]))]],
                                     dtype=object)
        self.site_code = np.array([str(v) for v in 1 + r.below(N_SITES, 1500)], dtype=object)
        self.site_old = np.array([str(v) for v in (r.uni(N_SITES) < 0.1).astype(int)], dtype=object)

        # -- phrases
        phrases, seen = [""], {""}
        while len(phrases) <= N_PHRASES:
            ph = " ".join(words.some(rng.randint(1, 5)))
            if ph not in seen:
                seen.add(ph)
                phrases.append(ph)
        self.phrase_csv = np.array([csv_text(p) for p in phrases], dtype=object)

        # -- devices: desktop and mobile profiles
        self._devices(np, rng, r)

        # -- users
        n_users = max(2000, rows // 8)
        self.n_users = n_users
        uid = (r.raw(n_users) >> np.uint64(1)).astype(np.int64)
        uid[40] = USER_Q19
        self.user_id = uid
        self.user_id_txt = np.array([str(v) for v in uid.tolist()], dtype=object)
        mobile = r.uni(n_users) < 0.075
        self.user_device = np.where(mobile, self.n_desktop + r.power(n_users, self.n_mobile, 1.8),
                                    r.power(n_users, self.n_desktop, 2.0))
        n_ips = max(1000, rows // 16)
        ips = (r.raw(n_ips) >> np.uint64(32)).astype(np.int64) - (1 << 31)
        ips = np.maximum(ips, -(1 << 31) + 4)            # q35 subtracts 3
        user_ip = r.power(n_users, n_ips, 2.2)
        self.user_ip_txt = np.array([str(v) for v in ips.tolist()], dtype=object)[user_ip]
        self.user_remote_txt = np.array([str(v) for v in (ips ^ 0x5A5A5A).tolist()], dtype=object)[user_ip]
        self.user_net_txt = np.array([str(v) for v in (ips >> 8).tolist()], dtype=object)[user_ip]
        region_ids = np.concatenate([[229, 2, 213, 54, 35, 1, 187, 146], 300 + np.arange(N_REGIONS - 8)])
        self.user_region = region_ids[r.power(n_users, N_REGIONS, 2.4)]
        fuid = (r.raw(n_users) >> np.uint64(2)).astype(np.int64)
        fuid[r.uni(n_users) < 0.25] = 0
        self.user_fuid_txt = np.array([str(v) for v in fuid.tolist()], dtype=object)
        self.user_tz = np.where(r.uni(n_users) < 0.7, 4, r.below(n_users, 14) - 2)   # hours from UTC
        self.user_age = r.pick(n_users, cdf_of(np, [30, 8, 15, 20, 14, 8, 5]))
        self.user_sex = r.pick(n_users, cdf_of(np, [30, 35, 35]))
        self.user_income = r.pick(n_users, cdf_of(np, [35, 30, 20, 10, 5]))
        self.user_interests = np.where(r.uni(n_users) < 0.4, 0, r.below(n_users, 32768))
        self.user_robot = np.where(r.uni(n_users) < 0.95, 0, 1 + r.below(n_users, 99))
        self.user_country = r.pick(n_users, cdf_of(np, [75, 10, 5, 4, 2, 4]))

    def _devices(self, np, rng: random.Random, r: Rand) -> None:
        screens = [(1920, 1080), (1366, 768), (1280, 1024), (1280, 800), (1024, 768), (1600, 900),
                   (1440, 900), (1680, 1050), (1920, 1200), (1360, 768), (2560, 1440), (1280, 720)]
        screen_w = cdf_of(np, [22, 20, 12, 8, 10, 7, 7, 5, 3, 3, 1, 2])
        phones = [("iPhone", 1, 320, 480), ("iPhone 5", 1, 320, 568), ("iPad", 1, 768, 1024),
                  ("iPad mini", 1, 768, 1024), ("Galaxy S III", 2, 360, 640), ("Galaxy S4", 2, 360, 640),
                  ("Galaxy Note II", 2, 360, 640), ("Galaxy Tab 2", 2, 600, 1024), ("Galaxy Ace", 2, 320, 480),
                  ("Lumia 920", 3, 480, 800), ("Lumia 620", 3, 480, 800), ("One X", 4, 360, 640),
                  ("Desire", 4, 320, 533), ("Xperia Z", 5, 360, 640), ("Xperia S", 5, 360, 640),
                  ("Nexus 7", 6, 600, 960), ("Nexus 4", 6, 384, 640), ("Optimus G", 7, 384, 640),
                  ("Kindle Fire", 8, 600, 1024), ("Asha 305", 9, 240, 400), ("E71", 9, 320, 240),
                  ("Explay", 10, 320, 480), ("Lenovo A820", 11, 540, 960), ("Ascend P1", 12, 540, 960)]
        phone_w = 1.0 / np.arange(1, len(phones) + 1) ** 1.2
        languages = ["ru", "en", "uk", "be", "kk", "de", "tr", "fr"]
        lang_w = cdf_of(np, [80, 8, 5, 2, 2, 1, 1, 1])
        rows = []
        nd, nm = 500, 120
        scr = r.pick(nd, screen_w)
        lang = r.pick(nd + nm, lang_w)
        ph = r.pick(nm, cdf_of(np, phone_w))
        for i in range(nd + nm):
            mobile = i >= nd
            if mobile:
                model, vendor, w, h = phones[int(ph[i - nd])]
            else:
                w, h = screens[int(scr[i])]
                model, vendor = "", 0
            browser = rng.choice((2, 3, 7, 42, 5, 35)) if not mobile else rng.choice((40, 44, 48))
            rows.append({
                "JavaEnable": 0 if mobile else int(rng.random() < 0.6),
                "OS": rng.choice((2, 3, 4, 56, 44, 33)) if not mobile else rng.choice((48, 53, 81, 82)),
                "UserAgent": browser,
                "ResolutionWidth": w, "ResolutionHeight": h,
                "ResolutionDepth": 24 if mobile else rng.choice((24, 32, 32, 32)),
                "FlashMajor": 0 if mobile else rng.choice((0, 10, 11, 11, 11)),
                "FlashMinor": 0 if mobile else rng.choice((0, 1, 2, 5, 7, 8)),
                "FlashMinor2": "" if mobile else rng.choice(("", "", "0", "3", "238", "r115", "152")),
                "NetMajor": 0 if mobile else rng.choice((0, 0, 2, 3, 4)),
                "NetMinor": 0 if mobile else rng.choice((0, 0, 5, 1)),
                "UserAgentMajor": rng.randint(3, 28),
                "UserAgentMinor": rng.choice(("0", "1", "2", "5", "a", "b", "D0", "")),
                "CookieEnable": int(rng.random() < 0.98),
                "JavascriptEnable": int(rng.random() < 0.97),
                "IsMobile": int(mobile),
                "MobilePhone": vendor,
                "MobilePhoneModel": model,
                "SilverlightVersion1": 0 if mobile else rng.choice((0, 0, 5)),
                "SilverlightVersion2": 0 if mobile else rng.choice((0, 0, 1)),
                "SilverlightVersion3": 0 if mobile else rng.choice((0, 0, 20513, 50401)),
                "SilverlightVersion4": 0 if mobile else rng.choice((0, 0, 1)),
                "BrowserLanguage": languages[int(lang[i])],
            })
        self.n_desktop, self.n_mobile = nd, nm
        self.device = {}
        for k in rows[0]:
            vals = [row[k] for row in rows]
            self.device[k] = np.array([csv_text(v) if isinstance(v, str) else str(v) for v in vals], dtype=object)
        self.device_w = np.array([row["ResolutionWidth"] for row in rows], dtype=np.int64)
        self.device_h = np.array([row["ResolutionHeight"] for row in rows], dtype=np.int64)
        self.device_mobile = np.array([row["IsMobile"] for row in rows], dtype=bool)


# ---------------------------------------------------------------- rows

def lut(np, lo: int, hi: int):
    """Texts of the integers lo..hi, indexable by value - lo."""
    return np.array([str(v) for v in range(lo, hi + 1)], dtype=object)


def texts(np, values, cache: dict, lo: int, hi: int) -> list:
    key = (lo, hi)
    if key not in cache:
        cache[key] = lut(np, lo, hi)
    return cache[key][np.asarray(values) - lo].tolist()


def day_weights(np):
    # 2013-07-01 was a Monday; weekends quieter
    return np.array([0.8 if (d % 7) in (5, 6) else 1.0 for d in range(31)])


HOUR_WEIGHTS = [3, 2, 1.5, 1, 1, 1.2, 2, 3.5, 5, 6, 6.5, 6.8, 7, 7, 7, 6.8, 6.5, 6.5, 6.8, 7, 7.2, 7, 6, 4.5]


def generate(path: str, rows: int, chunk_rows: int = 200_000, log=None) -> dict:
    """Write `rows` hits to `path` (CSV, ClickBench's column order, no
    header).  Returns facts about the run (seconds, bytes)."""
    try:
        import numpy as np
    except ImportError as e:  # matplotlib (bench/setup.sh) brings numpy
        raise RuntimeError("the clickbench generator needs numpy (bench/setup.sh installs it)") from e
    start = time.perf_counter()
    t = Tables(np, rows)
    if log:
        log(f"  clickbench tables ready in {time.perf_counter() - start:.1f} s ({t.n_pages:,} pages, "
            f"{t.n_users:,} users)")

    # rows per (site, day): one draw per row, counted; generated in key order
    r = Rand(np, 2)
    site_order = np.argsort(t.site_counter, kind="stable")     # sites by CounterID
    cell = np.outer(t.site_share[site_order], day_weights(np)).ravel()
    counts = np.zeros(cell.size, dtype=np.int64)
    cdf = cdf_of(np, cell)
    done = 0
    while done < rows:
        k = min(4_000_000, rows - done)
        counts += np.bincount(r.pick(k, cdf), minlength=cell.size)
        done += k
    ends = np.cumsum(counts)

    written = 0
    chunk = 0
    g0 = 0
    cache: dict = {}
    tmp = path + ".partial"
    with open(tmp, "wb") as f:
        while g0 < cell.size:
            # whole (site, day) groups, about chunk_rows rows
            base = ends[g0 - 1] if g0 else 0
            g1 = int(np.searchsorted(ends, base + chunk_rows, side="left")) + 1
            g1 = min(max(g1, g0 + 1), cell.size)
            cells = np.arange(g0, g1)
            n_cell = counts[g0:g1]
            n = int(n_cell.sum())
            if n:
                site = site_order[np.repeat(cells // 31, n_cell)]
                day = np.repeat(cells % 31, n_cell)
                f.write(chunk_lines(np, t, Rand(np, 3, chunk), site, day, cache))
                written += n
            chunk += 1
            g0 = g1
            if log and chunk % 10 == 0:
                log(f"  clickbench rows: {written:,} of {rows:,}")
    os.replace(tmp, path)
    return {"seconds": round(time.perf_counter() - start, 3), "rows": written, "bytes": os.path.getsize(path)}


def chunk_lines(np, t: Tables, r: Rand, site, day, cache: dict) -> bytes:
    """The CSV lines of one chunk of hits whose sites and days are given."""
    n = site.size

    # -- who
    user = r.power(n, t.n_users, 1.8)
    dev = t.user_device[user]

    # -- when: hour by the day's rhythm, seconds uniform
    hour = r.pick(n, cdf_of(np, HOUR_WEIGHTS))
    tod = hour * 3600 + r.below(n, 3600)

    # -- what: the page of the site, or a link out of it
    n_pages = t.site_pages[site]
    home = r.uni(n) < 0.35
    page = np.where(home, 0, 1 + r.power(n, np.maximum(n_pages - 1, 1), 3.0))
    page = np.minimum(page, n_pages - 1)
    page_idx = t.site_page0[site] + page                    # into the page table
    is_link = r.uni(n) < 0.04
    is_download = is_link & (r.uni(n) < 0.15)
    url = t.page_str0 + np.where(is_link, r.below(n, t.n_pages), page_idx)

    # -- where from
    rtype = r.pick(n, cdf_of(np, [s for _, s, _ in REFERER_TYPES]))
    tsid = np.array([v for _, _, v in REFERER_TYPES])[rtype]
    ref = np.zeros(n, dtype=np.int64)
    m = rtype == 0                                          # internal: another page of the site
    page2 = np.where(r.uni(n) < 0.35, 0, 1 + r.power(n, np.maximum(n_pages - 1, 1), 3.0))
    page2 = np.minimum(page2, n_pages - 1)
    ref[m] = (t.page_str0 + t.site_page0[site] + page2)[m]
    search = rtype == 2
    engine = r.pick(n, cdf_of(np, [s for _, s, _ in SEARCH_ENGINES]))
    se_id = np.where(search, np.array([e for e, _, _ in SEARCH_ENGINES])[engine], 0)
    for i, (s0, k) in enumerate(t.search_str0):
        mi = search & (engine == i)
        ref[mi] = s0 + r.power(int(mi.sum()), k, 2.0)
    m = rtype == 3                                          # other sites
    ref[m] = t.page_str0 + r.below(int(m.sum()), t.n_pages)
    ads = rtype == 4
    ref[ads] = t.ads_str0 + r.power(int(ads.sum()), t.n_ads, 1.5)
    social = rtype == 5
    ref[social] = t.social_str0 + r.power(int(social.sum()), t.n_social, 1.5)
    m = rtype == 6
    ref[m] = t.mail_str0 + r.power(int(m.sum()), t.n_mail, 1.5)
    adv = np.where(ads, np.array([a for a, _ in ADV_ENGINES])[r.pick(n, cdf_of(np, [s for _, s in ADV_ENGINES]))], 0)
    phrase = np.where(search & (r.uni(n) < 0.38), 1 + r.power(n, N_PHRASES, 2.0), 0)

    # -- the window: maximized (30%) or anything smaller; phones full screen
    w, h = t.device_w[dev], t.device_h[dev]
    maxed = r.uni(n) < 0.3
    bars = np.array([0, 17, 17, 17, 21])[r.below(n, 5)]
    chrome = np.array([60, 72, 84, 96, 105, 110, 118, 120, 126, 132, 140, 150, 160, 172, 190])[r.below(n, 15)]
    ww = np.where(maxed, w - bars, w // 2 + r.below(n, np.maximum(w // 2 - 16, 1)))
    wh = np.where(maxed, h - chrome, h // 3 + r.below(n, np.maximum(h * 2 // 3 - 100, 1)))
    mob = t.device_mobile[dev]
    ww = np.where(mob, w, ww)
    wh = np.where(mob, h - 20 * r.below(n, 4), wh)

    # -- flags and the rest, per hit
    def flag(p):
        return (r.uni(n) < p).astype(np.int64)

    watch = r.int64(n)
    refresh = flag(0.08)

    # -- 1% recorded twice: a copy of the hit before it, 1-30 s later, same day
    dup = np.flatnonzero(r.uni(n) < 0.01)
    dup = dup[dup > 0]
    dup = dup[site[dup] == site[dup - 1]]
    dup = dup[day[dup] == day[dup - 1]]
    shift = 1 + r.below(dup.size, 30)
    for a in (user, dev, url, ref, rtype, tsid, se_id, adv, phrase, page_idx, watch, ww, wh, is_link,
              is_download, refresh):
        a[dup] = a[dup - 1]
    t_prev = tod[dup - 1]
    tod[dup] = np.where(t_prev + shift < 86400, t_prev + shift, t_prev - shift)

    # -- key order within the chunk: (CounterID, EventDate, UserID, EventTime, WatchID)
    uid = t.user_id[user]
    order = np.lexsort((watch, tod, uid, day, t.site_counter[site]))
    site, day, user, dev, tod, url, ref, rtype, tsid, se_id, adv, phrase, page_idx, watch, ww, wh, \
        is_link, is_download, refresh = (a[order] for a in (
            site, day, user, dev, tod, url, ref, rtype, tsid, se_id, adv, phrase, page_idx, watch, ww, wh,
            is_link, is_download, refresh))
    mob = t.device_mobile[dev]

    # -- times as text
    dates = np.array([f"2013-07-{d + 1:02d}" for d in range(31)], dtype=object)
    clock = cache.get("clock")
    if clock is None:
        clock = cache["clock"] = np.array([f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
                                           for s in range(86400)], dtype=object)
    date_txt = dates[day].tolist()
    event_time = [f"{a} {b}" for a, b in zip(date_txt, clock[tod].tolist())]
    tz = t.user_tz[user]
    local = JULY_2013 + day * 86400 + tod + (tz - 4) * 3600
    skew = np.where(r.uni(n) < 0.9, r.below(n, 61) - 30, r.below(n, 7200) - 3600)
    client = local + skew
    local_txt = timestamps(np, local, cache)
    client_txt = timestamps(np, client, cache)

    # -- the columns, in create.sql's order
    def small(values, lo, hi):
        return texts(np, values, cache, lo, hi)

    def rare_text(p, vocab):
        """'' mostly, a word from `vocab` with probability p."""
        v = np.array([csv_text("")] + [csv_text(x) for x in vocab], dtype=object)
        i = np.where(r.uni(n) < p, 1 + r.below(n, len(vocab)), 0)
        return v[i].tolist()

    def timing():
        v = np.where(r.uni(n) < 0.7, 0, np.minimum((-np.log(1.0 - r.uni(n)) * 300).astype(np.int64), 30000))
        return small(v, 0, 30000)

    d = t.device
    social_net = np.array([csv_text(x) for x in ("", "vkontakte", "facebook", "twitter", "odnoklassniki")],
                          dtype=object)
    sn = np.where(rtype == 5, 1 + r.below(n, 4), 0)
    currency = r.uni(n) < 0.01
    cols = {
        "WatchID": [str(v) for v in watch.tolist()],
        "JavaEnable": d["JavaEnable"][dev].tolist(),
        "Title": t.title_csv[page_idx].tolist(),
        "GoodEvent": small(1 - (r.uni(n) < 0.001), 0, 1),
        "EventTime": event_time,
        "EventDate": date_txt,
        "CounterID": t.site_counter_txt[site].tolist(),
        "ClientIP": t.user_ip_txt[user].tolist(),
        "RegionID": small(t.user_region[user], 0, 300 + N_REGIONS),
        "UserID": t.user_id_txt[user].tolist(),
        "CounterClass": t.site_class[site].tolist(),
        "OS": d["OS"][dev].tolist(),
        "UserAgent": d["UserAgent"][dev].tolist(),
        "URL": t.str_csv[url].tolist(),
        "Referer": t.str_csv[ref].tolist(),
        "IsRefresh": small(refresh, 0, 1),
        "RefererCategoryID": small(np.where(ref > 0, 1 + rtype, 0), 0, 20),
        "RefererRegionID": np.where(rtype == 0, t.site_region[site], "0").tolist(),
        "URLCategoryID": t.site_urlcat[site].tolist(),
        "URLRegionID": t.site_region[site].tolist(),
        "ResolutionWidth": d["ResolutionWidth"][dev].tolist(),
        "ResolutionHeight": d["ResolutionHeight"][dev].tolist(),
        "ResolutionDepth": d["ResolutionDepth"][dev].tolist(),
        "FlashMajor": d["FlashMajor"][dev].tolist(),
        "FlashMinor": d["FlashMinor"][dev].tolist(),
        "FlashMinor2": d["FlashMinor2"][dev].tolist(),
        "NetMajor": d["NetMajor"][dev].tolist(),
        "NetMinor": d["NetMinor"][dev].tolist(),
        "UserAgentMajor": d["UserAgentMajor"][dev].tolist(),
        "UserAgentMinor": d["UserAgentMinor"][dev].tolist(),
        "CookieEnable": d["CookieEnable"][dev].tolist(),
        "JavascriptEnable": d["JavascriptEnable"][dev].tolist(),
        "IsMobile": d["IsMobile"][dev].tolist(),
        "MobilePhone": d["MobilePhone"][dev].tolist(),
        "MobilePhoneModel": d["MobilePhoneModel"][dev].tolist(),
        "Params": rare_text(0.02, ["p=1", "nocache=1", "from=rss", "utm_campaign=summer", "sid=abc"]),
        "IPNetworkID": t.user_net_txt[user].tolist(),
        "TraficSourceID": small(tsid, -1, 10),
        "SearchEngineID": small(se_id, 0, 10),
        "SearchPhrase": t.phrase_csv[phrase].tolist(),
        "AdvEngineID": small(adv, 0, 30),
        "IsArtifical": small(r.uni(n) < 0.01, 0, 1),
        "WindowClientWidth": small(np.maximum(ww, 0), 0, 4000),
        "WindowClientHeight": small(np.maximum(wh, 0), 0, 4000),
        "ClientTimeZone": small(tz, -12, 14),
        "ClientEventTime": client_txt,
        "SilverlightVersion1": d["SilverlightVersion1"][dev].tolist(),
        "SilverlightVersion2": d["SilverlightVersion2"][dev].tolist(),
        "SilverlightVersion3": d["SilverlightVersion3"][dev].tolist(),
        "SilverlightVersion4": d["SilverlightVersion4"][dev].tolist(),
        "PageCharset": t.site_charset[site].tolist(),
        "CodeVersion": t.site_code[site].tolist(),
        "IsLink": small(is_link, 0, 1),
        "IsDownload": small(is_download, 0, 1),
        "IsNotBounce": small(r.uni(n) < 0.3, 0, 1),
        "FUniqID": t.user_fuid_txt[user].tolist(),
        "OriginalURL": np.where(r.uni(n) < 0.03, t.str_csv[url], csv_text("")).tolist(),
        "HID": [str(v) for v in ((r.raw(n) >> np.uint64(33)).astype(np.int64) - (1 << 30)).tolist()],
        "IsOldCounter": t.site_old[site].tolist(),
        "IsEvent": small(r.uni(n) < 0.02, 0, 1),
        "IsParameter": small(r.uni(n) < 0.01, 0, 1),
        "DontCountHits": small(r.uni(n) < 0.03, 0, 1),
        "WithHash": small(r.uni(n) < 0.03, 0, 1),
        "HitColor": np.array(["D", "E", "F", "T"], dtype=object)[r.pick(n, cdf_of(np, [70, 20, 9, 1]))].tolist(),
        "LocalEventTime": local_txt,
        "Age": small(t.user_age[user], 0, 10),
        "Sex": small(t.user_sex[user], 0, 10),
        "Income": small(t.user_income[user], 0, 10),
        "Interests": small(t.user_interests[user], 0, 32767),
        "Robotness": small(t.user_robot[user], 0, 100),
        "RemoteIP": t.user_remote_txt[user].tolist(),
        "WindowName": small(np.where(r.uni(n) < 0.6, -1, r.below(n, 100000)), -1, 100000),
        "OpenerName": small(np.where(r.uni(n) < 0.7, -1, r.below(n, 100000)), -1, 100000),
        "HistoryLength": small(np.minimum(r.power(n, 40, 2.0), 39), 0, 40),
        "BrowserLanguage": d["BrowserLanguage"][dev].tolist(),
        "BrowserCountry": np.array(["ru", "ua", "by", "kz", "de", "us"], dtype=object)[t.user_country[user]].tolist(),
        "SocialNetwork": social_net[sn].tolist(),
        "SocialAction": rare_text(0.005, ["like", "share", "tweet"]),
        "HTTPError": small(np.where(r.uni(n) < 0.995, 0, np.array([404, 500, 403])[r.below(n, 3)]), 0, 500),
        "SendTiming": timing(),
        "DNSTiming": timing(),
        "ConnectTiming": timing(),
        "ResponseStartTiming": timing(),
        "ResponseEndTiming": timing(),
        "FetchTiming": timing(),
        "SocialSourceNetworkID": small(sn, 0, 10),
        "SocialSourcePage": np.where(rtype == 5, t.str_csv[ref], csv_text("")).tolist(),
        "ParamPrice": small(np.where(currency, r.below(n, 100000) * 10, 0), 0, 1000000),
        "ParamOrderID": np.where(currency, np.array([str(v) for v in range(1000)], dtype=object)[r.below(n, 1000)],
                                 csv_text("")).tolist(),
        "ParamCurrency": np.where(currency, "RUB", csv_text("")).tolist(),
        "ParamCurrencyID": small(np.where(currency, 643, 0), 0, 1000),
        "OpenstatServiceName": rare_text(0.005, ["direct.yandex.ru", "begun.ru", "market.yandex.ru"]),
        "OpenstatCampaignID": rare_text(0.005, [str(v) for v in range(100, 140)]),
        "OpenstatAdID": rare_text(0.005, [str(v) for v in range(5000, 5100)]),
        "OpenstatSourceID": rare_text(0.005, ["yandex.ru", "mail.ru", "rambler.ru"]),
        "UTMSource": np.where(ads, np.array(["yandex", "google", "begun"], dtype=object)[r.below(n, 3)],
                              csv_text("")).tolist(),
        "UTMMedium": np.where(ads, "cpc", csv_text("")).tolist(),
        "UTMCampaign": np.where(ads, np.array(["summer", "sale", "brand", "july"], dtype=object)[r.below(n, 4)],
                                csv_text("")).tolist(),
        "UTMContent": rare_text(0.003, ["banner", "text", "top"]),
        "UTMTerm": rare_text(0.003, ["buy", "cheap", "price"]),
        "FromTag": rare_text(0.002, ["rss", "mail", "widget"]),
        "HasGCLID": small(ads & (r.uni(n) < 0.3), 0, 1),
        "RefererHash": t.str_hash[ref].tolist(),
        "URLHash": t.str_hash[url].tolist(),
        "CLID": small(np.where(r.uni(n) < 0.02, 1 + r.below(n, 1000), 0), 0, 1000),
    }
    names = [c for c, _ in columns()]
    out = [cols[c] for c in names]
    return ("\n".join(map(",".join, zip(*out))) + "\n").encode()


def timestamps(np, seconds, cache: dict) -> list:
    """'YYYY-MM-DD HH:MM:SS' of epoch seconds (June to August 2013)."""
    clock = cache["clock"]
    first = JULY_2013 - 40 * 86400
    d = (seconds - first) // 86400
    key = "days"
    if key not in cache:
        import datetime
        cache[key] = np.array([(datetime.date(2013, 7, 1) + datetime.timedelta(days=i - 40)).isoformat()
                               for i in range(120)], dtype=object)
    days = cache[key][d].tolist()
    return [f"{a} {b}" for a, b in zip(days, clock[(seconds - first) % 86400].tolist())]


def ensure(data_dir: str, rows: int, log=None) -> tuple:
    """The cached CSV of `rows` hits: (path, facts or None if it was there)."""
    path = os.path.join(data_dir, file_name(rows))
    if os.path.exists(path):
        return path, None
    os.makedirs(data_dir, exist_ok=True)
    if log:
        log(f"  generating {rows:,} clickbench hits into {path}")
    facts: Optional[dict] = generate(path, rows, log=log)
    return path, facts
