"""The REST API's URLs, its token endpoint, and its OpenAPI schema and docs."""

from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from arena.api import analysis, duels, remote, schedules, seasons, tournaments, trials, views

router = DefaultRouter()
router.register("bots", views.BotViewSet, basename="api-bot")
router.register("versions", views.VersionViewSet, basename="api-version")
router.register("matches", views.MatchViewSet, basename="api-match")
router.register("tournaments", tournaments.TournamentViewSet, basename="api-tournament")
router.register("ratings", views.RatingViewSet, basename="api-rating")
router.register("seasons", seasons.SeasonViewSet, basename="api-season")
router.register("duels", duels.DuelViewSet, basename="api-duel")
router.register("trials", trials.TrialViewSet, basename="api-trial")
router.register("schedules", schedules.ScheduleViewSet, basename="api-schedule")

urlpatterns = [
    path("token/", views.TokenView.as_view(), name="api-token"),
    path("notifications/", views.NotificationListView.as_view(), name="api-notifications"),
    path(
        "notifications/read/", views.NotificationReadView.as_view(), name="api-notifications-read"
    ),
    path(
        "notifications/settings/",
        views.NotificationSettingsView.as_view(),
        name="api-notification-settings",
    ),
    path("notifications/test/", views.NotificationTestView.as_view(), name="api-notification-test"),
    path(
        "notifications/verify/",
        views.NotificationVerifyView.as_view(),
        name="api-notification-verify",
    ),
    path("analysis/", analysis.AnalysisView.as_view(), name="api-analysis"),
    path("analysis/bots/", analysis.AnalysisBotsView.as_view(), name="api-analysis-bots"),
    path("remote/<str:name>/events/", remote.EventsView.as_view(), name="api-remote-events"),
    path(
        "remote/<str:name>/games/<str:game>/answer/",
        remote.AnswerView.as_view(),
        name="api-remote-answer",
    ),
    path(
        "remote/<str:name>/games/<str:game>/log/", remote.LogView.as_view(), name="api-remote-log"
    ),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include(router.urls)),
    re_path(r"^.*/$", views.not_found),
]
