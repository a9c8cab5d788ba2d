"""The trial pages (:mod:`arena.web.trials`): start one, wait for it, read the game with the bot's
log, publish it; nobody but its owner sees it."""

from __future__ import annotations

from typing import Any

import pytest

from arena.admission import trials
from arena.admission.models import Trial
from arena.bots.models import Bot
from tests.arena.conftest import BOTS, TEST_BOTS, packed, upload

DIARY = "DIARY-MARKER-5e2b"


def start(client: Any, folder: Any, **fields: str) -> Any:
    data = upload(packed(folder), f"{folder.name}.tar.gz")
    return client.post("/trials/", {"file": data, "variant": "yinsh", "colour": "white", **fields})


@pytest.mark.django_db
def test_a_trial_from_the_form_to_the_game_and_its_log(
    client: Any, user: Any, other_user: Any, anchor: Any
) -> None:
    assert client.get("/trials/").status_code == 302  # log in first
    client.force_login(user)
    page = client.get("/trials/").content.decode()
    assert "Try it" in page and "random (the built-in bot)" in page
    response = start(client, TEST_BOTS / "honest" / "diary")
    trial = Trial.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/trials/{trial.pk}/"
    waiting = client.get(f"/trials/{trial.pk}/").content.decode()
    assert "waiting for a worker" in waiting
    assert f'data-events="/trials/{trial.pk}/events?v=' in waiting  # it is told of its end
    assert client.get(f"/trials/{trial.pk}/status.json").json() == {
        "status": "queued",
        "done": False,
    }
    assert trials.run(trial.pk) == "played"
    page = client.get(f"/trials/{trial.pk}/").content.decode()
    assert f"/trials/{trial.pk}/replay.json" in page and "Publish as a new bot" in page
    assert DIARY in page  # the bot's stderr and info, to its owner
    replay = client.get(f"/trials/{trial.pk}/replay.json")
    assert replay.status_code == 200 and replay.json()["frames"]
    record = client.get(f"/trials/{trial.pk}/record.txt")
    assert record["Content-Disposition"].startswith("attachment") and b"[Variant" in record.content
    assert f"#{trial.pk}" in client.get("/trials/").content.decode()
    # Nobody else sees any of it.
    for viewer in (other_user, None):
        client.logout()
        if viewer is not None:
            client.force_login(viewer)
        for tail in ("", "status.json", "events", "replay.json", "record.txt"):
            assert client.get(f"/trials/{trial.pk}/{tail}").status_code == 404
        if viewer is not None:
            assert DIARY not in client.get("/trials/").content.decode()
            assert client.post(f"/trials/{trial.pk}/publish/", {"name": "x"}).status_code == 404


@pytest.mark.django_db
def test_a_bad_trial_request_says_why_and_stores_nothing(
    client: Any, user: Any, anchor: Any
) -> None:
    client.force_login(user)
    response = start(client, BOTS / "random", variant="chess")
    assert response.status_code == 200 and "chess is not one of the available choices" in (
        response.content.decode()
    )
    response = client.post("/trials/", {"variant": "yinsh", "colour": "white"})
    assert response.status_code == 200 and "This field is required" in response.content.decode()
    assert not Trial.objects.exists()


@pytest.mark.django_db
def test_a_played_trial_is_published_as_a_new_bot_or_a_new_version(
    client: Any, user: Any, anchor: Any
) -> None:
    client.force_login(user)
    start(client, BOTS / "random")
    trial = Trial.objects.get()
    # Not before it played.
    assert "Publish" not in client.get(f"/trials/{trial.pk}/").content.decode()
    trials.run(trial.pk)
    response = client.post(f"/trials/{trial.pk}/publish/", {"name": "tried"})
    assert response.status_code == 302 and response["Location"] == "/bots/tried/"
    bot = Bot.objects.get(name="tried")
    assert bot.versions.get().sha256 == trial.sha256
    start(client, BOTS / "greedy", bot="tried")
    second = Trial.objects.get(bot=bot)
    trials.run(second.pk)
    assert (
        "Publish as a new version of tried" in client.get(f"/trials/{second.pk}/").content.decode()
    )
    client.post(f"/trials/{second.pk}/publish/")
    assert bot.versions.count() == 2
    # A taken name is refused with its reason, nothing published.
    response = client.post(f"/trials/{trial.pk}/publish/", {"name": "tried"}, follow=True)
    assert "It was not published" in response.content.decode()
    assert Bot.objects.count() == 2  # tried, and the built-in random
