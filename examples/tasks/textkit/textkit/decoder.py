"""Decoding bytes that are not quite what they claim to be."""

import codecs

#: What replaces a byte that cannot be decoded.
REPLACEMENT = "\ufffd"

#: Encodings tried, in order, when the declared one fails.
FALLBACKS = ("utf-8", "cp1252", "latin-1")


def decode_lenient(data, encoding="utf-8"):
    """Decode ``data`` with ``encoding``; bytes that do not decode become U+FFFD.

    Unlike ``bytes.decode(errors="replace")``, a run of bad bytes becomes one replacement
    character, so a corrupt region does not turn into a wall of them.
    """
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    out = []
    index = 0
    bad_run = False
    while index < len(data):
        try:
            out.append(decoder.decode(data[index:index + 1]))
            bad_run = False
        except UnicodeDecodeError:
            decoder.reset()
            if not bad_run:
                out.append(REPLACEMENT)
            bad_run = True
        index += 1
    try:
        out.append(decoder.decode(b"", final=True))
    except UnicodeDecodeError:
        if not bad_run:
            out.append(REPLACEMENT)
    return "".join(out)


def decode_first(data, encodings=FALLBACKS):
    """Decode ``data`` with the first of ``encodings`` that takes it whole; ``(text, name)``.

    latin-1 takes any bytes, so with the default list this always succeeds.
    """
    for name in encodings:
        try:
            return data.decode(name), name
        except UnicodeDecodeError:
            continue
    return decode_lenient(data, encodings[0]), encodings[0]


def count_replacements(text):
    """How many U+FFFD characters ``text`` holds: a measure of how much was lost."""
    return text.count(REPLACEMENT)
