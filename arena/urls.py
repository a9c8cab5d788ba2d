"""The site's URLs: the pages (arena.web), the REST API (arena.api) and the admin."""

from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from arena.metrics.views import metrics


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness probe for load balancers and compose health checks."""
    return JsonResponse({"status": "ok"})


urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("api/", include("arena.api.urls")),
    path("", include("arena.web.urls")),
]
