"""Exam accuracy on CMB-Exam style multiple-choice questions (CMB, seed 001, §4.1): answer extraction and scoring.

CMB extracts the answer "from model outputs using an empirically designed regular
expression. Each extracted answer is compared to the solution and is deemed correct
if and only if they are exactly matched" (CMB §4.1, Evaluation Details). Its
expression (``match_choice`` in ``src/utils.py`` of FreedomIntelligence/CMB,
re-implemented as :func:`cmb_match_choice` for comparison) takes the letters after
"答案是/答案：/正确选项为 …" and otherwise *every* capital A-G in the text; for a
single-choice question it then keeps the first. So "根据CT和ECG结果，选D" becomes
C -- the C of "CT".

:func:`extract_answer` first turns traditional Chinese into simplified (``core.chinese.to_simplified``, so
"本題選D" and "答案為B" read as "本题选D", "答案为B"), then reads, in this order, and stops at the first that
gives letters:

1. ``answer_phrase`` -- an explicit answer: "答案：D", "正确答案是 B、D", "故选C",
   "The answer is (B)", "the correct answers are B and D", "answer: b" (lower case
   only after an English phrase, and never the article "a" in "the answer is a
   bacterial infection"), and a stated final choice: "更倾向于B", "首选D" (beats
   "备选B"), "排除A、B、C后，只剩D", "I lean towards D", "which leaves D".
   "答案/answer is/故选/倾向/首选" phrases beat a bare "选D"; the *last* phrase of a kind
   wins (a chain of thought ends with its answer: "答案是A吗？不，应该是C" -- a question
   "…A吗？" is not an answer -- gives C).
2. ``leading`` -- the response starts with the letters: "B", "B. 急性阑尾炎",
   "(B)", "ABD", "A,B,D", "A、B和D".
3. ``statement`` -- per-option statements: "B项正确", "D选项符合", "Option C is
   correct" (minus options declared wrong).
4. ``single_letter`` -- exactly one option letter standing on its own in the text.
5. ``option_text`` -- no letter, but the text of exactly one option is quoted.

Letters are only read as options when they stand alone: not inside words or
abbreviations (CT, ECG, DNA, COPD, HBeAg, CD4), not as terms (B超, A型, C反应蛋白,
维生素D, D-二聚体), not the English article "A", and a run of several letters
("ABD") only when they are distinct and in order (so "ECG" is never E, C, G).
A letter that is ruled out ("不选A", "A是错误的", "排除C", "not B") does not count as
chosen.

Where the response does not determine the choice the reading is ``ambiguous`` with a
reason (``Extraction.note``) and the letters it names (``candidates``), never a guessed
letter: several letters with nothing to decide between them ("Both A and C are
possible", "A和B都有可能"), alternatives ("答案是B或C", "A or B"), two final answers
that disagree with no correction between them ("最终答案：A……最终答案：B"), or a
non-empty response that names no option at all. CMB's regex takes the first capital
letter in these cases. An ambiguous answer counts as wrong in ``accuracy_ambiguous_wrong``;
a person may settle it (``medeval exam-review``, the Exam results page), and
``accuracy_settled`` counts it with the settled letters (unsettled ones as wrong).

>>> extract_answer("根据CT和ECG结果，选D", "ABCDE").letters
'D'
>>> cmb_match_choice("根据CT和ECG结果，选D", multi=False)
'C'
>>> extract_answer("正确答案是 B、D", "ABCDE").letters
'BD'

Scoring (:func:`score_answers`): an answer is correct iff the extracted option set
equals the key's. Accuracy is reported overall, per category and per subcategory
(and per question type when the key has one). The category of a question is
``exam_type`` (CMB-Exam's name for the 6 major categories, e.g. 医师考试) or
``category``; the subcategory is ``exam_class`` (the 28 subcategories, e.g. 执业医师)
or ``subcategory``; ``exam_subject``/``subject`` is kept but not aggregated. Besides
the micro accuracies (correct / questions: ``accuracy_settled``,
``accuracy_ambiguous_wrong``, ``accuracy_cmb_regex``) the macro average is CMB's: a
category's ``accuracy_macro`` is the mean of its subcategories' accuracies (CMB
``score.py``, ``accuracy_per_category``), and ``accuracy_macro`` overall is the mean of
those category figures -- the "Average" column of CMB Table 6 (e.g. GPT-4: the mean of
59.90, 69.31, 52.19, 61.50, 59.69, 54.19 is 59.46). (Before issue 21 the overall figure
averaged the categories' question-level accuracies: 0.625 where CMB gives 0.75 in
``tests/test_exam.py::test_macro_is_cmbs_mean_of_subcategory_means``.) With 400
questions per subcategory, as in CMB-Exam's test set, the two agree. Every output names
its figures and carries their ``definitions``.
"""

from medeval.stats.exam.extract import DEFAULT_LETTERS, METHODS, Extraction, cmb_match_choice, extract_answer
from medeval.stats.exam.files import (Question, answers_from_rows, key_fingerprint, questions_from_rows, read_answers,
                                      read_key, response_sha)
from medeval.stats.exam.render import details_csv, render, summary
from medeval.stats.exam.score import DEFINITIONS, ExamResult, ScoredAnswer, Tally, macro_mean, score_answers, score_files

__all__ = [
    "DEFAULT_LETTERS", "METHODS", "Extraction", "cmb_match_choice", "extract_answer",
    "Question", "answers_from_rows", "key_fingerprint", "questions_from_rows", "read_answers", "read_key", "response_sha",
    "DEFINITIONS", "ExamResult", "ScoredAnswer", "Tally", "macro_mean", "score_answers", "score_files",
    "details_csv", "render", "summary",
]
