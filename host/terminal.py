"""Text from outside (a board, a socket peer, a model's names) made safe for a terminal.

A board or a model is untrusted input: a control character in a record's message, a category
name or a tensor name could clear the screen, set the window title, write the clipboard (OSC
52), reorder text (bidirectional overrides) or forge report lines. `printable` is the one place
such text is escaped before anything prints it: C0 and C1 controls, DEL, format characters
(bidi overrides, zero-width characters), line and paragraph separators and lone surrogates
become visible escapes; every other character, non-ASCII letters included, stays as it is.
"""

from __future__ import annotations

import unicodedata

# Unicode categories escaped: controls, format characters, separators other than the space,
# surrogates, unassigned and private-use code points.
ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn", "Co"})


def _escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _kept(ch: str, keep_newlines: bool) -> bool:
    if ch == " " or (keep_newlines and ch == "\n"):
        return True
    return ch != "\\" and unicodedata.category(ch) not in ESCAPED_CATEGORIES


def printable(text: str, keep_newlines: bool = False) -> str:
    """`text` with every character that could act on a terminal escaped (a backslash too, so
    an escape cannot be forged); newlines kept only with keep_newlines (a console stream)."""
    return "".join(
        ch if _kept(ch, keep_newlines) else "\\\\" if ch == "\\" else _escape(ch) for ch in text
    )
