"""The greedy bot: tries every legal action, keeps the one whose position scores best.

The score (yinshbot.heuristics) counts rings removed, rows completed (its own, and the
opponent's as a loss), markers of its colour, lines of three and four, ring centrality; after
a ring move it also prefers leaving the opponent fewer moves. Ties are broken at random,
seeded by the game's seed.
"""

from __future__ import annotations

import random

import yinshbot
from yinshbot.heuristics import evaluate

#: Points per legal move of the opponent after a ring move (fewer is better).
MOBILITY = 0.3

_rng: random.Random | None = None


def choose(request: yinshbot.Request) -> tuple[str, dict[str, float]]:
    global _rng
    if _rng is None:
        _rng = random.Random(f"{request.seed}/{request.color}/greedy")
    state = request.state()
    me = state.turn
    best: list[str] = []
    best_score = -float("inf")
    for action in state.legal_actions():
        state.push(action)
        score = evaluate(state, me)
        if state.turn != me and state.next.value == "move":
            score -= MOBILITY * len(state.legal_actions())
        state.pop()
        if score > best_score + 1e-9:
            best, best_score = [str(action)], score
        elif abs(score - best_score) <= 1e-9:
            best.append(str(action))
    return _rng.choice(best), {"score": round(best_score, 1)}


def reset() -> None:
    global _rng
    _rng = None


if __name__ == "__main__":
    yinshbot.main(choose, on_start=lambda hello: reset())
