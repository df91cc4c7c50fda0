"""HTTP receivers on 127.0.0.1 that check requests the way the real services do and answer as they do.

They stand in for Slack's incoming webhooks and InfluxDB's v2 write API in the notification and sink
tests. They are not doubles of our clients: slack_sdk's WebhookClient and the InfluxDB sink send real
HTTP to them, and they refuse what the service would refuse, with the service's status and body.

Slack (https://api.slack.com/messaging/webhooks, .../reference/block-kit/blocks): a JSON body (content
type application/json) with ``text`` and/or ``blocks``; at most 50 blocks; a header's plain_text at most
150 characters; a section's text at most 3,000 and at most 10 fields of at most 2,000; a context at
most 10 elements. A valid post gets 200 ``ok``; bad blocks 400 ``invalid_blocks``; no text and no
blocks 400 ``no_text``; a body that is not JSON 400 ``invalid_payload``.

InfluxDB v2 (POST /api/v2/write, https://docs.influxdata.com/influxdb/v2/api/#operation/PostWrite):
``org`` and ``bucket`` query parameters, ``precision`` one of ns/us/ms/s, the header
``Authorization: Token <token>``, a body in line protocol. A good write gets 204 with no body; a wrong
or missing token 401 ``{"code":"unauthorized"}``; an unknown bucket 404; a line it cannot parse 400
``{"code":"invalid"}``.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

SLACK_BLOCK_TYPES = {"header", "section", "context", "divider", "actions", "image", "rich_text", "input"}
TEXT_TYPES = {"plain_text", "mrkdwn"}


def slack_problem(payload: Any) -> str | None:
    """Why Slack would refuse this webhook body (its error code), or None when it would post it."""
    if not isinstance(payload, dict):
        return "invalid_payload"
    text, blocks = payload.get("text"), payload.get("blocks")
    if not text and not blocks:
        return "no_text"
    if text is not None and not isinstance(text, str):
        return "invalid_payload"
    attachments = payload.get("attachments")
    if attachments is not None and (
        not isinstance(attachments, list) or any(_attachment_problem(a) for a in attachments)
    ):
        return "invalid_attachments"
    if blocks is None:
        return None
    if not isinstance(blocks, list) or len(blocks) > 50:
        return "invalid_blocks"
    return "invalid_blocks" if any(_block_problem(b) for b in blocks) else None


def _attachment_problem(attachment: Any) -> bool:
    """A secondary attachment: a ``color`` (a hex code or good / warning / danger) and its blocks."""
    if not isinstance(attachment, dict):
        return True
    color = attachment.get("color")
    if color is not None and not (
        isinstance(color, str)
        and (color in ("good", "warning", "danger") or re.fullmatch(r"#[0-9a-fA-F]{6}", color))
    ):
        return True
    blocks = attachment.get("blocks", [])
    return not isinstance(blocks, list) or len(blocks) > 50 or any(_block_problem(b) for b in blocks)


def _text_ok(obj: Any, limit: int, kinds: set[str] = TEXT_TYPES) -> bool:
    return (
        isinstance(obj, dict)
        and obj.get("type") in kinds
        and isinstance(obj.get("text"), str)
        and 0 < len(obj["text"]) <= limit
    )


def _block_problem(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") not in SLACK_BLOCK_TYPES:
        return True
    kind = block["type"]
    if kind == "header":
        return not _text_ok(block.get("text"), 150, {"plain_text"})
    if kind == "section":
        text, fields = block.get("text"), block.get("fields")
        if text is None and not fields:
            return True
        if text is not None and not _text_ok(text, 3000):
            return True
        return fields is not None and (
            not isinstance(fields, list) or len(fields) > 10 or not all(_text_ok(f, 2000) for f in fields)
        )
    if kind == "context":
        elements = block.get("elements")
        return not (
            isinstance(elements, list)
            and 0 < len(elements) <= 10
            and all(_text_ok(e, 3000) or (isinstance(e, dict) and e.get("type") == "image") for e in elements)
        )
    return False


class _Server:
    """A threading HTTP server on 127.0.0.1 with one handler function; ``close`` stops it."""

    def __init__(self, handle: Any) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, content_type, answer = handle(self.command, self.path, dict(self.headers), body)
                self.send_response(status)
                if answer:
                    self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class SlackPost:
    path: str
    content_type: str
    body: dict[str, Any]


class SlackWebhookReceiver(_Server):
    """Slack's incoming webhook. ``posts`` are the messages it accepted; ``refused`` what it answered
    400 to; ``down = 500`` makes it fail like Slack's ``rollup_error``."""

    def __init__(self, token: str = "s3cr3tT0ken") -> None:
        self.token = token
        self.requests = 0  # every POST, accepted or not
        self.posts: list[SlackPost] = []
        self.refused: list[tuple[str, Any]] = []
        self.down: int | None = None
        super().__init__(self._handle)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/services/T000/B000/{self.token}"

    def _handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        plain = "text/html"
        self.requests += 1
        if self.down:
            return self.down, plain, b"rollup_error"
        if path != f"/services/T000/B000/{self.token}":
            return 404, plain, b"no_service"
        content_type = headers.get("Content-Type", "")
        try:
            payload = json.loads(body)
        except ValueError:
            self.refused.append(("invalid_payload", body[:200]))
            return 400, plain, b"invalid_payload"
        if not content_type.startswith("application/json"):
            self.refused.append(("invalid_payload", content_type))
            return 400, plain, b"invalid_payload"
        problem = slack_problem(payload)
        if problem:
            self.refused.append((problem, payload))
            return 400, plain, problem.encode()
        self.posts.append(SlackPost(path, content_type, payload))
        return 200, plain, b"ok"


# ---------------------------------------------------------------- InfluxDB v2 write API
_ESCAPED = re.compile(r"\\(.)")


def _split(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside backslash escapes and double quotes."""
    parts, current, quoted, i = [], [], False, 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        if ch == sep and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    return _ESCAPED.sub(r"\1", text)


@dataclass
class Point:
    measurement: str
    tags: dict[str, str]
    fields: dict[str, float | int | str | bool]
    timestamp: int


def _field_value(raw: str) -> float | int | str | bool:
    if raw.startswith('"') and raw.endswith('"') and len(raw) >= 2:
        return raw[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if raw in ("t", "T", "true", "True", "TRUE"):
        return True
    if raw in ("f", "F", "false", "False", "FALSE"):
        return False
    if raw.endswith("i"):
        return int(raw[:-1])
    if raw.endswith("u"):
        return int(raw[:-1])
    value = float(raw)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("NaN and infinity are not valid field values")
    return value


def parse_line(line: str) -> Point:
    """One line of line protocol: ``measurement[,tag=v...] field=v[,field=v...] [timestamp]``."""
    sections = _split(line, " ")
    if len(sections) not in (2, 3):
        raise ValueError(f"expected 2 or 3 space-separated sections, got {len(sections)}")
    head = _split(sections[0], ",")
    measurement = _unescape(head[0])
    if not measurement:
        raise ValueError("missing measurement")
    tags = {}
    for item in head[1:]:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"bad tag {item!r}")
        tags[_unescape(key)] = _unescape(value)
    fields: dict[str, float | int | str | bool] = {}
    for item in _split(sections[1], ","):
        key, sep, value = item.partition("=")
        if not sep or not key or value == "":
            raise ValueError(f"bad field {item!r}")
        fields[_unescape(key)] = _field_value(value)
    timestamp = int(sections[2]) if len(sections) == 3 else 0
    return Point(measurement, tags, fields, timestamp)


@dataclass
class InfluxWrite:
    org: str
    bucket: str
    precision: str
    points: list[Point] = field(default_factory=list)


class InfluxWriteReceiver(_Server):
    """InfluxDB v2's write endpoint for one org, bucket and operator token."""

    def __init__(self, token: str, org: str = "benchwright", bucket: str = "results") -> None:
        self.token, self.org, self.bucket = token, org, bucket
        self.writes: list[InfluxWrite] = []
        self.refused: list[tuple[int, str]] = []
        self.down = False  # 503 "unavailable", as an instance that is restarting answers
        super().__init__(self._handle)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def points(self) -> list[Point]:
        return [p for w in self.writes for p in w.points]

    def _error(self, status: int, code: str, message: str) -> tuple[int, str, bytes]:
        self.refused.append((status, message))
        return status, "application/json", json.dumps({"code": code, "message": message}).encode()

    def _handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        parts = urlsplit(path)
        if self.down:
            return self._error(503, "unavailable", "service unavailable")
        if parts.path != "/api/v2/write":
            return self._error(404, "not found", f"path not found: {parts.path}")
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        auth = headers.get("Authorization", "")
        if auth != f"Token {self.token}":
            return self._error(401, "unauthorized", "unauthorized access")
        if query.get("org") != self.org:
            return self._error(404, "not found", f'organization name "{query.get("org")}" not found')
        if query.get("bucket") != self.bucket:
            return self._error(404, "not found", f'bucket "{query.get("bucket")}" not found')
        precision = query.get("precision", "ns")
        if precision not in ("ns", "us", "ms", "s"):
            return self._error(400, "invalid", f"invalid precision {precision!r}")
        if headers.get("Content-Encoding") == "gzip":
            import gzip

            body = gzip.decompress(body)
        write = InfluxWrite(query["org"], query["bucket"], precision)
        for number, line in enumerate(body.decode("utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            try:
                write.points.append(parse_line(line))
            except ValueError as exc:
                return self._error(400, "invalid", f"unable to parse line {number}: {exc}")
        self.writes.append(write)
        return 204, "application/json", b""
