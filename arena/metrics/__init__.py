"""The arena's metrics for Prometheus: ``GET /metrics`` (:mod:`arena.metrics.views`), behind a
bearer token (``ARENA_METRICS_TOKEN``).

What happens on every host (queues, games, checks, workers, periodic tasks) is read at scrape
time from the database and the broker (:mod:`arena.metrics.collector`): worker hosts run
hostile code, share no files with the site and open no port, and the database already holds
the record of all their work. The web server's own request latencies are measured in the web
processes (:mod:`arena.metrics.middleware`). docs/deployment.md lists every metric.
"""
