"""Encoding reports for writing."""

#: Reports are written in UTF-8 with Unix line endings, whatever the platform.
REPORT_ENCODING = "utf-8"


def encode_report(text, newline="\n"):
    """The bytes of a report: ``text`` with its line endings set to ``newline``, in UTF-8."""
    text = text.replace("\r\n", "\n").replace("\n", newline)
    return text.encode(REPORT_ENCODING)


def escape_control(text):
    """``text`` with control characters other than tab and newline shown as ``\\xNN``."""
    out = []
    for char in text:
        if ord(char) < 32 and char not in "\t\n":
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(char)
    return "".join(out)
