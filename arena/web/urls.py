"""URLs of the site's pages and downloads (stable: the API and docs link to them)."""

from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.generic import RedirectView

from arena.web import duels, guide, mine, notifications, passwords, runtimes, views

urlpatterns = [
    path("", views.home, name="home"),
    path("leaderboard/", RedirectView.as_view(url="/leaderboard/yinsh/"), name="leaderboards"),
    path("leaderboard/<str:variant>/", views.leaderboard, name="leaderboard"),
    path("bots/", views.bot_list, name="bots"),
    path("bots/<slug:name>/", views.bot_detail, name="bot"),
    path("bots/<slug:name>/edit/", views.bot_edit, name="bot-edit"),
    path("bots/<slug:name>/delete/", views.bot_delete, name="bot-delete"),
    path("bots/<slug:name>/upload/", views.upload_version, name="bot-upload"),
    path("bots/<slug:name>/v<int:number>/source", views.version_source, name="version-source"),
    path(
        "bots/<slug:name>/v<int:number>/activate/",
        views.version_activate,
        name="version-activate",
    ),
    path(
        "bots/<slug:name>/v<int:number>/check.json",
        views.version_check_transcript,
        name="version-check-transcript",
    ),
    path("bots/<slug:name>/test/", duels.test_create, name="bot-test"),
    path("bots/<slug:name>/challenge/", duels.challenge_create, name="bot-challenge"),
    path("head-to-head/", views.head_to_head, name="head-to-head"),
    path("upload/", views.upload, name="upload"),
    path("guide/", guide.index, name="guide"),
    path("guide/<slug:topic>/", guide.page, name="guide-page"),
    path("runtimes/", runtimes.runtime_list, name="runtimes"),
    path("runtimes/<slug:key>/starter.zip", runtimes.starter_kit, name="starter-kit"),
    path("matches/", views.match_list, name="matches"),
    path("matches/<int:pk>/", views.match_detail, name="match"),
    path("matches/<int:pk>/record.txt", views.match_record, name="match-record"),
    path(
        "matches/<int:pk>/record.short.txt",
        views.match_record,
        {"form": "short"},
        name="match-record-short",
    ),
    path("matches/<int:pk>/transcript.json", views.match_transcript, name="match-transcript"),
    path("matches/<int:pk>/replay.json", views.match_replay, name="match-replay"),
    path("archive/", views.ladder_archives, name="ladder-archives"),
    path("archive/<str:variant>/<str:month>.txt", views.ladder_archive, name="ladder-archive"),
    path("tournaments/", views.tournament_list, name="tournaments"),
    path("tournaments/new/", views.tournament_create, name="tournament-create"),
    path("tournaments/<int:pk>/", views.tournament_detail, name="tournament"),
    path("tournaments/<int:pk>/games/", views.tournament_games, name="tournament-games"),
    path(
        "tournaments/<int:pk>/<str:action>/",
        views.tournament_action,
        name="tournament-action",
    ),
    path("tournaments/<int:pk>/archive.zip", views.tournament_archive, name="tournament-archive"),
    path("tests/", duels.duel_list, {"kind": "test"}, name="tests"),
    path("tests/<int:pk>/", duels.duel_detail, {"kind": "test"}, name="test"),
    path("tests/<int:pk>/cancel/", duels.duel_cancel, {"kind": "test"}, name="test-cancel"),
    path("challenges/", duels.duel_list, {"kind": "challenge"}, name="challenges"),
    path("challenges/<int:pk>/", duels.duel_detail, {"kind": "challenge"}, name="challenge"),
    path(
        "challenges/<int:pk>/cancel/",
        duels.duel_cancel,
        {"kind": "challenge"},
        name="challenge-cancel",
    ),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/token/", views.token, name="token"),
    path("accounts/bots/", mine.my_bots, name="my-bots"),
    *passwords.urlpatterns,
    path("accounts/notifications/", notifications.notification_settings, name="notifications"),
    path("accounts/notifications/test/", notifications.send_test, name="notifications-test"),
]
