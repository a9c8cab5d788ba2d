"""Operators' view of bots and versions."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from arena.bots import services
from arena.bots.models import Bot, BotVersion


class BotVersionInline(admin.TabularInline):
    model = BotVersion
    extra = 0
    fields = ("number", "status", "kind", "size", "sha256", "uploaded_at", "checked_at")
    readonly_fields = fields
    show_change_link = True
    can_delete = False


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "status", "trusted", "created_at")
    list_filter = ("status", "trusted")
    search_fields = ("name", "owner__username", "description")
    readonly_fields = ("created_at",)
    raw_id_fields = ("owner",)
    inlines = [BotVersionInline]


@admin.register(BotVersion)
class BotVersionAdmin(admin.ModelAdmin):
    list_display = ("__str__", "status", "kind", "size", "uploaded_at", "checked_at", "attempts")
    list_filter = ("status", "kind", "bot__trusted")
    search_fields = ("bot__name", "sha256", "declared_name")
    list_select_related = ("bot",)
    raw_id_fields = ("bot",)
    readonly_fields = (
        "sha256",
        "kind",
        "filename",
        "size",
        "uploaded_at",
        "queued_at",
        "started_at",
        "heartbeat_at",
        "checked_at",
        "attempts",
        "worker",
        "declared_name",
        "declared_version",
        "command",
        "variants",
    )
    actions = ["recheck"]

    @admin.action(description="Check the selected versions again")
    def recheck(self, request: HttpRequest, queryset: QuerySet[BotVersion]) -> None:
        n = services.recheck(list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"{n} version(s) queued for a new check")

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, object] | None = None
    ) -> HttpResponse:
        """Say first if versions are held: the machine could not run their checks."""
        held = BotVersion.objects.filter(status=BotVersion.Status.HELD).count()
        if held and request.method == "GET":
            self.message_user(
                request,
                f"{held} version(s) are held: the arena could not run their checks (the reason "
                "says why; the worker log has the details). Mend the worker, then select them "
                "(status: waiting for the arena) and check them again.",
                messages.WARNING,
            )
        return super().changelist_view(request, extra_context)
