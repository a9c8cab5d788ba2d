"""The analysis board: a logged-in user asks bots for their action in a replayed position."""
