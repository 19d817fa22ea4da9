"""Differential tests of libreset's tokenizers against the reference
implementations: HF `tokenizers` (Qwen3, Llama 3 tokenizer.json) and the
`sentencepiece` library (Llama 2 tokenizer.model).

Required: 100% identical ids on the committed hard-string corpus
(tests/text/hard_strings.json) and on 10,000+ seeded random strings per
tokenizer, and decode(encode(s)) == s.  The real tokenizers live in
../shared/data/tokenizers (not part of the repository): without them these
tests skip and say so.
"""
import json
import os
import pathlib
import random

import pytest

import reset

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("RESET_SHARED_DIR", ROOT.parent / "shared")) / "data" / "tokenizers"
HARD = json.loads((ROOT / "tests" / "text" / "hard_strings.json").read_text(encoding="utf-8"))
N_RANDOM = int(os.environ.get("RESET_TOKENIZER_RANDOM_STRINGS", "10000"))

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (pip install tokenizers) is the reference")


def shared_file(*parts):
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the differential tokenizer tests need ../shared/data/tokenizers "
                    "(set RESET_SHARED_DIR to the folder holding data/)")
    return path


# Pieces random strings are built from: every script and trap in the corpus,
# and the characters that stress the regexes (contractions, digits, spaces of
# every kind, CR/LF), mixed at random.
ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", " ", "  ", "\n", "\r\n", "\t",
    "'s", "'S", "'ll", "'LL", "'re", "'VE", "'d", "'M", "'t", ".,;:!?-()[]{}<>/\\|@#$%^&*_+=~`\"",
    "中文字符测试汉语", "日本語カタカナひらがな", "한국어텍스트", "Ελληνικάαβγ", "РусскийТекст", "עברית", "العربية", "हिन्दी",
    "ไทย", "😀😃🤣👍🏽👩🏿‍💻👨‍👩‍👧‍👦❤️‍🔥🏳️‍🌈", "\u0301\u0308\u0303", "éñüÅ", "\u00a0\u2009\u3000\u200b\u2028\u0085",
    "\\frac{1}{2}\\int_0^1", "def f(x):\n    return x", "=>", "...", "１２３ｆｕｌｌ", "𝔘𝕞𝟙",
]


def random_strings(seed, count):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            alphabet = rng.choice(ALPHABETS)
            if rng.random() < 0.5:
                parts.append(alphabet)
            else:
                parts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))))
        out.append("".join(parts))
    return out


@pytest.fixture(scope="module", params=["qwen3", "llama3"])
def bpe_pair(request):
    path = shared_file(request.param, "tokenizer.json")
    ours = reset.Tokenizer(path)
    theirs = tokenizers.Tokenizer.from_file(str(path))
    return request.param, ours, theirs


def hf_ids(theirs, text, special):
    theirs.encode_special_tokens = not special
    return theirs.encode(text, add_special_tokens=False).ids


def test_bpe_hard_corpus_ids_identical(bpe_pair):
    _, ours, theirs = bpe_pair
    for text in HARD:
        for special in (True, False):
            assert ours.encode(text, special=special) == hf_ids(theirs, text, special), (text, special)


def test_bpe_random_strings_ids_identical_and_round_trip(bpe_pair):
    name, ours, theirs = bpe_pair
    theirs.encode_special_tokens = False
    texts = random_strings(seed=1234 if name == "qwen3" else 4321, count=N_RANDOM)
    got = [ours.encode(t) for t in texts]
    want = [e.ids for e in theirs.encode_batch(texts, add_special_tokens=False)]
    mismatches = [(t, a, b) for t, a, b in zip(texts, got, want) if a != b]
    assert not mismatches, f"{len(mismatches)} of {len(texts)} differ; first: {mismatches[0]!r}"
    for text, ids in zip(texts, got):
        expected = theirs.normalizer.normalize_str(text) if theirs.normalizer else text
        assert ours.decode(ids) == expected


def test_bpe_decode_matches_hf_including_partial_characters(bpe_pair):
    name, ours, theirs = bpe_pair
    rng = random.Random(99)
    vocab = ours.vocab_size
    for _ in range(2000):
        ids = [rng.randrange(vocab) for _ in range(rng.randint(1, 6))]
        for skip in (False, True):
            assert ours.decode(ids, skip_special=skip) == theirs.decode(ids, skip_special_tokens=skip), (ids, skip)


def test_bpe_round_trip_of_the_corpus(bpe_pair):
    name, ours, theirs = bpe_pair
    for text in HARD:
        expected = theirs.normalizer.normalize_str(text) if theirs.normalizer else text
        assert ours.decode(ours.encode(text)) == expected
        assert ours.decode(ours.encode(text, special=False)) == expected


@pytest.fixture(scope="module")
def sp_pair():
    sentencepiece = pytest.importorskip("sentencepiece", reason="the sentencepiece library is the reference")
    path = shared_file("llama2", "tokenizer.model")
    return reset.Tokenizer(path), sentencepiece.SentencePieceProcessor(model_file=str(path))


def test_sentencepiece_ids_identical_and_round_trip(sp_pair):
    ours, theirs = sp_pair
    texts = HARD + random_strings(seed=777, count=N_RANDOM)
    for text in texts:
        ids = ours.encode(text, special=False)
        assert ids == theirs.encode(text), text
        assert ours.decode(ids) == theirs.decode(ids), text
        # sentencepiece's own round trip: Llama 2's model keeps whitespace as is
        # (no normalization, byte fallback for everything else).
        assert ours.decode(ids) == text, text


def test_sentencepiece_decode_matches_library(sp_pair):
    ours, theirs = sp_pair
    rng = random.Random(5)
    for _ in range(2000):
        ids = [rng.randrange(3, ours.vocab_size) for _ in range(rng.randint(1, 8))]
        assert ours.decode(ids) == theirs.decode(ids), ids
        assert ours.decode([1] + ids, skip_special=True) == theirs.decode([1] + ids), ids


def test_sentencepiece_control_tokens_in_text(sp_pair):
    ours, theirs = sp_pair
    assert ours.encode("<s>Hi</s>", special=True) == [1] + theirs.encode("Hi") + [2]
    assert ours.encode("<s>Hi</s>", special=False) == theirs.encode("<s>Hi</s>")
    assert ours.encode("Hi", add_bos=True) == [1] + theirs.encode("Hi")
