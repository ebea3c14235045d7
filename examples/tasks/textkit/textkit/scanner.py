"""A small pattern scanner: named regular expressions tried in order at each position."""

import re


class Scanner:
    """Find every match of a set of named patterns, left to right, without overlaps.

    ``patterns`` is a list of ``(name, regex)`` pairs. At each position the first pattern
    that matches wins; text that no pattern matches is skipped one character at a time.
    """

    def __init__(self, patterns):
        if not patterns:
            raise ValueError("a Scanner needs at least one pattern")
        self.names = [name for name, _ in patterns]
        self.combined = re.compile("|".join(f"(?P<{name}>{regex})" for name, regex in patterns))

    def scan(self, text):
        """Yield ``(name, matched text)`` for each match in ``text``."""
        position = 0
        while position < len(text):
            match = self.combined.search(text, position)
            if match is None:
                return
            yield match.lastgroup, match.group()
            # An empty match must still move on, or the scan would never end.
            position = match.end() if match.end() > match.start() else match.start() + 1

    def count(self, text):
        """How many times each pattern matched, as a dict by name."""
        counts = dict.fromkeys(self.names, 0)
        for name, _ in self.scan(text):
            counts[name] += 1
        return counts
