"""The guide "Writing a bot": pages rendered from the repository's Markdown, and the links from
rejections to them."""

from __future__ import annotations

import io
import os
import re
import shutil
import zipfile
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from arena.admission import services as admission
from arena.bots.models import BotVersion
from arena.web import guide, rendering
from tests.arena.admission.test_checks import submit
from tests.arena.conftest import ROOT, TEST_BOTS, make_version, packed, zipped
from tests.arena.web.test_views import logged_in

V = BotVersion.Status


def page(url: str) -> str:
    response = Client().get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def article(html: str) -> str:
    """The guide's text in a page (without the site's and the guide's navigation)."""
    return html.split('<article class="guide">', 1)[1].split("</article>", 1)[0]


def hrefs(html: str) -> list[str]:
    return re.findall(r'<a href="([^"]*)"', article(html))


@pytest.fixture
def guide_root(settings: Any, tmp_path: Path) -> Path:
    """A repository of the guide's files of its own: the real docs, and the files being
    written elsewhere (runtimes, starter kits) absent until a test writes them."""
    for path in (
        "docs/protocol.md",
        "docs/bots.md",
        "docs/sandbox.md",
        "docs/rules.md",
        "docs/duels.md",
        "docs/notifications.md",
        "docs/tournaments.md",
        "docs/people.md",
        "docs/position-json.md",
        "docs/tournaments.md",
        "bots/README.md",
    ):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, tmp_path / path)
    settings.GUIDE_ROOT = tmp_path
    return tmp_path


# ----------------------------------------------------------------------------- the pages


def test_the_index_lists_every_topic_and_says_which_are_not_written(guide_root: Path) -> None:
    html = page("/guide/")
    for topic in guide.TOPICS:
        assert f'href="/guide/{topic.slug}/"' in html and topic.title in html
    assert html.count("not written yet") == 2  # runtimes and starter kits
    (guide_root / "docs" / "runtimes.md").write_text("# Runtimes\n\nPython 3.\n")
    assert page("/guide/").count("not written yet") == 1


@pytest.mark.parametrize(
    ("slug", "headings"),
    [
        ("protocol", ["The bot protocol, version 1", "Messages", "Time", "Ending and failures"]),
        ("bots", ["Packaging a bot", "The manifest", "Uploads", "Variants", "Builds"]),
        ("variants", ["Variants", "The variants"]),
        ("builds", ["Builds"]),
        ("limits", ["What a bot sees (FULL and NAMESPACE)", "Limits (SandboxSettings)"]),
        ("notifications", ["Events", "The inbox", "Verifying an address", "The webhook payload"]),
    ],
)
def test_each_page_shows_its_sources_headings(slug: str, headings: list[str]) -> None:
    html = page(f"/guide/{slug}/")
    shown = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<h[12][^>]*>(.*?)</h[12]>", html)]
    for heading in headings:
        assert heading in shown, heading
    assert "not written yet" not in html


def test_a_page_from_sections_shows_only_those() -> None:
    html = page("/guide/limits/")
    assert 'id="violations"' in html and "FORBIDDEN_SYSCALL" in html
    assert "Protection levels" not in html and "Deploying a worker" not in html


def test_every_section_the_guide_names_exists() -> None:
    for topic in guide.TOPICS:
        for part in topic.parts:
            if part.sections:
                text = (ROOT / part.path).read_text()
                assert rendering.select_sections(text, part.sections)[1] == [], part.path


def test_a_missing_file_is_a_page_not_written_yet(guide_root: Path) -> None:
    html = page("/guide/runtimes/")
    assert "This page is not written yet" in html and "docs/runtimes.md" in html
    assert "not written yet" in page("/guide/starters/")
    (guide_root / "docs" / "runtimes.md").write_text("# Runtimes\n\n## The set\n\nPython 3.11.\n")
    html = page("/guide/runtimes/")
    assert "not written yet" not in html and '<h2 id="the-set">The set</h2>' in html


#: A path of the repository in a page's text: a visitor can open none of them.
REPOSITORY_PATH = re.compile(
    r"(?<![\w/.-])(?:docs/[\w./-]*\.md|bots/[\w./-]*|arena/[\w./-]*|engine/[\w./-]*"
    r"|tests/[\w./-]*|manage\.py)"
)


def visible_text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", html))


@pytest.mark.django_db
def test_no_page_for_bot_authors_names_a_path_of_the_repository(user: Any) -> None:
    client = logged_in(user)
    urls = ["/guide/", "/upload/", "/runtimes/", *(f"/guide/{t.slug}/" for t in guide.TOPICS)]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        text = visible_text(response.content.decode())
        assert "not written yet" not in text, url
        found = [m[0] for m in REPOSITORY_PATH.finditer(text)]
        assert found == [], (url, found)


def test_the_pattern_of_repository_paths_finds_them_and_not_the_sites_addresses() -> None:
    text = visible_text(
        "see docs/protocol.md, <code>bots/sdk/yinshbot</code>, arena/referee/match.py, "
        "engine/state.py, tests/referee/x.py and python manage.py checkbot"
    )
    assert len(REPOSITORY_PATH.findall(text)) == 6
    assert REPOSITORY_PATH.findall("/bots/walker/ https://x.org/bots/a/ /api/bots/") == []


def test_the_index_links_the_new_pages_and_the_downloads() -> None:
    html = page("/guide/")
    for slug in ("position", "sdk", "protocol", "starters"):
        assert f'href="/guide/{slug}/"' in html
    assert 'href="/guide/checkbot.pyz"' in html and 'href="/guide/yinsh-sdk.zip"' in html
    for key in ("python", "rust", "go"):
        assert f'href="/runtimes/{key}/starter.zip"' in html


def test_links_to_the_sdk_the_checker_and_the_kits_lead_to_their_downloads() -> None:
    assert "/guide/yinsh-sdk.zip" in hrefs(page("/guide/bots/"))
    assert "/guide/checkbot.pyz" in hrefs(page("/guide/bots/"))
    assert "/runtimes/rust/starter.zip" in hrefs(page("/guide/runtimes/"))
    assert "/guide/position/" in hrefs(page("/guide/protocol/"))
    assert "/guide/checkbot.pyz" in hrefs(page("/guide/starters/"))


@pytest.mark.parametrize(
    ("check", "qualification", "expected"),
    [
        (2, 2, ("4 check games", "8 qualification games", "at least 2 and", "at least 2 and")),
        (6, 1, ("6 check games", "8 qualification games", "at least 6 and", "at least 2 and")),
    ],
)
def test_the_index_says_how_many_games_the_check_plays_from_the_settings(
    settings: Any, check: int, qualification: int, expected: tuple[str, ...]
) -> None:
    settings.CHECK_GAMES, settings.QUALIFICATION_GAMES = check, qualification
    settings.CHECK_TIME_CONTROL, settings.QUALIFICATION_TIME_CONTROL = "20+0.2", "5+0.1"
    text = " ".join(visible_text(page("/guide/")).split())
    assert f"{expected[0]} and {expected[1]}" in text
    assert f"random bot at 20+0.2, {expected[2]}" in text
    assert f"random bot at 5+0.1, {expected[3]}" in text


def test_the_guide_serves_the_sdk_and_the_checker_as_files_to_save() -> None:
    for url, name in (
        ("/guide/yinsh-sdk.zip", "yinsh-sdk.zip"),
        ("/guide/checkbot.pyz", "checkbot.pyz"),
    ):
        response = Client().get(url)
        assert response.status_code == 200
        assert response["Content-Disposition"] == f'attachment; filename="{name}"'
        assert zipfile.is_zipfile(io.BytesIO(response.content))


def test_an_unknown_page_is_not_found() -> None:
    assert Client().get("/guide/nothing/").status_code == 404


def test_links_between_the_docs_lead_to_the_guides_pages() -> None:
    links = hrefs(page("/guide/bots/"))
    assert "/guide/protocol/" in links  # [protocol](protocol.md)
    assert "/guide/limits/" in links  # [limits](sandbox.md)
    assert "#builds" in links and not any(link.endswith(".md") for link in links)


def test_links_are_rewritten_to_pages_anchors_or_plain_text(guide_root: Path) -> None:
    starters = guide_root / "bots" / "starters" / "README.md"
    starters.parent.mkdir(parents=True)
    starters.write_text(
        "# Starter kits\n\n"
        "Read [the clock](../../docs/protocol.md#time), [the protocol](docs/protocol.md),\n"
        "[the table](../../docs/rules.md#the-variants) and [rows](../../docs/rules.md#g-rows),\n"
        "[tests](../../docs/testing.md), [the C kit](c/main.c), [site](https://example.org/),\n"
        "[here](#starter-kits) and ![a diagram](board.png).\n"
    )
    html = page("/guide/starters/")
    assert hrefs(html) == [
        "/guide/protocol/#time",
        "/guide/protocol/",
        "/guide/variants/#the-variants",
        "https://example.org/",
        "#starter-kits",
    ]
    for text in ("rows", "tests", "the C kit", "a diagram"):
        assert text in article(html) and f">{text}</a>" not in html  # its words, not a link
    assert "<img" not in html and '<h1 id="starter-kits">' in html


def test_raw_html_and_script_links_are_not_passed_through(guide_root: Path) -> None:
    (guide_root / "bots" / "starters").mkdir(parents=True)
    (guide_root / "bots" / "starters" / "README.md").write_text(
        "# Kits\n\n<script>alert(1)</script>\n\n<b>bold</b> [x](javascript:alert(1))\n"
    )
    html = page("/guide/starters/")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>" not in html and 'href="javascript' not in html


def test_a_page_is_rendered_again_when_its_file_changes(guide_root: Path) -> None:
    source = guide_root / "docs" / "bots.md"
    builds = guide.TOPICS[[t.slug for t in guide.TOPICS].index("builds")]
    first = guide.render_topic(builds)
    assert guide.render_topic(builds) is first  # from the cache
    source.write_text(source.read_text().replace("## Builds\n", "## Builds\n\nNew words.\n"))
    stat = source.stat()
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    again = guide.render_topic(builds)
    assert again is not first and "New words." in again.html


def test_the_guide_is_linked_from_every_page_and_the_upload_pages(user: Any) -> None:
    assert 'href="/guide/"' in page("/matches/")
    c = logged_in(user)
    assert 'href="/guide/"' in c.get("/upload/").content.decode().split("<main", 1)[1]
    make_version(user, "mine")
    upload = c.get("/bots/mine/upload/").content.decode()
    assert 'href="/guide/"' in upload.split("<main", 1)[1]


# ----------------------------------------------------------------------------- markdown


def test_headings_get_githubs_anchors_unique_in_a_page() -> None:
    text = "# Title\n\n## Limits (`SandboxSettings`)\n\n## Examples\n\n## Examples\n"
    rendered = rendering.render(text, link=lambda href: href)
    assert rendered.title == "Title" and "<h1" not in rendered.html
    ids = [h.id for h in rendered.headings]
    assert ids == ["limits-sandboxsettings", "examples", "examples-1"]
    assert rendering.heading_ids(text) == {"title", *ids}


def test_sections_are_chosen_by_heading_not_by_a_hash_in_code() -> None:
    text = "## A\n\n```sh\n## B\n```\n\n### A.1\n\na1\n\n## B\n\nb\n"
    chosen, missing = rendering.select_sections(text, ["B", "A", "C"])
    assert chosen == "## B\n\nb\n\n## A\n\n```sh\n## B\n```\n\n### A.1\n\na1\n"
    assert missing == ["C"]


def test_tables_and_fenced_code_are_rendered() -> None:
    html = rendering.render(
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n```toml\nx = 1\n```\n", link=str
    ).html
    assert "<table>" in html and "<td>2</td>" in html
    assert '<pre><code class="language-toml">x = 1' in html


# ----------------------------------------------------------------------------- rejections


@pytest.mark.parametrize(
    ("reason", "slug"),
    [
        (
            "the protocol check failed: game 1 (x v1 as white, 4 actions): x v1 exited at ply 7 "
            "(exit code 3); stderr: giving up",
            "protocol",
        ),
        (
            "qualification game 2 lost by time: black ran out of time (no answer after 5.05 s)",
            "protocol",
        ),
        (
            "qualification game 1 lost by sandbox-violation: white was stopped by the sandbox: "
            "memory limit of 512 MiB exceeded (memory)",
            "limits",
        ),
        (
            "the protocol check failed: game 1 (x v1 as white, 0 actions): x v1 was stopped by the "
            "sandbox: forbidden system call (forbidden-syscall)",
            "limits",
        ),
        ("the upload cannot be used: no bot.toml at the top of the archive", "bots"),
        ("the upload cannot be used: entry '../x': a '..' component", "bots"),
        ("the upload cannot be used: bot.toml: build must be a string", "builds"),
        ("the upload cannot be used: bot.toml: unknown variant 'chess'", "variants"),
        ("the upload cannot be used: bot.toml: variants is empty", "variants"),
        ("the build failed: make exited with status 2", "builds"),
        ("the bot was withdrawn by its owner", None),
    ],
)
def test_each_rejection_leads_to_the_page_that_explains_it(reason: str, slug: str | None) -> None:
    fix = guide.how_to_fix(reason)
    if slug is None:
        assert fix is None
    else:
        assert fix is not None and fix.url == f"/guide/{slug}/"
        assert page(fix.url)


@pytest.mark.django_db
def test_a_rejected_versions_page_links_to_the_fix(user: Any) -> None:
    unusable = submit(user, "nameless", zipped({"main.py": b"print()\n"}), "n.zip")
    assert admission.check_version(unusable.pk) == "rejected"
    manifest = b'name = "x"\ncommand = "python3 main.py"\nvariants = ["chess"]\n'
    variants = submit(user, "chess", zipped({"bot.toml": manifest, "main.py": b""}), "c.zip")
    assert admission.check_version(variants.pk) == "rejected"
    quitter = submit(user, "quitter", packed(TEST_BOTS / "protocol" / "exits_midgame"), "q.tgz")
    assert admission.check_version(quitter.pk) == "rejected"
    for name, url in (
        ("nameless", "/guide/bots/"),
        ("chess", "/guide/variants/"),
        ("quitter", "/guide/protocol/"),
    ):
        html = page(f"/bots/{name}/")
        assert "How to fix" in html and f'href="{url}"' in html, name
    violation = make_version(user, "hog", status=V.REJECTED)
    violation.reason = "qualification game 1 lost by sandbox-violation: white was stopped by the "
    violation.reason += "sandbox: memory limit of 512 MiB exceeded (memory)"
    violation.save()
    assert 'href="/guide/limits/"' in page("/bots/hog/")
    make_version(user, "fine")
    assert "How to fix" not in page("/bots/fine/")


@pytest.mark.django_db
def test_a_refused_upload_links_to_the_packaging_page(user: Any) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    c = logged_in(user)
    r = c.post("/upload/", {"name": "rar", "file": SimpleUploadedFile("b.rar", b"Rar!\x1a\x07")})
    html = r.content.decode()
    assert "RAR archive" in html and 'href="/guide/bots/#uploads"' in html
    assert 'href="/guide/bots/#uploads"' not in c.get("/upload/").content.decode()


@pytest.mark.django_db
def test_the_notification_settings_link_the_guides_notifications_page(user: Any) -> None:
    c = Client()
    c.force_login(user)
    page = c.get("/accounts/notifications/").content.decode()
    assert 'href="/guide/notifications/"' in page
    r = c.get("/guide/notifications/")
    assert r.status_code == 200
    assert "Webhooks" in r.content.decode() or "webhook" in r.content.decode()
