"""Tables on a page as people read them (the rules are ``medeval.core.display``'s).

:func:`dataframe` is ``st.dataframe`` with: a missing value shown as "—" (Streamlit writes "None"), a column empty
in every row left out, and the shares of the ``percent`` and ``progress`` columns shown as percentages with one
decimal (Streamlit's own "percent" format has two). The rows stay numbers, so a column sorts as numbers.

``times`` are columns of stored moments (ISO 8601 UTC, as the database keeps them) shown as the reader's language
writes a date and time, in the server's time zone; they stay moments, so they sort in time order.

``labels`` names the columns on screen in the reader's language (``{"annotator": N_("annotator")}``, translated
here): the rows keep their keys, so ``percent``, ``progress``, ``column_config`` and a CSV of the same rows
(``webui.page.safe_table``) go on using them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import streamlit as st

from medeval.core import display
from medeval.core import i18n
from medeval.core.i18n import _


def _config(cfg, **kwargs):
    """A column's configuration with ``kwargs`` added, keeping the label, help and width it was given."""
    given = dict(cfg or {})
    return {k: given[k] for k in ("label", "help", "width") if given.get(k) is not None} | kwargs


# moment.js patterns (st.column_config.DatetimeColumn's format) that write what medeval.core.i18n.datetime_text writes
MOMENT_FORMATS = {"zh-CN": "YYYY年M月D日 HH:mm", "en": "MMM D, YYYY, h:mm A"}


def dataframe(rows, *, percent: Iterable[str] = (), progress: Iterable[str] = (), times: Iterable[str] = (),
              column_config: Mapping | None = None, drop_empty: bool = True, labels: Mapping[str, str] | None = None,
              **kwargs):
    """Draw ``rows`` (a list of dicts or a DataFrame) as a table; ``kwargs`` go to ``st.dataframe``. ``labels``:
    each column's header on screen, English marked ``N_()`` (translated here); a column not named keeps its key."""
    import pandas as pd

    if isinstance(rows, Mapping):  # columns: {"name": [values]}
        rows = pd.DataFrame(rows)
    records = rows.to_dict("records") if isinstance(rows, pd.DataFrame) else [dict(r) for r in rows]
    percent, progress, times = tuple(percent), tuple(progress), tuple(times)
    keep = {k for k, c in (column_config or {}).items() if isinstance(c, Mapping) and c.get("type_config", {}).get(
        "type") in ("line_chart", "bar_chart", "area_chart")}  # a chart of no points is still its column
    if drop_empty:
        records = display.drop_empty_columns(records, keep=keep)
    config = dict(column_config or {})
    for col in times:
        given = [r[col] for r in records if r.get(col) not in (None, "")]
        moments = [i18n.local_moment(v) for v in given]
        if not given or None in moments:  # a value that is no time: the column stays the text the records hold
            continue
        for r in records:
            if r.get(col) not in (None, ""):
                r[col] = i18n.local_moment(r[col])
        config[col] = st.column_config.DatetimeColumn(**_config(config.get(col)),
                                                      format=MOMENT_FORMATS[i18n.current()])
    for col in percent + progress:
        for r in records:
            if col in r:
                r[col] = display.percent_points(r[col])
    for col in percent:
        config[col] = st.column_config.NumberColumn(
            **_config(config.get(col)), format=display.PERCENT_FORMAT)
    for col in progress:
        config[col] = st.column_config.ProgressColumn(
            **_config(config.get(col)), format=display.PERCENT_FORMAT, min_value=0, max_value=100)
    kwargs.setdefault("hide_index", True)
    kwargs.setdefault("width", "stretch")
    frame = pd.DataFrame(records, columns=list(dict.fromkeys(k for r in records for k in r))) if records else \
        (rows if isinstance(rows, pd.DataFrame) else pd.DataFrame())
    present = set(frame.columns)
    for col, label in (labels or {}).items():
        given = config.get(col, {})
        if col not in present or given is None:  # (a column hidden on purpose stays hidden)
            continue
        given = {} if isinstance(given, str) else dict(given)
        config[col] = {**given, "label": _(label)}
    return st.dataframe(frame, column_config=config or None, placeholder=display.MISSING, **kwargs)


def with_csv(make_rows: Callable[[], list[dict]], *, key: str, file_name: str, label: str,
             labels: Mapping[str, str] | None = None, **dataframe_args) -> None:
    """``webui.page.safe_table`` for a table whose cells hold words in the reader's language (a status, a kind):
    the table shows ``make_rows()``, the CSV below it (neutralised, :mod:`medeval.core.csvsafe`) the rows made
    again in English, as every data file is. ``labels``: the headers on screen (:func:`dataframe`)."""
    from medeval.core.csvsafe import csv_text
    from medeval.core.i18n import language

    rows = make_rows()
    with language("en"):
        csv_rows = make_rows()
    dataframe(rows, key=key, labels=labels, **dataframe_args)
    st.download_button(label, csv_text(csv_rows), file_name=file_name, mime="text/csv", key=f"{key}_csv",
                       disabled=not rows)
