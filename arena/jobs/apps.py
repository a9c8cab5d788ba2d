from django.apps import AppConfig


class JobsConfig(AppConfig):
    """Claimed work, the failure policy, the sweeper and what a worker does when it starts."""

    name = "arena.jobs"
    label = "jobs"
    verbose_name = "Work of the workers"

    def ready(self) -> None:
        from celery.signals import worker_init, worker_ready

        # Every Django process (the site sends tasks too) uses the arena's Celery app.
        import arena.celery  # noqa: F401
        from arena.jobs import startup

        worker_init.connect(startup.note_start, dispatch_uid="jobs-worker-init")
        worker_ready.connect(startup.recover, dispatch_uid="jobs-worker-ready")
