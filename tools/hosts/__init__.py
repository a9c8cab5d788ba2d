"""The run on several hosts (``./dev hosts``, :mod:`tools.hosts.run`): the web server and two
workers, each in a mount namespace of its own with private var folders, on PostgreSQL and
Redis."""
