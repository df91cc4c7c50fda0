"""`benchwright submit/status` sign their requests with SigV4 and surface API errors as one line."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from benchwright.cli import main

ROOT = Path(__file__).resolve().parents[2]
SEEN: list[dict] = []


class FakeApi(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        SEEN.append({"path": self.path, "auth": self.headers.get("Authorization", ""), "body": body})
        status = 404 if "missing" in self.path else 201
        payload = {"error": "run_not_found"} if status == 404 else {"runs": [{"run_id": "run-1"}]}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api(aws_credentials: None) -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), FakeApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    SEEN.clear()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


def test_submit_posts_the_suite_signed_with_sigv4(api: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", str(ROOT / "examples" / "quickstart.yaml"), "--api-url", api]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["run_id"] == "run-1"
    (request,) = SEEN
    assert request["path"] == "/v1/runs"
    assert request["auth"].startswith("AWS4-HMAC-SHA256 Credential=testing/")
    assert "execute-api" in request["auth"]
    assert request["body"]["suite"]["suite"] == "quickstart"


def test_status_of_unknown_run_is_one_error_line(api: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "missing", "--api-url", api]) == 1
    err = capsys.readouterr().err
    assert "HTTP 404" in err and "/runs/missing" in err


def test_submit_refuses_an_invalid_spec_before_any_request(
    api: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nrepeats: 0\n")
    assert main(["submit", str(bad), "--api-url", api]) == 2
    assert SEEN == []
    assert "benchwright: error:" in capsys.readouterr().err


def test_cdk_builds_the_image_with_podman_when_there_is_no_docker(tmp_path: Path) -> None:
    from benchwright.commands.cloud import cdk_environment

    only_podman, both = tmp_path / "podman-only", tmp_path / "both"
    for directory, tools in ((only_podman, ["podman"]), (both, ["podman", "docker"])):
        directory.mkdir()
        for tool in tools:
            (directory / tool).write_text("#!/bin/sh\n")
            (directory / tool).chmod(0o755)
    assert cdk_environment({"PATH": str(only_podman)})["CDK_DOCKER"] == "podman"
    assert "CDK_DOCKER" not in cdk_environment({"PATH": str(both)})
    assert cdk_environment({"PATH": str(only_podman), "CDK_DOCKER": "finch"})["CDK_DOCKER"] == "finch"
