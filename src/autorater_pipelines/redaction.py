r"""Keep credentials out of error messages, logs and outputs: one redaction function.

A server that echoes the API key it received in its error body (several do, e.g. "API key not valid:
AIza…") would otherwise put the key into ``judgments.jsonl``, ``error_messages.jsonl``, ``report.html``
and the terminal. Servers do not always echo it as sent, so :func:`redact` replaces, in any text:

- every credential value this process knows: the values of environment variables whose names say they
  hold one (``*API_KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, e.g. ``GEMINI_API_KEY``,
  ``OPENAI_API_KEY``) and values registered with :func:`register_secret` (a key passed as a parameter) —
  in any letter case (``SK-ABC…``, ``sk-abc…``), and with any of its characters that are not ASCII
  letters or digits written percent-encoded (``%2F``, ``%2b``, ``+`` for a space, double-encoded
  ``%252F``), JSON- or Python-escaped (``\/``, ``\"``, ``\u002b``, backslashes doubled by up to three
  levels of nesting) or as HTML character references (``&amp;``, ``&#43;``), as reports and JSON bodies
  spell them;
- the base64 of a text containing it (``Authorization: Basic base64(user:key)``): the whole base64 token;
- the same broken over lines (wrapped text): a line break (``\n``, ``\r\n``, raw or JSON-escaped, then
  indentation) or one space may stand between any two of its characters;
- a prefix of at least :data:`MIN_PREFIX_LENGTH` characters of it cut off by an ellipsis (``...``, ``…``,
  ``***``), a word saying so (``(truncated)``, ``[truncated]``, ``<cut>``, "shortened", "elided", "omitted")
  or the end of a line, and a prefix of at least :data:`MIN_BARE_PREFIX_LENGTH` characters followed by
  anything at all (prefixes are matched up to 900 characters), as servers that shorten keys show them, and
  likewise a suffix of at least :data:`MIN_PREFIX_LENGTH` characters after an ellipsis or of at least
  :data:`MIN_BARE_PREFIX_LENGTH` after anything;
- the hexadecimal of its UTF-8 bytes (any case), or of a prefix of at least
  :data:`MIN_BARE_PREFIX_LENGTH` bytes of it;
- bearer tokens (``Authorization: Bearer …``; outside an ``Authorization`` header, a word of fewer than 20
  letters after "bearer" is a word, as in "the bearer should sign"), ``Basic`` credentials that decode to
  ``user:password``, ``key=``/``token=``/``access_token=`` URL parameters, passwords in URLs
  (``https://user:password@host``, e.g. a ``base_url`` parameter), and values in the shapes of Google API
  keys (``AIza…``), Google OAuth access tokens (``ya29.…``) and OpenAI keys (``sk-…``).

Values shorter than :data:`MIN_SECRET_LENGTH` characters and values made only of digits are not treated as
secrets: a real key is never that short, and replacing ``false``, a port or a count such as
``MAX_TOKENS=100000000`` would mangle ordinary text and numbers. Letters and digits are matched in any case,
and as ``\u0054`` or ``&#84;`` (an encoder that escapes every character), never percent-encoded, so
ordinary words are only replaced when they are a known secret.

Known secrets are matched with one RE2 pattern compiled once per set of secrets, and the shapes are found
with a second one: linear in the length of the text, whatever it holds (``benchmarks/redaction_worst_case.py``).
Redaction is applied where errors are recorded (every
:class:`autorater_pipelines.models.ModelError` message), where outputs are written (the JSON/JSONL writers
of :mod:`autorater_pipelines.io`, the HTML report), where the CLI prints errors and logs
(:class:`RedactionFilter`) and where ``autorater run`` copies the pipeline's output.
"""

from __future__ import annotations

import base64
import binascii
import functools
import logging
import os
import re
import string
from collections.abc import Callable
from typing import Any

__all__ = [
    "MIN_BARE_PREFIX_LENGTH",
    "MIN_PREFIX_LENGTH",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "RedactionFilter",
    "known_secrets",
    "redact",
    "redact_value",
    "redactor",
    "register_secret",
]

REDACTED = "[REDACTED]"
"""What a credential is replaced with."""

MIN_SECRET_LENGTH = 8
"""Shorter values (``"x"``, ``"false"``, a port…) are not treated as secrets: replacing them would mangle text."""

MIN_PREFIX_LENGTH = 12
"""A secret's prefix followed by an ellipsis is replaced from this many characters on (``sk-abc...`` stays)."""

MIN_BARE_PREFIX_LENGTH = 16
"""A secret's prefix of this many characters is replaced whatever follows it (a 16-character run of a key is
never ordinary text; 12 to 15 characters need a cut mark after them)."""

_MAX_PREFIX_LENGTH = 900  # prefixes are matched up to this length (nested groups; RE2 may cap nesting at 1000)
_DENSE_WINDOWS = 128
"""Secrets up to this long have a middle run at every offset; longer ones (OAuth tokens, JWTs) every
:data:`_WINDOW_STRIDE` characters, each taking up to ``stride - 1`` characters before it: a middle part of
``16 + stride - 1`` characters or more is still replaced whole, and the pattern (compiled once per process)
stays small."""
_WINDOW_STRIDE = 8

_CREDENTIAL_NAME = re.compile(r"API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_?KEY", re.IGNORECASE)
_NOT_SECRETS = {"not-needed", "emulator"}  # placeholders this package itself sends to local endpoints
_SHAPES = re.compile(
    r"(?P<bearer>(?i:bearer)\s+)(?P<token>[^\s\"'<>\\,;()\[\]]{4,})"
    r"|(?P<basic>(?i:basic)\s+)(?P<b64>[A-Za-z0-9+/]{8,}={0,2})"
    r"|(?P<prefix>[?&](?:key|api_key|access_token|token)=)[^\s&\"'<>\\@/]{4,}"
    r"|(?P<userinfo>://[^/\s:@]+:)[^\s&\"'<>\\@/]{4,}@"  # a password in a URL, never a port
    r"|\bAIza[0-9A-Za-z_\-]{30,}"
    r"|\bya29\.[0-9A-Za-z_.\-]{10,}"
    r"|\bsk-[A-Za-z0-9_\-]{20,}",
    re.ASCII,  # \s and \b as RE2 reads them
)
"""Credential shapes, whoever's they are. RE2 finds them (:func:`_shapes_scan`); Python's engine reads the
groups of each match it found, anchored there (RE2's binding costs ~40 µs per match with groups)."""
_registered: set[str] = set()


def _is_secret(value: str) -> bool:
    return len(value) >= MIN_SECRET_LENGTH and not value.isdigit() and value not in _NOT_SECRETS


def register_secret(value: Any) -> None:
    """Treat ``value`` as a credential from now on (e.g. an API key given as a parameter)."""
    if isinstance(value, str) and _is_secret(value.strip()):
        _registered.add(value.strip())


def known_secrets() -> list[str]:
    """Every credential value known now, longest first (so a key containing another is replaced whole)."""
    values = set(_registered)
    for name, value in os.environ.items():
        if _CREDENTIAL_NAME.search(name) and _is_secret(value.strip()):
            values.add(value.strip())
    return sorted(values, key=lambda v: (-len(v), v))


# --- the spellings of one secret, as RE2 patterns ------------------------------------------------------------

_ALNUM = frozenset(string.ascii_letters + string.digits)
_URL_SAFE = _ALNUM | frozenset("-._~")
_HTML_NAMES = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos"}
_BREAK = r"(?:(?:\r?\n|\\{1,8}(?:r\\{1,8})?n)[ \t]*|[ \-\x{ad}\x{200b}-\x{200d}\x{2060}\x{feff}]|\\{1,8}u200b)?"
r"""An optional break inside a secret: a line break of wrapped text (``\n`` or ``\r\n``, raw or JSON-escaped with
backslashes doubled by nesting, then indentation); one space (a key spelled out ``T q 8 X``); one hyphen (a key
in dashed groups ``Tq8X-v3Jm-…``); or one invisible character (soft hyphen, zero-width space, (non-)joiner, word
joiner, BOM: U+200B every few characters; a zero-width space JSON-escaped too)."""
_RAW_BREAK = r"(?:\r?\n[ \t]*|[ \-\x{ad}\x{200b}-\x{200d}\x{2060}\x{feff}])?"
""":data:`_BREAK` as text shows it (no JSON escapes): between the characters of a middle part of a secret."""
_CUT_WORDS = r"[ \t]{0,3}[(\[<{]?[ \t]{0,3}(?:truncat\w*|shortened|cut|elided|omitted|abbreviated)\b[)\]>}]?"


def _literal(char: str) -> str:
    """``char`` as an RE2 literal."""
    if char in _ALNUM:
        return char
    if char in string.punctuation:
        return "\\" + char
    return f"\\x{{{ord(char):x}}}"


def _char_forms(char: str) -> str:
    """RE2 pattern for one character of a secret in every spelling an echo may give it (module docstring)."""
    if char in _ALNUM:  # escaped only by an encoder that escapes every character
        return f"(?:{char}|\\\\{{1,8}}u00{ord(char):02X}|&#0*{ord(char)};|&#x0*{ord(char):X};)"
    forms = [_literal(char)]
    if char == "\\":
        forms = ["\\\\{1,8}"]  # escaped once, twice (JSON in a repr), three times (a JSONL line of it)
    elif char in "/\"'":
        forms = ["\\\\{0,7}" + _literal(char)]
    if char not in _URL_SAFE:
        forms.append("".join(f"%(?:25)?{byte:02X}" for byte in char.encode("utf-8")))
    if char == " ":
        forms.append("\\+")
    units = [ord(char)] if ord(char) < 0x10000 else _surrogates(ord(char))
    forms.append("".join(f"\\\\{{1,8}}u{unit:04X}" for unit in units))
    forms.append(f"&#0*{ord(char)};|&#x0*{ord(char):X};")
    if char in _HTML_NAMES:
        forms.append(f"&{_HTML_NAMES[char]};")
    return "(?:" + "|".join(forms) + ")"


def _cut_mark() -> str:
    """What shows that a server cut a secret off: an ellipsis, ``***``, a word ("(truncated)"), a line's end."""
    return "|".join([r"\.{3}", r"\*{3,}", "&hellip;", _char_forms("\u2026"), _CUT_WORDS, "(?m:$)"])


def _surrogates(code: int) -> list[int]:
    code -= 0x10000
    return [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]


def _prefix_forms(atoms: list[str]) -> list[str]:
    """A prefix of a secret as servers that shorten keys show it (module docstring).

    :data:`MIN_PREFIX_LENGTH` characters or more then a cut mark (an ellipsis, a word such as "(truncated)",
    the end of a line), or :data:`MIN_BARE_PREFIX_LENGTH` characters or more then anything.
    """
    if len(atoms) <= MIN_PREFIX_LENGTH:
        return []  # the whole secret is matched anyway
    last = min(len(atoms) - 1, _MAX_PREFIX_LENGTH)
    short = _optional_chain(atoms[MIN_PREFIX_LENGTH : min(last, MIN_BARE_PREFIX_LENGTH)])
    forms = [short + f"(?:{_cut_mark()})"]
    if len(atoms) > MIN_BARE_PREFIX_LENGTH:
        bare = _BREAK.join(atoms[MIN_PREFIX_LENGTH:MIN_BARE_PREFIX_LENGTH])
        forms.append(bare + _optional_chain(atoms[MIN_BARE_PREFIX_LENGTH:last]) + f"(?:{_cut_mark()})?")
    return [_BREAK.join(atoms[:MIN_PREFIX_LENGTH]) + "(?:" + "|".join(forms) + ")"]


def _suffix_forms(atoms: list[str]) -> list[str]:
    """A suffix of a secret, as servers that shorten keys from the left show it.

    :data:`MIN_PREFIX_LENGTH` characters or more after an ellipsis (``...Vb4Tg6Jy``), or
    :data:`MIN_BARE_PREFIX_LENGTH` characters or more after anything.
    """
    count = len(atoms)
    if count <= MIN_PREFIX_LENGTH:
        return []
    short = _optional_left_chain(atoms[max(1, count - MIN_BARE_PREFIX_LENGTH + 1) : count - MIN_PREFIX_LENGTH])
    ellipsis = "|".join([r"\.{3}", r"\*{3,}", "&hellip;", _char_forms("\u2026")])
    forms = [f"(?:{ellipsis})[ \t]?{short}" + _BREAK.join(atoms[count - MIN_PREFIX_LENGTH :])]
    if count > MIN_BARE_PREFIX_LENGTH:
        longer = _optional_left_chain(atoms[max(1, count - _MAX_PREFIX_LENGTH) : count - MIN_BARE_PREFIX_LENGTH])
        forms.append(longer + _BREAK.join(atoms[count - MIN_BARE_PREFIX_LENGTH :]))
    return forms


def _optional_left_chain(atoms: list[str], separator: str = _BREAK) -> str:
    """``atoms`` as nested optional groups: the longest run of them up to the last one (maybe none)."""
    optional = ""
    for atom in atoms:
        optional = f"(?:{optional}{atom}{separator})?"
    return optional


def _optional_chain(atoms: list[str], separator: str = _BREAK) -> str:
    """``atoms`` as nested optional groups: the longest run of them from the first one on (maybe none)."""
    optional = ""
    for atom in reversed(atoms):
        optional = f"(?:{separator}{atom}{optional})?"
    return optional


def _hex_forms(secret: str) -> str:
    """The hex of ``secret``'s UTF-8 bytes, or of a prefix of at least :data:`MIN_BARE_PREFIX_LENGTH` bytes.

    Any letter case: the pattern ignores it.
    """
    digits = list(secret.encode("utf-8").hex())
    bare = 2 * MIN_BARE_PREFIX_LENGTH
    if len(digits) <= bare:
        return _BREAK.join(digits)
    return _BREAK.join(digits[:bare]) + _optional_chain(digits[bare : min(len(digits), 2 * _MAX_PREFIX_LENGTH)])


def _base64_cores(secret: str) -> set[str]:
    """The base64 characters that encode ``secret`` wherever it stands in the encoded text.

    Base64 turns 3 bytes into 4 characters, so the encoding of ``secret`` depends on its offset modulo 3
    in the encoded text; for each offset, the characters made only of the secret's bits are the same
    whatever surrounds it (the first and last characters, mixed with neighbouring bytes, are left out).
    """
    data = secret.encode("utf-8")
    cores = set()
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + data).decode("ascii")
        core = encoded[-(-4 * pad // 3) : 8 * (pad + len(data)) // 6]
        if len(core) >= MIN_SECRET_LENGTH:
            cores.update({core, core.replace("+", "-").replace("/", "_")})
    return cores


def _base64_forms(core: str) -> str:
    forms = {"+": r"(?:\+|%2[Bb])", "/": r"(?:\\{0,7}/|%2[Ff])", "-": r"\-"}
    return "".join(forms.get(char, char) for char in core)


def _re2(pattern: str) -> Any:
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20  # many secrets with punctuation make a large program
    return re2.compile(pattern, options)


def _window_forms(atoms: list[str], grow: bool = False) -> list[str]:
    """Every run of :data:`MIN_BARE_PREFIX_LENGTH` characters inside a secret (neither a prefix nor a suffix).

    A longer middle part (``key[4:28]``) is covered by overlapping runs: :func:`_known` grows a run's match over
    the runs that overlap it (:func:`_window_pattern`, ``grow``: each run then takes up to as many characters
    again, so a part grows by that many per step), and the whole part is replaced.
    """
    width = MIN_BARE_PREFIX_LENGTH
    last = min(len(atoms), _MAX_PREFIX_LENGTH) - width  # the run starting there is a suffix: matched already
    stride = 1 if len(atoms) <= _DENSE_WINDOWS else _WINDOW_STRIDE
    return [
        (_optional_left_chain(atoms[max(1, k - stride + 1) : k], _RAW_BREAK) if stride > 1 else "")
        + _RAW_BREAK.join(atoms[k : k + width])
        + (_optional_chain(atoms[k + width : k + 2 * width], _RAW_BREAK) if grow else "")
        for k in range(stride if stride > 1 else 1, last, stride)
    ]


def _plain_atoms(secret: str) -> list[str]:
    """The characters of ``secret`` as written or percent-encoded: the spellings of a middle part.

    A server showing part of a key writes it as text; the rarer escaped spellings are matched for whole keys,
    prefixes and suffixes. This keeps the pattern of every middle run small.
    """
    atoms = []
    for char in secret:
        forms = [_literal(char)]
        if char not in _URL_SAFE:
            forms.append("".join(f"%(?:25)?{byte:02X}" for byte in char.encode("utf-8")))
        atoms.append(forms[0] if len(forms) == 1 else "(?:" + "|".join(forms) + ")")
    return atoms


@functools.lru_cache(maxsize=16)
def _known_pattern(secrets: tuple[str, ...]) -> Any:
    """One RE2 pattern matching every spelling of every secret.

    Group 1 (``b64``) marks a base64 match, group 2 (``w``) a run inside a secret (:func:`_window_forms`).
    """
    if not secrets:
        return None
    spelled: list[str] = []
    windows: list[str] = []
    cores: set[str] = set()
    for secret in secrets:  # longest first: a secret containing another is replaced whole
        atoms = [_char_forms(char) for char in secret]
        spelled.append(_BREAK.join(atoms))
        spelled += _prefix_forms(atoms) + _suffix_forms(atoms)
        spelled.append(_hex_forms(secret))
        windows += _window_forms(_plain_atoms(secret))
        cores |= _base64_cores(secret)
    b64 = "|".join(_base64_forms(core) for core in sorted(cores, key=lambda c: (-len(c), c)))
    never = r"\b\B"  # RE2 has no (?!): a word boundary that is not one keeps an empty group numbered
    return _re2(
        f"(?i:{'|'.join(spelled)})" + f"|(?P<b64>{b64 or never})" + f"|(?P<w>(?i:{'|'.join(windows) or never}))"
    )


@functools.lru_cache(maxsize=16)
def _window_pattern(secrets: tuple[str, ...]) -> Any:
    """The runs of :func:`_window_forms` of every secret alone: how :func:`_known` grows a run's match."""
    windows = [w for secret in secrets for w in _window_forms(_plain_atoms(secret), grow=True)]
    return _re2(f"(?i:{'|'.join(windows)})") if windows else None


@functools.lru_cache(maxsize=1)
def _shapes_scan() -> Any:
    return _re2(re.sub(r"\(\?P<\w+>", "(?:", _SHAPES.pattern))


_SHAPES_BYTES = re.compile(_SHAPES.pattern.encode("ascii"))
_BASE64_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")
_REDACTED = REDACTED.encode("ascii")
_Replace = Callable[[Any, int], tuple[int, int, bytes]]


def _substitute(pattern: Any, data: bytes, replace: _Replace) -> bytes:
    """``data`` with each match of ``pattern`` replaced by ``replace(match, end of the last replacement)``.

    ``replace`` gives the span to replace (it may grow the match) and the new bytes; a match inside a span
    already replaced extends it. One pass. Bytes, not str: RE2's binding maps every match of a str back to
    character offsets, which costs time in proportion to the whole text (quadratic over many matches).
    """
    pieces: list[bytes] = []
    last = 0
    for match in pattern.finditer(data):
        start, end, new = replace(match, last)
        if start < last:
            last = max(last, end)
            continue
        pieces += [data[last:start], new]
        last = end
    if not pieces:
        return data
    pieces.append(data[last:])
    return b"".join(pieces)


_GROW_BYTES = 1024
"""How far past a run's match the next overlapping run may end (16 characters in their longest spellings)."""


def _grown(windows: Any, data: bytes, start: int, end: int) -> int:
    """The end of a run inside a secret once grown over every run that overlaps it (a longer middle part).

    Each step looks for the first run that starts in the last :data:`MIN_BARE_PREFIX_LENGTH` bytes of the span
    (it overlaps) and ends beyond it: about one step per 16 characters of the part.
    """
    while True:
        since = max(start + 1, end - MIN_BARE_PREFIX_LENGTH)
        found = windows.search(data, since, min(len(data), end + _GROW_BYTES))
        if found is None or found.start() >= end or found.end() <= end:
            return end
        start, end = found.span()


def _known(match: Any, last: int, windows: Any = None) -> tuple[int, int, bytes]:
    """A known secret's span; a base64 match grows to its whole base64 token, a run inside it over its neighbours."""
    start, end = match.span()
    if match.group(2) is not None and windows is not None:  # group "w"
        end = _grown(windows, match.string, start, end)
    if match.group(1) is not None:  # group "b64"
        data = match.string
        while start > last and data[start - 1] in _BASE64_CHARS:
            start -= 1
        end = max(end, last)
        while end < len(data) and data[end] in _BASE64_CHARS:
            end += 1
        while end < len(data) and data[end] == ord("="):
            end += 1
    return start, end, _REDACTED


def _shape(found: Any, last: int) -> tuple[int, int, bytes]:
    start, end = found.span()
    match = _SHAPES_BYTES.match(found.string, start)
    if match is None or match.end() != end:  # the engines disagree: keep the text
        return start, end, found.group(0)
    group = match.group
    if group("bearer") is not None:
        token = group("token")
        header = b"authorization" in found.string[max(0, start - 24) : start].lower()
        if token.isalpha() and len(token) < 20 and not header:  # "the bearer should…": a word, not a token
            return start, end, match.group(0)
        return start, end, group("bearer") + _REDACTED
    if group("basic") is not None:
        keep = not _is_basic_credential(group("b64"))
        return start, end, match.group(0) if keep else group("basic") + _REDACTED
    if group("userinfo") is not None:
        return start, end, group("userinfo") + _REDACTED + b"@"
    return start, end, (group("prefix") or b"") + _REDACTED


def _is_basic_credential(value: bytes) -> bool:
    """``base64(user:password)``, as an ``Authorization: Basic`` header carries it."""
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


def redactor() -> Callable[[str], str]:
    """A redaction function for the credentials known now: build it once, apply it to many texts."""
    secrets = tuple(known_secrets())
    pattern = _known_pattern(secrets)
    known = functools.partial(_known, windows=_window_pattern(secrets)) if pattern is not None else _known

    def apply(text: str) -> str:
        data = original = text.encode("utf-8", "surrogatepass")
        if pattern is not None:
            data = _substitute(pattern, data, known)
        data = _substitute(_shapes_scan(), data, _shape)
        return text if data is original else data.decode("utf-8", "surrogatepass")

    return apply


def redact(text: str) -> str:
    """``text`` with every known credential replaced by :data:`REDACTED` (see the module docstring)."""
    if not isinstance(text, str) or not text:
        return text
    return redactor()(text)


def redact_value(value: Any, apply: Callable[[str], str] | None = None) -> Any:
    """:func:`redact` every string inside ``value`` (dicts, lists and tuples are copied, other values kept)."""
    apply = apply or redactor()
    if isinstance(value, str):
        return apply(value)
    if isinstance(value, dict):
        return {k: redact_value(v, apply) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v, apply) for v in value)
    return value


class RedactionFilter(logging.Filter):
    """A logging filter that redacts each record's message and traceback (install it on a handler)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite ``record`` redacted; never drops it."""
        message = record.getMessage()
        redacted = redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True
