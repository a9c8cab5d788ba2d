"""Operators' view of tests and challenges (read them; change them through the site)."""

from __future__ import annotations

from django.contrib import admin

from arena.duels.models import Duel


@admin.register(Duel)
class DuelAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "kind",
        "candidate",
        "opponent",
        "variant",
        "status",
        "verdict",
        "wins",
        "draws",
        "losses",
        "llr",
        "rated",
        "created_by",
        "created_at",
    )
    list_filter = ("kind", "status", "verdict", "variant", "rated")
    search_fields = ("created_by__username", "candidate__bot__name", "opponent__bot__name")
    raw_id_fields = ("created_by", "candidate", "opponent")
    readonly_fields = ("wins", "draws", "losses", "p0", "p1", "p2", "p3", "p4", "llr")
