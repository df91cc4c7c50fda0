"""The site in the results bucket, refreshed by FinishRun after each run or suite (AWS).

The runs are read through the views' one bucket reader (``bucket_cache.bucket_cache_store``) into a
cache store under the temp directory (a Lambda's /tmp: a warm container downloads only the new runs).
Every benchmark is judged (the index shows each one's verdict), but only the pages whose benchmark
the run names, or whose newest run differs from what ``site/state.json`` says was last written, are
put; the index is put every time. The download is bounded (BUDGET_S): a cold container facing a long
history stops there with a ``site_failed`` warning, and keeps what it cached for its next refresh.

Links: a page in a bucket is opened from a presigned URL, and a relative link from it would carry no
signature (S3 answers 403). So the index's link to each page is that page's own presigned URL, signed
at build time with the index's expiry; every page inlines its CSS and SVG and needs no other origin.
A page's "back to the index" link stays relative (it works from a directory or a bucket website, not
from a presigned URL: use the browser's back), and a page links no report on AWS (each run's message
has its own presigned report link).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwright.bucket_cache import CACHE_ENV, bucket_cache_store
from benchwright.providers.local.sqlite_store import SQLiteResultStore
from benchwright.site.digest import Judged
from benchwright.site.nights import benchmarks
from benchwright.site.pages import benchmark_page, cell_views, index_page, slug

SITE_PREFIX = "site/"
INDEX_KEY = SITE_PREFIX + "index.html"
STATE_KEY = SITE_PREFIX + "state.json"
SITE_NIGHTS = 90  # runs per benchmark the bucket's site shows (a cold cache downloads at most these)
# SigV4's maximum; signed with a Lambda role's temporary credentials, a link also ends with that session
SITE_LINK_SECONDS = 7 * 24 * 3600
TITLE = "Benchwright nightly"
# the download's bound: FinishRun's Lambda has 5 minutes, and the run's own finish comes first
BUDGET_S = 120.0
CLI_LINK_SECONDS = 12 * 3600  # `benchwright results`: as long as the API's longest report link
HTML = "text/html; charset=utf-8"


@dataclass(frozen=True)
class Refreshed:
    written: list[str]  # the keys put, pages first, then the index and the state
    index_url: str  # a presigned GET of the index: a bearer credential, for Slack and the CLI only
    judged: list[Judged] = field(default_factory=list)  # every benchmark's verdicts: the digest's input


def cache_path(bucket: str) -> Path:
    """``$BENCHWRIGHT_CACHE/s3-BUCKET.sqlite``, else ``s3-BUCKET-PID.sqlite`` under the temp directory
    (in a Lambda, /tmp is the only writable place and a warm container keeps its process; the pid keeps
    two processes on one host, e.g. parallel test workers, off one SQLite file)."""
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root) / f"s3-{bucket}.sqlite"
    return Path(tempfile.gettempdir()) / "benchwright-site" / f"s3-{bucket}-{os.getpid()}.sqlite"


_SIGNERS: dict[tuple[str, str], Any] = {}
_SIGNERS_LOCK = threading.Lock()


def signer(client: Any) -> Any:
    """An S3 client that presigns with SigV4 (botocore may otherwise sign S3 URLs with SigV2, which has
    no seven-day bound), in ``client``'s region and endpoint, with the default credential chain (in a
    Lambda, its role: the same credentials as the handler's clients). One per region and endpoint for
    the process, from the providers' shared session: a session of its own would read botocore's S3
    model and endpoint files again at every refresh (a quarter of FinishRun's CPU)."""
    from botocore.config import Config

    from benchwright.providers.aws.common import shared_session

    key = (str(client.meta.region_name), str(client.meta.endpoint_url))
    with _SIGNERS_LOCK:
        if key not in _SIGNERS:
            _SIGNERS[key] = shared_session().client(
                "s3", region_name=key[0], endpoint_url=key[1], config=Config(signature_version="s3v4")
            )
        return _SIGNERS[key]


def presign(client: Any, bucket: str, key: str, expires_s: int = SITE_LINK_SECONDS) -> str:
    """A presigned GET of ``key`` by ``client`` (a ``signer``); at most SigV4's seven days."""
    if not 1 <= expires_s <= SITE_LINK_SECONDS:
        raise ValueError(f"expires_s: {expires_s} is outside 1..{SITE_LINK_SECONDS} (SigV4's maximum)")
    params = {"Bucket": bucket, "Key": key}
    return str(client.generate_presigned_url("get_object", Params=params, ExpiresIn=expires_s))


def _state(client: Any, bucket: str) -> dict[str, str]:
    """Each page's newest run id when it was last written; empty when there is no (readable) state."""
    try:
        body = client.get_object(Bucket=bucket, Key=STATE_KEY)["Body"].read()
    except client.exceptions.NoSuchKey:
        return {}
    data = json.loads(body)
    pages = data.get("pages") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in pages.items()} if isinstance(pages, dict) else {}


def _put(client: Any, bucket: str, key: str, body: str, content_type: str) -> None:
    client.put_object(Bucket=bucket, Key=key, Body=body.encode("utf-8"), ContentType=content_type)


def refresh_site(
    bucket: str,
    client: Any,
    touched: Sequence[str],
    nights: int = SITE_NIGHTS,
    expires_s: int = SITE_LINK_SECONDS,
    budget_s: float = BUDGET_S,
) -> Refreshed:
    """Rebuild the pages of the benchmarks ``touched`` names (and any whose newest run changed since
    the state), then the index and the state, under ``site/`` of ``bucket``."""
    deadline = time.monotonic() + budget_s

    def within_budget(_line: str) -> None:  # called after each run downloaded: the pull is bounded
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"the site's runs took over {budget_s:.0f} s to download; those cached so far are kept "
                "for the next refresh of this container"
            )

    cache = bucket_cache_store(bucket, (), cache_path(bucket), nights, client, within_budget)
    with SQLiteResultStore(cache) as store:
        benches = benchmarks(store, nights)
    names = [slug(b.name) for b in benches]
    if len(set(names)) != len(names):  # two names, one page key: say so rather than overwrite one
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"benchmark names {dup} map to the same page key; rename one spec")
    before = _state(client, bucket)
    judged = [(bench, cell_views(bench)) for bench in benches]
    state: dict[str, str] = {}
    written: list[str] = []
    for bench, views in judged:
        name, newest = slug(bench.name), bench.last.run_id if bench.last else ""
        if bench.name in touched or before.get(name) != newest:
            key = f"{SITE_PREFIX}bench/{name}.html"
            _put(client, bucket, key, benchmark_page(bench, views, TITLE), HTML)
            written.append(key)
        state[name] = newest
    sign = signer(client)
    index = index_page(judged, TITLE, lambda rel: presign(sign, bucket, SITE_PREFIX + rel, expires_s))
    _put(client, bucket, INDEX_KEY, index, HTML)
    _put(client, bucket, STATE_KEY, json.dumps({"pages": state}, sort_keys=True), "application/json")
    written += [INDEX_KEY, STATE_KEY]
    index_url = presign(sign, bucket, INDEX_KEY, expires_s)
    return Refreshed(written, index_url, [Judged(bench, views) for bench, views in judged])


def index_link(bucket: str, client: Any, expires_s: int = CLI_LINK_SECONDS) -> str | None:
    """The site's index presigned by ``client``'s credentials (`benchwright results`: whoever may read
    the bucket may read its site); None while no refresh has written one."""
    from botocore.exceptions import ClientError

    try:
        client.head_object(Bucket=bucket, Key=INDEX_KEY)
    except ClientError:
        return None
    return presign(signer(client), bucket, INDEX_KEY, expires_s)
