import codecs

import textkit


def test_bom_wins():
    assert textkit.detect_encoding(codecs.BOM_UTF8 + b"abc") == "utf-8-sig"


def test_cp1252_fallback():
    assert textkit.detect_encoding("caf\xe9".encode("cp1252")) == "cp1252"


def test_words_keep_apostrophes():
    assert textkit.split_words("It's Bob's") == ["it's", "bob's"]
