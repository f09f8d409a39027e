"""The web layer: sign-in routes (Starlette, no Streamlit) and the helpers the Streamlit pages share.

All data access and every permission check live in ``medeval``; this package only
turns HTTP requests and Streamlit reruns into calls to it.
"""

COOKIE_NAME = "medeval_session"
SIGNIN_PATH = "/signin"
SIGNOUT_PATH = "/signout"
LANGUAGE_COOKIE = "medeval_language"  # the sign-in page's language choice, before anyone is signed in
