"""The shared Redis's logical databases are handed out by claim (tests/conftest.py): two sessions
never get the same one, and only a claim's owner releases it."""

from __future__ import annotations

import secrets

import pytest
import redis

from tests.conftest import PASSWORD, REDIS_CLAIM, REDIS_PORT, RELEASE_CLAIM, claim_redis_db

pytestmark = pytest.mark.servers


def test_two_sessions_claim_different_databases_and_only_the_owner_releases() -> None:
    admin = redis.Redis(host="127.0.0.1", port=REDIS_PORT, password=PASSWORD, db=0, socket_timeout=5)
    first, second = f"test-{secrets.token_hex(4)}", f"test-{secrets.token_hex(4)}"
    a = claim_redis_db(admin, first)
    try:
        b = claim_redis_db(admin, second)
        try:
            assert a != b and 1 <= a <= 63 and 1 <= b <= 63
            assert admin.eval(RELEASE_CLAIM, 1, REDIS_CLAIM.format(a), second) == 0  # not its claim
            assert admin.get(REDIS_CLAIM.format(a)) == first.encode()
            assert admin.ttl(REDIS_CLAIM.format(a)) > 0  # a killed session's claim expires
        finally:
            assert admin.eval(RELEASE_CLAIM, 1, REDIS_CLAIM.format(b), second) == 1
    finally:
        assert admin.eval(RELEASE_CLAIM, 1, REDIS_CLAIM.format(a), first) == 1
    assert admin.get(REDIS_CLAIM.format(a)) is None
    admin.close()
