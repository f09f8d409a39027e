"""One numbering per screen: a judge's text names the responses by its own numbers ("医生1", "Doctor 2",
"回答 3"); the screen names them by its own ("Response 2", "Doctor 1" in the order shown). :func:`relabel` rewrites
every mention in the judge's text to the label the same response has on the screen, in one pass, so the doctor
never translates numbers in their head.

Only mentions of a number the judge used for a response are rewritten; any other number (a dose, "医生10" when the
judge discussed three responses) is left exactly as written.
"""

from __future__ import annotations

import re

from medeval.core.chinese import MAX_DIGITS

# a response named by a word and its number: Chinese (医生, 回答, 回复, 答案, 模型) or English (Doctor, Response, Answer,
# Model), the number in ASCII or full-width digits, with or without a space or "#" between; never inside a longer
# number ("医生12" is not "医生1")
_MENTION = re.compile(r"(医生|回答|回复|答案|模型|Doctor|doctor|Response|response|Answer|answer|Model|model)"
                      r"[ \u3000]?#?([0-9０-９]+)(?![0-9０-９])")
_FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")


def relabel(text: str, labels: dict[int, str]) -> str:
    """``text`` with every mention of response ``n`` (the judge's own number) replaced by ``labels[n]``, the
    response's label on the screen; mentions of numbers not in ``labels`` are kept as written.

    >>> relabel("医生1的方案较完整；医生2：4分。Doctor 2 is wrong.", {1: "Response 2", 2: "Response 1"})
    'Response 2的方案较完整；Response 1：4分。Response 1 is wrong.'
    >>> relabel("医生12 and 医生３", {1: "Doctor 2", 3: "Doctor 1"})
    '医生12 and Doctor 1'
    """
    def swap(m: re.Match) -> str:
        digits = m.group(2).translate(_FULL_WIDTH).lstrip("0") or "0"
        if len(digits) > MAX_DIGITS:
            return m.group(0)  # no response has that number (and int() refuses thousands of digits)
        return labels.get(int(digits), m.group(0))

    return _MENTION.sub(swap, text)
