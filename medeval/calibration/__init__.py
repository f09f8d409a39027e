"""Calibration: clinicians' grades turned into cut-offs (calibrate, publish), clinicians vs machine
(validation), and the live tuning workspace of the Tune cut-offs page.

Layer rules: see the docstring of ``medeval``."""
