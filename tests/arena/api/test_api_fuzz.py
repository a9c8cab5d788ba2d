"""The REST API fuzzed from its own OpenAPI schema: every operation, anonymous and with a token.

Schemathesis loads ``/api/schema/`` from the WSGI application in-process (no server) and
generates requests for each operation, valid and invalid: path and query parameters, JSON and
form bodies, multipart uploads of random bytes. A share of them is pointed at real objects of a
small arena (users, a token, bots and versions, finished matches with records, ratings,
tournaments), the rest at whatever was generated. Every response must not be a server error and
must match the schema (a documented status code, content type and body); invalid input must be
refused with a 4xx; a refused request must leave the database and the bot store as they were.
Each example runs in a savepoint that is rolled back, so examples never see each other's
writes. No worker runs: accepted uploads stay pending.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.core import NotSet

from arena.bots import store
from arena.bots.models import Bot, BotVersion
from arena.duels import services as duels
from arena.duels.models import Duel
from arena.games import seasons
from arena.games import services as games
from arena.games.models import Match, Season
from arena.jobs import claims
from arena.ratings import services as ratings
from arena.tournaments import services as tournaments
from arena.tournaments.models import Entry, Tournament
from arena.wsgi import application
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import fake_result, queued_match

#: Fuzzing examples per operation and per client (anonymous, token); the run stays well under
#: two minutes on two cores.
EXAMPLES = 25

# The checks: no server error; status code, content type and body as documented; invalid input
# refused. A fixed seed, and nothing learnt from earlier responses (their ids and times vary
# from run to run), so every run sends the same requests.
CONFIG = schemathesis.Config.from_dict(
    {
        "checks": {
            "enabled": False,
            **{
                name: {"enabled": True}
                for name in (
                    "not_a_server_error",
                    "status_code_conformance",
                    "content_type_conformance",
                    "response_schema_conformance",
                    "negative_data_rejection",
                )
            },
        },
        "seed": 20240601,
        "generation": {"max-examples": EXAMPLES, "deterministic": True},
        "phases": {
            "coverage": {"extra-data-sources": {"responses": False}},
            "fuzzing": {
                "extra-data-sources": {"responses": False},
                "error-feedback": {"enabled": False},
            },
        },
    }
)
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application, config=CONFIG)

UPLOADS = ("/api/bots/", "/api/bots/{name}/versions/")
#: The first bytes an accepted upload of each kind starts with.
SIGNATURES = {"zip": b"PK\x03\x04", "tar.gz": b"\x1f\x8b", "file": (b"#!", b"\x7fELF")}
#: The two users' credentials (tests/arena/conftest.py).
PASSWORDS = [("alice", "a-long-password-1"), ("bob", "a-long-password-2")]

pytestmark = pytest.mark.slow  # thousands of requests


@dataclass
class Arena:
    """The real objects that path parameters (and tournament bodies) are pointed at."""

    token: str
    bots: list[str]
    versions: list[int]
    matches: list[int]
    tournaments: list[int]
    duels: list[int]
    own_versions: list[int]
    seasons: list[int]

    def targets(self, path: str) -> tuple[str, list[Any]] | None:
        for prefix, key, values in (
            ("/api/bots/{name}", "name", self.bots),
            ("/api/versions/{id}", "id", self.versions),
            ("/api/matches/{id}", "id", self.matches),
            ("/api/tournaments/{id}", "id", self.tournaments),
            ("/api/duels/{id}", "id", self.duels),
            ("/api/seasons/{id}", "id", self.seasons),
        ):
            if path.startswith(prefix):
                return key, values
        return None


@pytest.fixture
def arena(user: Any, other_user: Any, anchor: BotVersion) -> Arena:
    """alice (the token's user) owns ``alpha`` (an active version that played, a pending and a
    rejected one) and a withdrawn bot; bob owns ``beta``; a finished match with its record, an
    aborted and a queued one; ratings fitted; alice's tournament (one game finished), bob's, and
    a cancelled one; alice's test (running) and bob's challenge of alpha (cancelled); a Yinsh
    season closed, the next one open."""
    alpha = make_version(user, "alpha")
    make_version(user, "alpha", status=BotVersion.Status.PENDING)
    rejected = make_version(user, "alpha", status=BotVersion.Status.REJECTED)
    BotVersion.objects.filter(pk=rejected.pk).update(
        reason="the protocol check failed", report=["FAIL no answer"], stderr_tail="boom"
    )
    gone = make_version(user, "gone")
    Bot.objects.filter(pk=gone.bot_id).update(status=Bot.Status.WITHDRAWN)
    beta = make_version(other_user, "beta")
    finished = queued_match(alpha, anchor)
    games.finish(finished.pk, claims.claim(Match, finished.pk), fake_result())
    aborted = queued_match(beta, anchor)
    games.finish(aborted.pk, claims.claim(Match, aborted.pk), fake_result(aborted=True))
    waiting = queued_match(anchor, beta, variant="blitz")
    ratings.refresh("yinsh")
    bots = list(Bot.objects.filter(name__in=["alpha", "beta", "random"]))
    mine = tournaments.create(
        user, name="Cup", variant="yinsh", time_control="5+0.1", games_per_pair=1, bots=bots
    )
    first = mine.matches.filter(status=Match.Status.QUEUED).first()
    games.finish(first.pk, claims.claim(Match, first.pk), fake_result())
    theirs = tournaments.create(
        other_user,
        name="Open",
        variant="blitz",
        time_control="5+0.1",
        games_per_pair=1,
        bots=bots[:2],
    )
    over = tournaments.create(
        user, name="Old", variant="yangsh", time_control="5+0.1", games_per_pair=1, bots=bots[1:]
    )
    tournaments.cancel(user, over)
    test = duels.start_test(user, alpha, anchor, variant="yinsh", elo0=0, elo1=50)
    challenge = duels.start_challenge(other_user, beta, alpha, variant="blitz", games=2)
    duels.cancel(other_user, challenge)
    closed = seasons.open_season("yinsh", division_size=2, movers=1)
    seasons.close_season(closed)
    season = seasons.open_season("yinsh", division_size=2, movers=1)
    return Arena(
        token=Token.objects.create(user=user).key,
        bots=["alpha", "beta", "random", "gone"],
        versions=list(BotVersion.objects.order_by("pk").values_list("pk", flat=True)),
        matches=[finished.pk, aborted.pk, waiting.pk, first.pk],
        tournaments=[mine.pk, theirs.pk, over.pk],
        duels=[test.pk, challenge.pk],
        own_versions=[alpha.pk, anchor.pk, beta.pk],
        seasons=[closed.pk, season.pk],
    )


@pytest.fixture(autouse=True)
def wsgi_calls() -> Iterator[None]:
    """Requests go straight to the WSGI application, inside the test's transaction: like
    Django's test client, keep the request signals from closing the connection."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def state() -> tuple[Any, ...]:
    """What a refused request must not change: the rows an API call can write and the files
    in the bot store."""
    files = list(store.hashes())
    return (
        list(Bot.objects.order_by("pk").values_list("pk", "description", "status")),
        list(BotVersion.objects.order_by("pk").values_list("pk", "status")),
        list(Match.objects.order_by("pk").values_list("pk", "status")),
        list(Tournament.objects.order_by("pk").values_list("pk", "status")),
        list(Duel.objects.order_by("pk").values_list("pk", "status")),
        list(Season.objects.order_by("pk").values_list("pk", "status", "name")),
        Entry.objects.count(),
        list(Token.objects.order_by("pk").values_list("key", flat=True)),
        files,
    )


def valid(case: schemathesis.Case, location: str) -> bool:
    """Whether this part of the request was generated valid (then it may be replaced by another
    valid value; a part made invalid on purpose is left as it is)."""
    component = case.meta.components.get(location) if case.meta else None
    return component is None or component.mode.is_positive


def point_at_real_objects(case: schemathesis.Case, arena: Arena, pick: int) -> None:
    """Most valid requests name real objects: a bot, version, match or tournament in the path,
    real bots in a new tournament, real credentials for a token."""
    target = arena.targets(case.operation.path)
    if target is not None and pick < 7 and valid(case, "path"):
        key, values = target
        case.path_parameters = {**(case.path_parameters or {}), key: values[pick % len(values)]}
    if not (case.method == "POST" and isinstance(case.body, dict) and valid(case, "body")):
        return
    if case.operation.path == "/api/tournaments/" and pick < 5:
        case.body = {**case.body, "bots": arena.bots[: 2 + pick % 3]}
    if case.operation.path == "/api/duels/" and pick < 5:
        # alice's active version against the anchor or bob's (a test, or a challenge of bob's).
        candidate, opponent = arena.own_versions[0], arena.own_versions[1 + pick % 2]
        case.body = {**case.body, "candidate": candidate, "opponent": opponent}
    if case.operation.path == "/api/token/" and pick < 2:
        username, password = PASSWORDS[pick]
        case.body = {"username": username, "password": password}


def exercise(case: schemathesis.Case, arena: Arena, token: str | None) -> None:
    # A number from 0 to 9 that depends on the generated request only: deterministic, and it
    # leaves Schemathesis's coverage phase on (custom strategies would turn it off).
    body = None if isinstance(case.body, NotSet) else case.body
    pick = zlib.crc32(repr((case.path_parameters, case.query, body)).encode()) % 10
    point_at_real_objects(case, arena, pick)
    if case.headers:
        case.headers.pop("Authorization", None)
    headers = {"Authorization": f"Token {token}"} if token else {}
    with transaction.atomic():
        before = state()
        response = case.call_and_validate(headers=headers)
        if 400 <= response.status_code < 500:
            assert state() == before, f"{case.method} {case.formatted_path} refused but changed"
        if case.operation.path in UPLOADS and response.status_code == 201:
            # Accepted (its first bytes look like an archive or a program): a pending version
            # whose bytes are in the store; the check is a worker's job.
            version = BotVersion.objects.get(pk=response.json()["id"])
            if version.kind == BotVersion.Kind.REMOTE:  # registered, not uploaded: no file
                assert version.bot.remote and version.status == BotVersion.Status.ACTIVE
                transaction.set_rollback(True)
                return
            with store.open(version.sha256) as f:
                data = f.read()
            assert version.status == BotVersion.Status.PENDING and len(data) == version.size
            assert data.startswith(SIGNATURES[version.kind])
        transaction.set_rollback(True)


FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@schema.parametrize()
@FUZZ
def test_api_anonymous(case: schemathesis.Case, arena: Arena) -> None:
    exercise(case, arena, None)


@schema.parametrize()
@FUZZ
def test_api_with_a_token(case: schemathesis.Case, arena: Arena) -> None:
    exercise(case, arena, arena.token)


# --------------------------------------------------------------------------- hostile bodies

#: Bodies no generator makes, sent to every operation that takes one, as each parser the API
#: reads (JSON, form, multipart): nested deeper than any parser recurses, and bytes that are
#: not the UTF-8 they claim to be. (body, content type)
BOUNDARY = "arena-fuzz"
HOSTILE_BODIES = {
    "json-deep-arrays": (b"[" * 100_000 + b"]" * 100_000, "application/json"),
    "json-deep-objects": (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "application/json"),
    "json-not-utf8": (b'{"name": "caf\xff\xfe", "description": "\xc3\x28"}', "application/json"),
    "json-utf16": ('{"name": "x"}'.encode("utf-16"), "application/json"),
    "form-not-utf8": (b"name=caf%FF%FE&description=\xff\xfe", "application/x-www-form-urlencoded"),
    "form-deep-keys": (b"a" + b"[a]" * 20_000 + b"=1", "application/x-www-form-urlencoded"),
    "multipart-not-utf8": (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\n'.encode()
            + b"caf\xff\xfe\r\n"
            + f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; '.encode()
            + b'filename="\xff\xfe.py"\r\nContent-Type: text/x-python\r\n\r\n#!\xff\r\n'
            + f"--{BOUNDARY}--\r\n".encode()
        ),
        f"multipart/form-data; boundary={BOUNDARY}",
    ),
    "multipart-unterminated": (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="na'.encode(),
        f"multipart/form-data; boundary={BOUNDARY}",
    ),
}


def operations_with_a_body() -> list[tuple[str, str]]:
    """(method, path template) of every operation of the schema that takes a body."""
    found = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.body:
            found.append((operation.method.upper(), operation.path))
    return sorted(found)


@pytest.mark.parametrize("body", list(HOSTILE_BODIES))
@pytest.mark.parametrize("anonymous", [True, False], ids=["anonymous", "token"])
def test_hostile_bodies_are_refused_by_every_operation(
    arena: Arena, anonymous: bool, body: str
) -> None:
    """Each of ``HOSTILE_BODIES`` to every operation that takes a body, with its path pointed
    at a real object: a 4xx with a ``detail``, never a server error, and nothing changed."""
    from django.test import Client

    data, content_type = HOSTILE_BODIES[body]
    headers = {} if anonymous else {"Authorization": f"Token {arena.token}"}
    client = Client(headers=headers)
    operations = operations_with_a_body()
    assert ("POST", "/api/token/") in operations and ("POST", "/api/bots/") in operations
    for method, template in operations:
        target = arena.targets(template)
        url = template
        if target is not None:
            key, values = target
            url = url.replace("{" + key + "}", str(values[0]))
        with transaction.atomic():
            before = state()
            r = client.generic(method, url, data, content_type=content_type)
            assert 400 <= r.status_code < 500, (method, url, r.status_code, r.content[:300])
            assert r.json().get("detail"), (method, url, r.json())
            assert state() == before, f"{method} {url} refused but changed"
            transaction.set_rollback(True)
