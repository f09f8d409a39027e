"""Every page of the web app declared once: its script, title, icon, URL, the action it needs and its layout.

``app.py`` builds each role's navigation from :data:`PAGES` (in this order, the pages whose action the role may
take: :func:`for_role`), a page checks its own action at the top (``ui.require_page("grade")``) and
``webui.page.WIDE_PAGES`` is derived from the layouts. Who may take an action is declared in
``medeval.accounts.policy``, and the library checks it again, so a hidden page is never the only guard.
No Streamlit here: tests read the table without running the app.
"""

from __future__ import annotations

from dataclasses import dataclass

from medeval.accounts import policy
from medeval.core.i18n import N_


@dataclass(frozen=True)
class Page:
    script: str  # the page script, relative to the repository root
    title: str  # English, marked for the catalogue: shown as _(title)
    icon: str
    url_path: str
    action: str  # a medeval.accounts.policy action
    # "wide": researchers' and admins' tables and charts; "reading": a work screen whose texts an answer rests on --
    # the whole width, the sidebar folded away at first (one click opens it), so a long text is whole on screen;
    # "centered": pages of prose (Help)
    layout: str

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles that may open it (empty: anyone signed in)."""
        return policy.roles_for(self.action)


# In navigation order: each role sees the pages it may open, in this order (its first page is its home).
PAGES: tuple[Page, ...] = (
    Page("app_pages/users.py", N_("Users & audit"), ":material/manage_accounts:", "users", "users.manage", "wide"),
    Page("app_pages/campaigns.py", N_("Campaigns"), ":material/monitoring:", "campaigns", "campaign.read", "wide"),
    Page("app_pages/dashboard.py", N_("Agreement"), ":material/insights:", "agreement", "reports.read", "wide"),
    Page("app_pages/adjudicate.py", N_("Adjudicate"), ":material/gavel:", "adjudicate", "adjudicate", "reading"),
    Page("app_pages/tuning.py", N_("Tune cut-offs"), ":material/tune:", "tuning", "thresholds.tune", "wide"),
    Page("app_pages/leaderboard.py", N_("Leaderboard"), ":material/leaderboard:", "leaderboard", "reports.read", "wide"),
    Page("app_pages/task_results.py", N_("Task results"), ":material/analytics:", "task-results", "campaign.read", "wide"),
    Page("app_pages/exam.py", N_("Exam results"), ":material/fact_check:", "exam", "exam.review", "wide"),
    Page("app_pages/new_campaign.py", N_("New campaign"), ":material/add_task:", "new-campaign", "campaign.create", "wide"),
    Page("app_pages/new_task.py", N_("New task"), ":material/playlist_add:", "new-task", "campaign.create", "wide"),
    Page("app_pages/grade.py", N_("Grade"), ":material/task_alt:", "grade", "grade", "reading"),
    Page("app_pages/annotate.py", N_("Rate & compare"), ":material/rate_review:", "annotate", "task.answer", "reading"),
    Page("app_pages/help.py", N_("Help"), ":material/help:", "help", "help.read", "centered"),
)
BY_URL = {p.url_path: p for p in PAGES}
LAYOUTS = ("wide", "reading", "centered")
for _p in PAGES:  # a typo in the table fails at import, not when someone opens the page
    policy.get(_p.action)
    if _p.layout not in LAYOUTS:
        raise ValueError(f"page {_p.url_path!r}: the layout is one of {LAYOUTS}, not {_p.layout!r}")


def get(url_path: str) -> Page:
    """The page at ``url_path``; a name not in :data:`PAGES` is a programming error, said clearly."""
    try:
        return BY_URL[url_path]
    except KeyError:
        raise KeyError(f"no page {url_path!r} in webui.pages.PAGES (known: {', '.join(BY_URL)})") from None


def for_role(role: str) -> list[Page]:
    """The pages a user of ``role`` may open, in navigation order."""
    return [p for p in PAGES if not p.roles or role in p.roles]


WIDE_PAGES = frozenset(p.url_path for p in PAGES if p.layout in ("wide", "reading"))
READING_PAGES = frozenset(p.url_path for p in PAGES if p.layout == "reading")
