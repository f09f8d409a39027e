"""The scoring engine: aspects, tokenizer, post-processing, metrics, embeddings, import, scoring,
versioned threshold sets and tiers, the paper's total score and level.

Layer rules: see the docstring of ``medeval``."""
