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
"本題選D" and "答案為B" read as "本题选D", "答案为B") and full-width letters into ASCII (NFKC: "答案：Ｂ"), drops
markdown emphasis (``**B**``), then reads:

1. The **choices the response commits to**, in the order of the text: explicit answers ("答案：D", "正确答案是 B、D",
   "故选C", "The answer is (B)", "the correct answers are B and D", "answer: b" -- lower case only after an English
   phrase, never the article "a"), stated final choices ("更倾向于B", "首选D" -- not "备选B" --, "排除A、B、C后，只剩D",
   "I lean towards D", "which leaves D"), plain choices ("我选B", "应该选C", "改选C", "更正为C", "I would choose C",
   "I'd go with B"), the letters the response starts with ("B", "B. 急性阑尾炎", "(B)", "ABD", "A、B和D") and a line
   that holds nothing but letters after a heading or a preamble ("### 答案\n**B**"). A choice spoken of is not
   made: "选A的理由", "如果选A，……", "……则应选D", "误选A", "很多考生选A", "也可选择C", "Some might choose A".
   **The last committed choice wins**: a choice after a revision word (不对, 等等, 重新考虑, 复核, 再想想, 更正, 改选,
   仔细看, 其实, actually, on second thought, wait, Hmm, "No,", re-reading ...) replaces every choice before it, and
   a final answer ("最终答案", "final answer") replaces earlier plain ones; after a revision word a concluding
   statement counts as a choice too ("不对，C才是正确答案", "I think C is more appropriate"). Two different choices
   with nothing between them that settles which stands are ``ambiguous`` ("The answer is B. I would choose C."; two
   final answers that disagree), whatever their wording -- never the first or the strongest silently.
   A choice followed by 吧 or a question mark ("是B吧？", "选C?", "答案是A吗？") is a **hedge**, not a commitment
   ("那就选B吧。" is a decision): alone it is ``ambiguous``; a later firm choice wins over it; a revision that ends in
   a hedge ("答案是A。等等，是C吧？") is ``ambiguous``; without a revision word the committed choice stands ("答案是A，
   也可能是C吧？").
2. ``statement`` -- per-option statements: "B项正确", "D选项符合", "Option C is correct" (minus options declared
   wrong).
3. ``single_letter`` -- exactly one option letter standing on its own in the text (a letter offered as a
   possibility, "也可能是B", "maybe D", is a hedge); for a multiple-answer question also one list introduced in a
   sentence ("可引起发热的是A、B、D").
4. ``option_text`` -- no letter, but the text of exactly one option is quoted.

The method of a committed choice is ``answer_phrase``, or ``leading`` for the letters a line holds alone.

A **list of letters** is read whole in any separator style: "ABD", "A、B、D", "A,B,D", "A B D" (spaces only:
"答案 B C E"), "A和C", "A and C", "A, C and D", "答案：A，B，因为……". For a single-answer question (``multi=False``,
from the key's ``question_type``) a list is ``ambiguous``, never its first letter; without a question type the letters
are read as written and compared as a set. Options echoed back before the answer ("A. 高血压 B. 糖尿病 C. 冠心病")
are not choices.

Letters are only read as options when they stand alone: not inside words or
abbreviations (CT, ECG, DNA, COPD, HBeAg, CD4), not as terms (B超, A型, C反应蛋白,
维生素D, D-二聚体), not the English article "A", and a run of several letters
("ABD") only when they are distinct and in order (so "ECG" is never E, C, G).
A letter that is ruled out ("不选A", "A是错误的", "排除C", "not B") does not count as
chosen.

Where the response does not determine the choice the reading is ``ambiguous`` with a
reason (``Extraction.note``) and the letters it names (``candidates``), never a guessed
letter: several letters with nothing to decide between them ("Both A and C are
possible", "A和B都有可能"), alternatives ("答案是B或C", "A or B", "A还是C？"), choices that conflict with no revision
between them, a hedge, a list for a single-answer question, or a non-empty response that names no option at all.
CMB's regex takes the first capital letter in these cases. An ambiguous answer counts as wrong in
``accuracy_ambiguous_wrong``; a person may settle it (``medeval exam-review``, the Exam results page), and
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
