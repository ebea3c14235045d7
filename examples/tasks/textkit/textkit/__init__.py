"""textkit: read, clean and summarise text the way a small command-line tool needs to.

textkit bundles the pieces most text-processing scripts rewrite every time: decoding bytes
whose encoding is not known in advance, normalising whitespace and line endings, splitting
text into words and sentences, counting and ranking words, and writing reports. It has no
dependencies outside the standard library.

Typical use::

    >>> import textkit
    >>> text = textkit.load("notes.txt")
    >>> textkit.word_counts(text).most_common(3)

Every public function takes and returns plain ``str``, ``bytes``, lists and dicts, so the
pieces can be combined freely. Functions that read files accept a path or an open binary
file. Errors are raised as :class:`TextkitError` with a message that names the input.
"""

__version__ = "2.4.1"
__all__ = [
    "TextkitError",
    "load",
    "normalise",
    "split_words",
    "split_sentences",
    "word_counts",
    "top_words",
    "detect_encoding",
    "strip_bom",
]

import codecs
import collections
import io
import re

from .scanner import Scanner
from .decoder import decode_lenient
from .encoder import encode_report

#: Byte order marks, longest first, so that UTF-32 is not mistaken for UTF-16.
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

#: Words left out of counts unless asked for.
STOP_WORDS = frozenset(
    "a an and are as at be but by for from has have in is it its of on or that the this to was "
    "were will with".split()
)

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_SPACES = re.compile(r"[ \t\f\v]+")
_BLANK_LINES = re.compile(r"\n{3,}")


class TextkitError(ValueError):
    """Raised for input textkit cannot handle; the message names the input."""

    def __init__(self, message, source=None):
        super().__init__(message if source is None else f"{source}: {message}")
        self.source = source


def load(path_or_file, encoding=None):
    """Read a whole file as text.

    The encoding is detected with :func:`detect_encoding` unless one is given. A path is
    opened and closed here; an open binary file is read from its current position and left
    open.
    """
    if hasattr(path_or_file, "read"):
        data = path_or_file.read()
        source = getattr(path_or_file, "name", "<file>")
    else:
        with open(path_or_file, "rb") as handle:
            data = handle.read()
        source = str(path_or_file)
    if not isinstance(data, bytes):
        raise TextkitError("expected a binary file", source)
    if encoding is None:
        encoding = detect_encoding(data)
    data = strip_bom(data)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        return decode_lenient(data, encoding)


def normalise(text, keep_blank_lines=1):
    """Unify line endings, collapse runs of spaces, and trim each line.

    ``keep_blank_lines`` is the most blank lines kept in a row (1 keeps paragraphs apart).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    text = "\n".join(lines).strip("\n")
    if keep_blank_lines < 1:
        return "\n".join(line for line in text.split("\n") if line)
    limit = "\n" * (keep_blank_lines + 1)
    return _BLANK_LINES.sub(limit, text)


def split_words(text, lower=True):
    """The words of ``text``: runs of letters, with an apostrophe inside a word kept."""
    words = _WORD.findall(text)
    if lower:
        words = [word.lower() for word in words]
    return words


def split_sentences(text):
    """Split ``text`` into sentences at ., ! or ? followed by a capital or a digit."""
    text = normalise(text, keep_blank_lines=0).replace("\n", " ")
    if not text:
        return []
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def word_counts(text, stop_words=STOP_WORDS):
    """A :class:`collections.Counter` of the words of ``text``, stop words left out."""
    counts = collections.Counter(split_words(text))
    for word in stop_words or ():
        counts.pop(word, None)
    return counts


def top_words(text, n=10, stop_words=STOP_WORDS):
    """The ``n`` most frequent words as ``(word, count)`` pairs, ties in order of first use."""
    counts = word_counts(text, stop_words)
    order = {}
    for index, word in enumerate(split_words(text)):
        order.setdefault(word, index)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], order[item[0]]))
    return ranked[:n]


def scan(text, patterns):
    """Run a :class:`Scanner` over ``text`` and return every ``(name, match)`` it finds."""
    scanner = Scanner(patterns)
    return list(scanner.scan(text))


def report(text, path=None, n=10):
    """A short report on ``text``: its size, its sentences and its top words.

    With ``path`` the report is also written there, encoded with :func:`encode_report`.
    """
    lines = [
        f"characters: {len(text)}",
        f"words: {len(split_words(text))}",
        f"sentences: {len(split_sentences(text))}",
        "top words:",
    ]
    for word, count in top_words(text, n):
        lines.append(f"  {word}: {count}")
    summary = "\n".join(lines) + "\n"
    if path is not None:
        with open(path, "wb") as handle:
            handle.write(encode_report(summary))
    return summary


def strip_bom(data):
    """``data`` without a leading byte order mark, if it has one."""
    for bom, _ in BOMS:
        if data.startswith(bom):
            return data[len(bom):]
    return data


def guess_language(text):
    """A rough guess of the language of ``text`` from its most common short words.

    Only English, German and French are told apart; anything else is ``None``. This is a
    heuristic for choosing stop words, not a language detector.
    """
    markers = {
        "en": {"the", "and", "is", "of", "to"},
        "de": {"der", "die", "und", "ist", "nicht"},
        "fr": {"le", "la", "et", "est", "les"},
    }
    words = collections.Counter(split_words(text))
    scores = {lang: sum(words[w] for w in marks) for lang, marks in markers.items()}
    best = max(scores, key=scores.get)
    return best if scores[best] > 0 else None


def wrap(text, width=79):
    """Re-wrap each paragraph of ``text`` to ``width`` columns, keeping blank lines between them."""
    paragraphs = normalise(text).split("\n\n")
    wrapped = []
    for paragraph in paragraphs:
        line = ""
        lines = []
        for word in paragraph.split():
            if line and len(line) + 1 + len(word) > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        if line:
            lines.append(line)
        wrapped.append("\n".join(lines))
    return "\n\n".join(wrapped)


def detect_encoding(data, default="utf-8"):
    """The encoding of ``data``: from its byte order mark, else UTF-8 if it decodes, else
    cp1252 if it decodes, else ``default``.

    Only the first 64 KiB are examined, so the answer for a huge file comes quickly; a file
    whose first non-ASCII byte lies past that point is reported as UTF-8.
    """
    for bom, name in BOMS:
        if data.startswith(bom):
            return name
    sample = data[:65536]
    try:
        sample.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as error:
        # A sequence cut at the end of the sample is not an error in the file.
        if error.start >= len(sample) - 3 and len(data) > len(sample):
            return "utf-8"
    try:
        sample.decode("cp1252")
        return "cp1252"
    except UnicodeDecodeError:
        return default
