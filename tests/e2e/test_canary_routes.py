"""Issue 30, item 3: one canary secret planted through every route a secret can enter a local run, and
every artifact of the run searched for it. 0 hits is the only pass.

Routes that pass a secret BY REFERENCE run a real benchmark against the local PostgreSQL: the endpoint
password (``password_env``, a role whose password is the canary), a Slack webhook (``webhook_env``, the
Slack receiver stand-in, its token a canary) and an unrelated variable of the runner's environment.
The run's out directory (run.json, plans, cell documents, logs, records, the HTML report), the SQLite
store, ``show --json``, ``table`` (markdown and JSON), the commands' stdout/stderr and the Slack
message are searched.

Routes that WRITE a secret in the spec (a URL or DSN with a password, a password-like key, a property
file holding one, ``database: "x?password=..."``, a ``user:password@`` host, a webhook URL in tags,
description or ``notify``) must be refused by ``validate`` and ``run`` alike: one error naming the field,
never repeating the secret, and nothing stored that holds it.
"""

from __future__ import annotations

import json
import secrets
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml

from tests.conftest import PASSWORD, PG_PORT, USER
from tests.e2e.test_local_service import cli, env
from tests.receivers import SlackWebhookReceiver

pytestmark = [pytest.mark.servers, pytest.mark.slow]

ADMIN = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{PG_PORT}/bench"
CANARY = f"cnry{secrets.token_hex(10)}"  # one value, planted everywhere; long enough to be unique
HOOK = f"https://hooks.slack.com/services/T0CANARY/B0CANARY/{CANARY}"
PG = f"127.0.0.1:{PG_PORT}"


def base_spec(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "target": {"provider": "endpoint", "engine": "postgres", "hosts": [PG], "database": "bench"},
        "workload": {
            "name": "sql",
            "properties": {
                "sql.init": "CREATE TABLE IF NOT EXISTS canary_routes (id text PRIMARY KEY)",
                "sql.script": "INSERT INTO canary_routes VALUES ({{uuid}})",
            },
            "phases": {"run": {"threads": 2, "duration_s": 1}},
        },
    }


def _props(**values: str) -> Callable[[dict[str, Any], Path], None]:
    def plant(spec: dict[str, Any], _: Path) -> None:
        spec["workload"]["properties"].update(values)

    return plant


def _target(**values: Any) -> Callable[[dict[str, Any], Path], None]:
    def plant(spec: dict[str, Any], _: Path) -> None:
        spec["target"].update(values)

    return plant


def _file(text: str) -> Callable[[dict[str, Any], Path], None]:
    def plant(spec: dict[str, Any], where: Path) -> None:
        (where / "canary.properties").write_text(text)
        spec["workload"]["files"] = ["canary.properties"]

    return plant


def _top(**values: Any) -> Callable[[dict[str, Any], Path], None]:
    def plant(spec: dict[str, Any], _: Path) -> None:
        spec.update(values)

    return plant


# route -> (how the canary is planted, the field the error must name)
REFUSED: dict[str, tuple[Callable[[dict[str, Any], Path], None], str]] = {
    "endpoint password": (_target(password=CANARY), "target.password"),
    "password_env holding the password": (_target(password_env=CANARY), "password_env"),
    "database ?password=": (_target(database=f"bench?password={CANARY}"), "target.database"),
    "host user:password@": (_target(hosts=[f"bench:{CANARY}@{PG}"]), "target.hosts"),
    "connection URL": (_props(**{"db.url": f"postgresql://bench:{CANARY}@{PG}/bench"}), "db.url"),
    "URL ?password=": (_props(**{"db.url": f"postgresql://{PG}/bench?sslmode=disable&password={CANARY}"}), "db.url"),
    "DSN": (_props(**{"db.dsn": f"host=127.0.0.1 port={PG_PORT} user=bench password={CANARY}"}), "db.dsn"),
    "password property": (_props(**{"postgres.password": CANARY}), "postgres.password"),
    "redis auth property": (_props(**{"redis.auth": CANARY}), "redis.auth"),
    "property file password": (_file(f"recordcount=10\ndb.password={CANARY}\n"), "db.password"),
    "property file DSN": (_file(f"db.dsn=host=127.0.0.1 password={CANARY} dbname=bench\n"), "db.dsn"),
    "property file URL": (_file(f"db.url=redis://default:{CANARY}@127.0.0.1:1/0\n"), "db.url"),
    "Slack webhook in tags": (_top(tags={"hook": HOOK}), "tags.hook"),
    "Slack webhook in description": (_top(description=f"posts to {HOOK}"), "description"),
    "Slack webhook in notify": (_top(notify={"slack": {"webhook_env": HOOK}}), "notify.slack"),
    "secret varied in a matrix": (
        _top(matrix={"workload.properties.db.password": [CANARY, CANARY + "x"]}),
        "matrix.workload.properties.db.password",
    ),
}  # fmt: skip


def artifacts_of(tmp_path: Path, skip: tuple[Path, ...] = ()) -> dict[str, bytes]:
    """Every file the commands wrote under ``tmp_path`` (out directories, stores, state), by path."""
    return {str(p): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and p not in skip}


def hits(artifacts: dict[str, bytes], *needles: str) -> list[str]:
    return [name for name, data in artifacts.items() if any(n.encode() in data for n in needles)]


def command(tmp_path: Path, environment: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli(*args), capture_output=True, text=True, env=environment, cwd=tmp_path, timeout=300
    )


@pytest.mark.parametrize("route", sorted(REFUSED))
def test_a_secret_written_in_the_spec_is_refused_and_never_repeated(tmp_path: Path, route: str) -> None:
    plant, field = REFUSED[route]
    spec = base_spec("canary-refused")
    plant(spec, tmp_path)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    written = (path, tmp_path / "canary.properties")
    environment = {**env(), "BENCHWRIGHT_STATE_DIR": str(tmp_path / "state")}

    checked = command(tmp_path, environment, "validate", str(path))
    ran = command(tmp_path, environment, "run", str(path), "--out", "out", "--store", "store.sqlite")

    for done in (checked, ran):
        said = done.stdout + done.stderr
        assert done.returncode == 2, said[-2000:]
        assert field in said, said[-2000:]  # one error naming the field ...
        assert "Traceback" not in said
        assert CANARY not in said  # ... that never repeats the secret
    assert hits(artifacts_of(tmp_path, skip=written), CANARY) == []
    assert not (tmp_path / "store.sqlite").exists()  # refused before anything was created


@pytest.fixture
def canary_role() -> Iterator[str]:
    """A role and database of their own whose password is the canary."""
    role = f"bw_canary_{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{CANARY}'")
        conn.execute(f"CREATE DATABASE {role} OWNER {role}")
    yield role
    with psycopg.connect(ADMIN, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {role} WITH (FORCE)")
        conn.execute(f"DROP ROLE IF EXISTS {role}")


@pytest.fixture
def slack() -> Iterator[SlackWebhookReceiver]:
    receiver = SlackWebhookReceiver(token=f"hook{CANARY}")  # the webhook's secret part holds the canary
    yield receiver
    receiver.close()


def test_a_run_given_secrets_by_reference_holds_none_in_any_artifact(
    tmp_path: Path, canary_role: str, slack: SlackWebhookReceiver
) -> None:
    spec = base_spec("canary-routes")
    spec["target"].update(database=canary_role, user=canary_role, password_env="BW_CANARY_PASSWORD")
    spec["notify"] = {"slack": {"webhook_env": "BW_CANARY_SLACK"}, "on": "always"}
    spec["tags"] = {"team": "canary"}
    (tmp_path / "extra.properties").write_text("sql.script=INSERT INTO canary_routes VALUES ({{uuid}})\n")
    spec["workload"]["files"] = ["extra.properties"]
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    env_canary = f"envcnry{secrets.token_hex(8)}"
    environment = {
        **env(),
        "BW_CANARY_PASSWORD": CANARY,
        "BW_CANARY_SLACK": slack.url,
        "BW_CANARY_OTHER": env_canary,
        "PGPASSWORD": CANARY,  # a variable libpq itself would read
        "BENCHWRIGHT_STATE_DIR": str(tmp_path / "state"),
    }
    needles = (CANARY, env_canary, slack.token)

    ran = command(tmp_path, environment, "run", str(path), "--out", "out", "--store", "store.sqlite")
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    run_id = json.loads((tmp_path / "out" / "run.json").read_text())["run_id"]
    store = str(tmp_path / "store.sqlite")
    views = {
        "run stdout": ran.stdout,
        "run stderr": ran.stderr,
        "show --json": command(tmp_path, environment, "show", "--store", store, "--json", run_id).stdout,
        "show": command(tmp_path, environment, "show", "--store", store, run_id).stdout,
        "table md": command(tmp_path, environment, "table", "--store", store, run_id).stdout,
        "table json": command(tmp_path, environment, "table", "--store", store, "--format", "json", run_id).stdout,
        "history": command(tmp_path, environment, "history", "--store", store, "canary-routes").stdout,
    }  # fmt: skip
    assert run_id in views["show --json"] and "canary-routes" in views["history"]
    assert views["table md"].strip() and json.loads(views["table json"])  # real output, not an empty pass
    shown = json.loads(views["show --json"])
    assert shown["status"] == "succeeded"

    # the Slack message was sent (the route is exercised) and holds none of the secrets
    assert slack.refused == [] and len(slack.posts) == 1
    views["slack payload"] = json.dumps(slack.posts[0].body)

    files = artifacts_of(tmp_path, skip=(path,))
    names = {Path(p).name for p in files}
    assert {"run.json", "report.html", "store.sqlite"} <= names, sorted(names)
    assert any(n.endswith(".log") for n in names) and any("plan" in n for n in names), sorted(names)
    everything = {**files, **{k: v.encode() for k, v in views.items()}}
    assert hits(everything, *needles) == []
    # the canary was really the password the runner logged in with: rows were written by the role
    with psycopg.connect(ADMIN.rsplit("/", 1)[0] + f"/{canary_role}") as conn:
        row = conn.execute("SELECT count(*) FROM canary_routes").fetchone()
    assert row is not None and row[0] > 0
