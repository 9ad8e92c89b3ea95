"""Facts about the machine, the server and the run, recorded with every
result so that runs can be compared fairly."""

from __future__ import annotations

import os
import platform
import subprocess
import time

import psycopg

from .pg import Pg

SETTINGS = ("shared_buffers", "work_mem", "maintenance_work_mem", "effective_cache_size",
            "max_parallel_workers_per_gather", "max_parallel_workers", "max_worker_processes",
            "max_wal_size", "checkpoint_timeout", "wal_level", "wal_compression", "synchronous_commit",
            "fsync", "full_page_writes", "jit", "random_page_cost", "huge_pages", "shared_preload_libraries")


def _meminfo() -> dict:
    out = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                k, v = line.split(":", 1)
                if k in ("MemTotal", "MemAvailable", "SwapTotal"):
                    out[k] = int(v.split()[0]) * 1024
                elif k in ("HugePages_Total", "HugePages_Free"):
                    out[k] = int(v.split()[0])  # a count of pages: whether the server got them
    except OSError:
        pass
    return out


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git_commit(repo: str) -> str:
    try:
        return subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def facts(pg: Pg, repo: str) -> dict:
    mem = _meminfo()
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count()
    settings = {}
    for name in SETTINGS:
        try:
            settings[name] = pg.scalar(f"SHOW {name}")
        except psycopg.Error:
            pg.recover()
    try:
        for name, value in pg.fetch("SELECT name, setting FROM pg_settings WHERE name LIKE 'tessera.%' ORDER BY 1"):
            settings[name] = value
    except psycopg.Error:
        pg.recover()
    ext = pg.scalar("SELECT extversion FROM pg_extension WHERE extname = 'tessera'")
    try:
        import duckdb
        duck = duckdb.__version__
    except ImportError:
        duck = None
    return {
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "nproc": nproc,
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_bytes": mem.get("MemTotal"),
        "memory_available_bytes": mem.get("MemAvailable"),
        # the kernel's pool of huge pages and how many are free: with
        # huge_pages = try the server took them if Total - Free covers it
        "huge_pages_total": mem.get("HugePages_Total"),
        "huge_pages_free": mem.get("HugePages_Free"),
        "os": platform.platform(),
        "python": platform.python_version(),
        "server_version": pg.scalar("SELECT version()"),
        "server_version_num": int(pg.scalar("SHOW server_version_num")),
        "tessera_version": ext,
        "git_commit": _git_commit(repo),
        "duckdb_version": duck,
        "settings": settings,
    }
