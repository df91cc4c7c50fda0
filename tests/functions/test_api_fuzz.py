"""Fuzz the API Lambda with hypothesis: whatever a caller sends, the answer is a documented status,
never a 500 (and never an exception escaping the handler)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import functions.api_routes as api
from tests.api_events import Context, api_backend, event
from tests.conftest import FAKE_AWS_ENV

DOCUMENTED = {200, 201, 400, 401, 404, 405, 413, 422}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
spec_like = st.fixed_dictionaries(
    {},
    optional={
        "name": st.text(max_size=30),
        "target": st.dictionaries(
            st.sampled_from(["provider", "engine", "settings", "x"]), json_values, max_size=3
        ),
        "workload": st.dictionaries(st.sampled_from(["name", "files", "properties", "phases"]), json_values),
        "repeats": json_values,
        "matrix": json_values,
    },
)
bodies = st.one_of(
    st.none(),
    st.text(max_size=200),
    json_values.map(json.dumps),
    st.fixed_dictionaries({"spec": spec_like}).map(json.dumps),
    st.fixed_dictionaries(
        {"suite": st.dictionaries(st.sampled_from(["suite", "benchmarks"]), json_values)}
    ).map(json.dumps),
)
paths = st.one_of(
    st.sampled_from(["/runs", "/runs/run-x", "/runs/run-x/report", "/runs/run-x/cancel", "/", "/runs/"]),
    st.text(alphabet="abc/-_%!. ", max_size=30).map(lambda p: "/" + p),
)


@pytest.fixture(scope="module")
def cloud() -> Iterator[None]:
    """The API's backend for the whole module (hypothesis calls the test many times)."""
    mp = pytest.MonkeyPatch()
    for key, value in FAKE_AWS_ENV.items():  # module-scoped: the aws_credentials fixture is per test
        mp.setenv(key, value)
    with api_backend():
        yield
    mp.undo()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE"]),
    path=paths,
    body=bodies,
    query=st.one_of(
        st.none(),
        st.dictionaries(st.sampled_from(["limit", "status", "expires_in", "x"]), st.text(max_size=8)),
    ),
)
def test_no_input_yields_a_500(
    cloud: None, method: str, path: str, body: str | None, query: dict | None
) -> None:
    out = api.handle(event(method, path, body, query or None), Context())
    assert out["statusCode"] in DOCUMENTED, out


@settings(max_examples=40, deadline=None)
@given(
    garbage=st.one_of(
        st.none(), st.integers(), st.text(max_size=20), st.dictionaries(st.text(max_size=5), json_values)
    )
)
def test_events_of_the_wrong_shape_are_refused_not_crashed(garbage: object) -> None:
    out = api.handle(garbage, Context())  # type: ignore[arg-type]
    assert out["statusCode"] in {400, 401}
