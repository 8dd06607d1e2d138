"""GTP's command syntax, shared by the front end (gammago.protocol.gtp) and its analysis commands
(gammago.protocol.gtp_analyze): the failed command's error and its `?` text, the arguments' parsing
(colour, integer, number, how many), and GTP 2.2's preprocessing of an input line."""
from gammago.go.board import parse_color


class GtpError(Exception):
    """A failed command: the message becomes the `? message` reply."""


def _error_text(e):
    """The `?` message for an exception: a GtpError's own text, else what failed."""
    if isinstance(e, GtpError):
        return str(e)
    return f"internal error: {type(e).__name__}: {e}"


# --- argument parsing helpers ----------------------------------------------------------------
def _color(text):
    try:
        return "b" if parse_color(text) == 1 else "w"
    except ValueError:
        raise GtpError(f"invalid color {text!r}") from None


def _int(text, what):
    try:
        return int(text)
    except (TypeError, ValueError):
        raise GtpError(f"syntax error: {what} is not an integer: {text!r}") from None


def _float(text, what):
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise GtpError(f"syntax error: {what} is not a number: {text!r}") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise GtpError(f"syntax error: {what} is not a finite number: {text!r}")
    return v


def _nargs(args, lo, hi=None, usage=""):
    hi = lo if hi is None else hi
    if not lo <= len(args) <= hi:
        raise GtpError(f"syntax error: usage: {usage}")


def _preprocess(raw):
    """GTP 2.2: drop control characters but HT and LF, cut comments, HT -> space, strip."""
    line = "".join(ch for ch in raw if ch in "\t\n" or (ord(ch) >= 32 and ord(ch) != 127))
    line = line.split("#", 1)[0].replace("\t", " ")
    return line.strip()
