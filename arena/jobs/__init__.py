"""Claimed work, the part every worker task shares: the claim (an abstract model and one module
to claim, beat, give back and sweep it), the failure policy, time limits, and the sidecar that
tends work while it runs.

It sits just above the referee and imports none of the apps, so every app may use it; the
apps' work (matches, checks of bots) derives from :class:`arena.jobs.models.ClaimedWork`.
"""
