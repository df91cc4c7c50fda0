"""``notify.toy``: POSTs one small JSON message per run to a webhook whose URL is in an environment
variable (named by ``url_env``). Local only (no AWS sender), so a cloud spec naming it is refused."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

from pydantic import field_validator

from benchwright.errors import NotifyFailed
from benchwright.notifiers.base import NotifierKind
from benchwright.providers.base import Notifier
from benchwright.runs import RunRecord
from benchwright.spec._base import ENV_NAME_RE, StrictModel


class ToySpec(StrictModel):
    url_env: str
    label: str = "toy"

    @field_validator("url_env")
    @classmethod
    def _env_name(cls, value: str) -> str:
        if not ENV_NAME_RE.match(value):
            raise ValueError("must be an environment variable NAME (A-Z, 0-9, _)")
        return value


def message(record: RunRecord, label: str, report_url: str | None) -> dict[str, str | None]:
    """The toy's renderer: one flat JSON object."""
    return {"label": label, "run_id": record.run_id, "spec": record.spec_name, "status": record.status,
            "report": report_url}  # fmt: skip


class ToyNotifier(Notifier):
    def __init__(self, section: ToySpec) -> None:
        self.section = section

    def notify(self, record: RunRecord, report_url: str | None = None) -> bool:
        url = os.environ.get(self.section.url_env, "")
        if not url.startswith("http://127.0.0.1:"):
            raise NotifyFailed(f"toy: {self.section.url_env} holds no local URL")
        body = json.dumps(message(record, self.section.label, report_url)).encode()
        request = urllib.request.Request(url, body, {"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return bool(response.status == 200)
        except urllib.error.URLError as exc:
            raise NotifyFailed(f"toy: webhook unreachable ({type(exc).__name__})") from None


KIND = NotifierKind(name="toy", spec=ToySpec, local=ToyNotifier)
