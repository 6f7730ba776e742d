"""The learned word model (signatures/wordmodel.py): its words, its guesses, when it abstains, and
that the shipped table is built from today's labels (bench.wordmodel --write)."""
import json

import pytest

from diagnose.engine import confidence_of, diagnose_text
from signatures import wordmodel
from signatures.wordmodel import LINE_MAX, Model, words


def test_words_split_identifiers_and_drop_numbers_and_exception_classes():
    assert words("RuntimeError: CudaNdarray_ZEROS: allocation failed 42") == [
        "cudandarray", "cuda", "ndarray", "zeros", "allocation", "failed"]
    assert words("torch.OutOfMemoryError: sm80 x") == ["sm80", "sm"]      # 'x' too short, '80' a number
    assert words("AssertionError") == []
    assert "keyerror" not in words("KeyError: 'weight'")


def test_features_are_root_words_root_word_pairs_and_context_words_apart():
    from signatures.wordmodel import features
    f = features(["No such file", "CUDA_ERROR_INVALID_PTX such"])
    assert {"no", "such", "file", "no such", "such file"} <= f
    assert "+invalid" in f and "+ptx" in f and "invalid" not in f
    assert "+such" not in f         # a context word the root holds is the root's


def test_a_context_word_weighs_less_than_the_same_evidence_in_the_root():
    m = Model(["compile-error", "oom"], [10, 10], {"alloc": {"1": 9}, "+alloc": {"1": 9}, "ptxas": {"0": 9}}, 0.05)
    assert m.guess(["ptxas", "alloc"]).family == "compile-error"     # root ptxas beats context alloc
    assert m.guess(["alloc", "ptxas"]).family == "oom"


def test_a_long_line_is_read_only_to_its_cap():
    line = "shared memory " * (LINE_MAX // 7) + "zzzunique"
    assert "zzzunique" not in words(line)
    assert words(line) == words(line[:LINE_MAX])


def _toy() -> Model:
    # class 0 documents say 'alloc', class 1 documents say 'ptxas'; 'error' is everywhere
    return Model(["compile-error", "oom"], [10, 10],
                 {"alloc": {"1": 9}, "ptxas": {"0": 9}, "error": {"0": 10, "1": 10}}, 0.05)


def test_the_family_whose_words_weigh_most_wins_and_its_words_are_shown():
    g = _toy().guess(["error: alloc failed"])
    assert g.family == "oom" and g.posterior > 0.99
    assert g.words[0] == "alloc"
    assert _toy().guess(["ptxas error"]).family == "compile-error"


def test_no_known_word_is_no_guess():
    assert _toy().guess(["completely novel wording"]) is None
    # a word both classes share decides nothing: the posterior stays near the prior
    assert abs(_toy().guess(["error"]).posterior - 0.5) < 0.01


def test_an_unexplained_failure_gets_the_models_family_as_a_low_confidence_guess():
    log = ("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n"
           "RuntimeError: cusolver handle creation failed because the device ran out of room\n")
    d = diagnose_text(log)
    assert (d.family, d.signature) == ("oom", "fallback.model.oom")
    assert d.confidence == round(confidence_of("model"), 2) < 0.9
    assert "word model" in d.title and d.origin == "resource-limit" and d.fix


@pytest.mark.parametrize("line", [
    "AssertionError",
    "NameError: name 'use_cuda' is not defined",
    "NameError: name 'cuda' is not defined",
    "KeyError: 'model.layers.0.weight'",
    "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
    "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
    "[E] [TRT] 3: [network.cpp::addInput::1502] Error Code 3: API Usage Error (Parameter check failed at: "
    "optimizer/api/network.cpp::addInput::1502)",
])
def test_an_ordinary_error_stays_unknown(line):
    d = diagnose_text("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n" + line + "\n")
    assert d.family == "unknown", (line, d.family, d.signature, d.title)


def test_a_family_that_needs_gpu_context_is_not_guessed_without_it():
    from signatures.fallback import context_allows

    assert not context_allows("shape-stride-mismatch", ["ValueError: operands could not be broadcast"])
    assert context_allows("shape-stride-mismatch", ["ValueError: the tensor shapes disagree"])
    assert context_allows("oom", ["anything"])      # oom is not marked needs_context


def test_the_shipped_model_is_built_from_todays_labels():
    from bench.wordmodel import SHARED, labels_digest

    if not (SHARED / "realworld" / "manifest.tsv").exists():
        pytest.skip("the shared dev set (../shared/realworld) is one of the model's labelled sets and is not beside this checkout")

    data = json.loads(wordmodel.TABLE.read_text(encoding="utf-8"))
    assert data["trained_on"]["labels"] == labels_digest(), (
        "a labelled set changed since signatures/wordmodel.json was built: run `python -m bench.wordmodel --write`")
    assert set(data["classes"]) >= {"oom", "compile-error", "none", "unknown"}


def test_a_warning_diagnostic_is_not_read():
    # the root-line pair 'exceeds limit' is shared-memory-exceeded's wording; a compiler's warning is no failure
    from signatures.wordmodel import _warning_only
    assert _warning_only("warning: stack frame size (2216) exceeds limit (1024) in function 'k' [-Wframe-larger-than]")
    assert _warning_only("kernel.cu(12): warning: variable 'x' was declared but never referenced")
    assert not _warning_only("kernel.cu(12): error: identifier 'x' is undefined")
    assert not _warning_only("UserWarning: Failed to configure kernel dynamic shared memory")
    d = diagnose_text("warning: stack frame size (4096) exceeds limit (1024) in function 'f' [-Wframe-larger-than]\n")
    assert d.family != "shared-memory-exceeded", (d.family, d.signature)
