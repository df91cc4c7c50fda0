"""A Slack incoming-webhook receiver on 127.0.0.1: what the Notify stage posts, kept for slack.json.

``down = True`` answers 500 like an unavailable Slack; the post is still recorded as attempted.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class SlackReceiver:
    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        self.down = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
                try:
                    payload: Any = json.loads(body or b"{}")
                except ValueError:
                    payload = body.decode("utf-8", "replace")
                status = 500 if outer.down else 200
                outer.posts.append({"status": status, "payload": payload})
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok" if status == 200 else b"service unavailable")

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, name="rehearse-slack", daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        """Shaped like a real webhook URL (the path's last part is the secret token)."""
        return (
            f"http://127.0.0.1:{self.server.server_address[1]}/services/T0REHEARSE/B0REHEARSE/rehearsaltoken"
        )

    def delivered(self) -> list[dict[str, Any]]:
        return [post for post in self.posts if post["status"] == 200]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
