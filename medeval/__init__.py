"""medeval: align automated evaluation of medical LLMs with clinicians' judgement.

A library (no Streamlit import) with storage, import, post-processing, metrics,
grading and reporting; the command line is ``python -m medeval``.
"""

__version__ = "0.1.0"
