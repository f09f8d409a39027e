"""Where the blocks of a task item go on the Rate & compare screen (pure: the page draws what these return).

Two shapes: :func:`groups` (items made of groups of one shape, each ending with the block rated -- AccR: a claim,
the model's verdict, its answer -- drawn side by side, one column a group) and otherwise :func:`rows` (the blocks
rated side by side, the context before them in two columns, folded blocks on rows of their own).
"""

from __future__ import annotations

from medeval.annotation.tasks.registry import Block


def rows(blocks: tuple[Block, ...] | list[Block]) -> list[list[Block]]:
    """The blocks in screen order, in rows: blocks that are rated side by side (the two sides of a pair, the
    responses of a rubric item: consecutive blocks with a target, at most 3 a row), or the context before them
    (consecutive blocks without a target: two columns). A folded block is a row of its own. A lone context block
    right before a lone rated block (the judge's numbering, then its assessment) shares its row."""
    out: list[list[Block]] = []
    for b in blocks:
        last = out[-1] if out else None
        if last and not b.fold and not last[0].fold and bool(b.target) == bool(last[0].target) \
                and (not b.target or len(last) < 3):
            last.append(b)
        else:
            out.append([b])
    joined: list[list[Block]] = []
    for row in out:
        prev = joined[-1] if joined else None
        if prev and len(prev) == 1 and len(row) == 1 and not prev[0].target and not prev[0].fold and row[0].target \
                and not row[0].fold:
            prev.append(row[0])
        else:
            joined.append(row)
    return joined


def groups(blocks: tuple[Block, ...] | list[Block]) -> list[list[Block]] | None:
    """The blocks as 2-3 groups of one shape (the same number of blocks, at least 2) that each end with the block
    rated, or None when the item is not made so (or has a folded block)."""
    out: list[list[Block]] = [[]]
    for b in blocks:
        out[-1].append(b)
        if b.target:
            out.append([])
    out = [g for g in out if g]
    if len(out) < 2 or len(out) > 3 or any(b.fold for b in blocks) or not out[-1][-1].target:
        return None
    return out if all(len(g) == len(out[0]) >= 2 for g in out) else None


def reading(blocks: tuple[Block, ...] | list[Block], pending_target: str | None,
            open_part: int = 1) -> tuple[list[Block], list[list[Block]]]:
    """What the question asked now needs on screen, as (folded blocks, columns): the columns are read side by side,
    the first the context, each later one a block the question is about.

    * folded blocks (earlier questions of a case) are apart: one key opens them;
    * an item of groups (:func:`groups`: AccR) shows the group whose rated block the question is about: its other
      blocks as the context, its rated block beside them;
    * otherwise the context is every block without a target, and the blocks of an earlier part that were rated then
      (the responses a judge of part 2 discusses); the question's own blocks (``pending_target``) follow, one column
      each -- every rated block of the open part when the question is about several (a pair: "A versus B") or
      when no question is pending.
    The blocks keep their order; no block the question needs is left out.
    """
    folded = [b for b in blocks if b.fold]
    grouped = groups(blocks)
    if grouped is not None:
        group = next((g for g in grouped if g[-1].target == pending_target), grouped[0])
        return folded, [list(group[:-1]), [group[-1]]]
    shown = [b for b in blocks if not b.fold]
    rated = [b for b in shown if b.target and b.part == open_part]
    mine = [b for b in rated if b.target == pending_target] or rated
    context = [b for b in shown if b not in rated]
    return folded, ([context] if context else []) + [[b] for b in mine]
