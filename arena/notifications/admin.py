"""Operators' view of notifications and their deliveries."""

from __future__ import annotations

from django.contrib import admin

from arena.notifications.models import Delivery, Notification, NotificationSettings


@admin.register(NotificationSettings)
class NotificationSettingsAdmin(admin.ModelAdmin):
    list_display = ("user", "email", "webhook", "updated_at")
    search_fields = ("user__username",)


class DeliveryInline(admin.TabularInline):
    model = Delivery
    extra = 0
    readonly_fields = ("channel", "target", "status", "attempts", "last_error", "sent_at")


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ("created_at", "user", "event", "subject", "read_at")
    list_filter = ("event", ("read_at", admin.EmptyFieldListFilter))
    search_fields = ("user__username", "subject")
    inlines = [DeliveryInline]


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ("created_at", "notification", "channel", "status", "attempts")
    list_filter = ("channel", "status")
