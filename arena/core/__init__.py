"""What every app shares and none owns: the base of the refusals a request can meet
(:mod:`arena.core.errors`).

Leaf package: it imports no app, so that every app, the site and the API may import it.
"""
