"""A learned family guess for failures that neither a signature nor the wording table explains.

The word table (signatures/fallback.toml) is written by hand: a failure in a wording it lacks
("CudaNdarray_ZEROS: allocation failed", "Could not find any implementation for node") stays
`unknown`. This model is learned instead, by `python -m bench.wordmodel --write`, from every
labelled log of the project (the fixture rounds, the dev set, the scenario corpus: the same error
lines the engine reads for a guess), every signature's examples (a benign one as `none`) and its
counterexamples that no signature takes (as `unknown`: near misses name no family). It is
a naive Bayes over the words present in those lines: each word's count per family is data
(signatures/wordmodel.json); a guess is the family whose words weigh most, with its posterior and
the words that weighed most for it. The honest estimate of how often it is right is the leave-one-
round-out table `python -m bench.wordmodel --cv` prints (a round's logs guessed by a model that never
saw them, nor the signature examples copied from them).

Read: the root line and the last error lines after it (READ of the lines guess_lines() gives). The
root line's words and its adjacent word pairs (`no such`, `such file`) are root evidence; a word of the
other lines that the root lacks is context, a word of its own (`+memory`: counted apart, as the root's
words and the lines around it are not alike) weighing CONTEXT_WEIGHT of a root word.

Words: the line's alphanumeric runs, lower-cased, plus the parts of a camel-case or letter/digit
identifier (`CudaNdarray_ZEROS` -> cudandarray, zeros, cuda, ndarray); pure numbers, runs shorter
than 2 or longer than 40 characters, and exception class names (`KeyError:`) are dropped. str.translate and split only: linear time, no
regular expression on log text.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

TABLE = Path(__file__).parent / "wordmodel.json"
LINE_MAX = 2000            # characters of one line read (a 1 MB JSON line is not 1 MB of words)
ABSTAIN = ("none", "unknown")   # a guess of these classes is no family: the log stays `unknown`
# Chosen on `python -m bench.wordmodel --cv` (leave one round out, 42 rounds, with the ORDINARY,
# traceback-header, warning and near-miss rules of decide() below and the word table's vetoes). Where the
# word table has no word (399 logs): reading the root line alone (READ = 1, words only, every word seen
# twice) names the right family on 154 of 366 family-labelled logs, a false one on 29, and keeps 29 of the
# 33 `unknown`-labelled logs `unknown`. Reading the root line's adjacent word pairs too (BIGRAMS: 'no such'
# and 'such file' are not 'no' and 'file'), the last error lines as context at CONTEXT_WEIGHT (READ = 9,
# the lines guess_lines() gives), and only words some class holds in bench.wordmodel.MIN_SUPPORT = 3
# documents: 170 right, 28 false, 29 of 33 kept. Measured and not kept: dropping words no class holds at
# 2-5x their overall rate (stop words found from the counts: fewer right, as many false), requiring one
# word at 5-10x its rate in the family (as many right lost as false ones saved), alpha 0.02-1.0,
# CONTEXT_WEIGHT 0.3/0.45, MIN_POSTERIOR 0.7 (more right, more false still) and 0.9 (170 -> 167 right,
# 28 -> 25 false), counterexamples counted 2-3 times, a near miss matched by word overlap or with names
# and digits blanked (it takes 'mat1 and mat2 shapes cannot be multiplied' of any sizes for the one
# counterexample). An ordinary Python error (KeyError, TypeError, a missing data file, NameError of an
# ordinary name) must stay `unknown`: a false family costs as much as a miss.
READ = 9,
# the lines guess_lines() gives), and only words some class holds in bench.wordmodel.MIN_SUPPORT = 3
# documents: 171 right, 26 false, 29 of 32 kept (with the missing-library veto of fallback.toml). Measured
# and not kept: dropping words no class holds at 2-5x their overall rate (stop words found from the counts:
# fewer right, as many false), requiring one word at 5-10x its rate in the family (as many right lost as
# false ones saved), alpha 0.02-1.0, CONTEXT_WEIGHT 0.3/0.45, MIN_POSTERIOR 0.7 (4 more right, 6 more
# false) and 0.9 (3 fewer right, 1 fewer false). An ordinary Python error (KeyError, TypeError, a missing
# data file, NameError of an ordinary name) must stay `unknown`: a false family costs as much as a miss.
READ = 9                   # lines read, root first
MIN_POSTERIOR = 0.8
CONTEXT_WEIGHT = 0.6       # a word of the lines after the root weighs this much of a root word
BIGRAMS = True             # the root line's adjacent word pairs are words too

_SEPARATORS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})


def _parts(word: str) -> list[str]:
    """Camel-case and letter/digit boundaries: 'CudaNdarray' -> ['Cuda', 'Ndarray'], 'sm80' -> ['sm', '80']."""
    parts, cur = [], word[0]
    for a, b in zip(word, word[1:]):
        if (a.islower() and b.isupper()) or (a.isalpha() != b.isalpha()):
            parts.append(cur)
            cur = b
        else:
            cur += b
    parts.append(cur)
    return parts


def _exception_class(token: str) -> bool:
    """`KeyError:`, `torch.OutOfMemoryError`, `RuntimeWarning`: a class name, no evidence of a family
    on its own (a bare AssertionError or NameError is as often an ordinary bug as a kernel's)."""
    core = token.rstrip(":,;'\")").rsplit(".", 1)[-1]
    return core[:1].isupper() and core.endswith(("Error", "Exception", "Warning")) and core.isalnum()


def words(text: str) -> list[str]:
    """The words of one line, in order (with repeats); see the module doc."""
    out = []
    text = " ".join(t for t in text[:LINE_MAX].split() if not _exception_class(t))
    for w in text.translate(_SEPARATORS).split():
        if len(w) > 40:
            continue
        low = w.lower()
        if len(low) >= 2 and not low.isdigit():
            out.append(low)
        parts = _parts(w)
        if len(parts) > 1:
            out += [p.lower() for p in parts if len(p) >= 2 and not p.isdigit()]
    return out


def features(lines: list[str]) -> set[str]:
    """The root line's words (and, with BIGRAMS, its adjacent pairs `a b`), then the words of the other
    lines read that the root lacks, marked `+word`: context, learned and weighed apart from root words."""
    root = words(lines[0]) if lines else []
    out = set(root)
    if BIGRAMS:
        out.update(f"{a} {b}" for a, b in zip(root, root[1:]))
    out.update("+" + w for line in lines[1:] for w in words(line) if w not in out)
    return out


@dataclass(frozen=True)
class Guess:
    family: str
    posterior: float            # the model's own posterior (over-confident, as naive Bayes is)
    words: tuple[str, ...]      # the words that weighed most for it


class Model:
    """Counts -> per-word log-likelihoods per class. `counts`: word -> {class index: documents}."""

    def __init__(self, classes: list[str], docs: list[int], counts: dict[str, dict[int, int]], alpha: float):
        self.classes, self.alpha = classes, alpha
        self.near_misses: dict[str, list[str]] = {}     # family ('*': any) -> counterexample lines
        total = sum(docs)
        self.prior = [math.log((n + 1) / (total + len(classes))) for n in docs]
        absent = [math.log(alpha / (n + 2 * alpha)) for n in docs]
        self.weights: dict[str, list[float]] = {}
        self.lift: dict[str, list[float]] = {}     # how much more often than overall: the words shown
        self.counts = {w: {int(k): c for k, c in per.items()} for w, per in counts.items()}
        for word, per in counts.items():
            row = list(absent)
            seen = sum(per.values())
            background = math.log((seen + alpha) / (total + 2 * alpha))
            for k, c in per.items():
                row[int(k)] = math.log((c + alpha) / (docs[int(k)] + 2 * alpha))
            self.weights[word] = row
            self.lift[word] = [w - background for w in row]

    @classmethod
    def from_table(cls, data: dict) -> "Model":
        model = cls(data["classes"], data["docs"], data["counts"], data["alpha"])
        model.near_misses = data.get("near_misses", {})
        return model

    def near_miss(self, family: str, line: str) -> bool:
        """Whether `line` holds a counterexample of one of `family`'s signatures: a wording known not to
        be that family however like it it reads ("The engine plan file is generated on an incompatible
        device" is no TensorRT version mismatch), or of any signature when no signature takes it (`*`:
        a wording known to name no family)."""
        return any(c in line for f in (family, "*") for c in self.near_misses.get(f, ()))

    def guess(self, lines: list[str]) -> Guess | None:
        """The most probable class for these lines; None when no word of theirs is known."""
        known = [w for w in features(lines) if w in self.weights]
        if not known:
            return None
        scores = list(self.prior)
        for w in known:
            f = CONTEXT_WEIGHT if w[0] == "+" else 1.0
            for k, x in enumerate(self.weights[w]):
                scores[k] += f * x
        top = max(scores)
        z = sum(math.exp(s - top) for s in scores)
        order = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
        best, second = order[0], order[1] if len(order) > 1 else order[0]
        # shown: the words that set the family apart from the runner-up most, among those seen in at
        # least 3 of its documents (a word seen once or twice says least; 'of' sets nothing apart); a
        # context word is shown as the word it is
        typical = [w for w in known if self.counts[w].get(best, 0) >= 3 and len(w) >= 3] or known
        shown = sorted(typical, key=lambda w: ((CONTEXT_WEIGHT if w[0] == "+" else 1.0)
                                               * (self.weights[w][second] - self.weights[w][best]), w))[:3]
        shown = list(dict.fromkeys(w.lstrip("+") for w in shown))
        return Guess(self.classes[best], math.exp(scores[best] - top) / z, tuple(shown))


_model: Model | None = None
_loaded = False


def load() -> Model | None:
    """The shipped model (None when signatures/wordmodel.json is absent: no learned guess)."""
    global _model, _loaded
    if not _loaded:
        _loaded = True
        if TABLE.exists():
            _model = Model.from_table(json.loads(TABLE.read_text(encoding="utf-8")))
    return _model


# A root line raised as one of these is an ordinary program error (a missing data file, a None where an
# object was expected, a bad key) unless a signature or the word table says otherwise: their messages
# share words with device failures ("No such file or directory", "has no attribute 'shape'") but say
# nothing of a device. RuntimeError, AssertionError, OSError and ImportError are not here: frameworks
# raise device failures, failed checks and unloadable libraries as those.
ORDINARY = frozenset({
    "AttributeError", "FileNotFoundError", "IsADirectoryError", "NotADirectoryError", "PermissionError",
    "FileExistsError", "KeyError", "IndexError", "TypeError", "NameError", "UnboundLocalError",
    "ValueError", "ZeroDivisionError", "JSONDecodeError", "UnicodeDecodeError", "UnicodeEncodeError",
    "RecursionError", "SyntaxError", "IndentationError",
    "ConnectionRefusedError", "ConnectionResetError", "BrokenPipeError", "HTTPError", "SSLError",
})
TRACEBACK_HEADER = "Traceback (most recent call last)"


def _raised_as(line: str) -> str | None:
    """The exception class a line starts with (`FileNotFoundError: ...`, `json.decoder.JSONDecodeError:`)."""
    for token in line.split()[:3]:
        core = token.rstrip(":,;").rsplit(".", 1)[-1]
        if _exception_class(token):
            return core
    return None


def _warning_only(line: str) -> bool:
    """A compiler's or tool's warning diagnostic (`warning: stack frame size (2216) exceeds limit`,
    `k.cu(12): warning: ...`) with no error word: the build went on, so its words name no failure."""
    head = [t.lower() for t in line.split()[:3]]
    return any(t in ("warning:", "warning") for t in head[:2]) and "error" not in line.lower()


def decide(model: Model | None, lines: list[str], frames: list[str] = ()) -> Guess | None:
    """The model's family for these error lines (root first; READ of them are read), or None: no model;
    a root that is a traceback header, an ordinary program error (ORDINARY) or a warning diagnostic
    with no error word (_warning_only) or a warning class of advice made an error
    (fallback.advice_root: NumbaPerformanceWarning, FutureWarning); no known word; a guess of
    `none`/`unknown` (the wording looks like no family it knows); a posterior under MIN_POSTERIOR; a
    root holding a counterexample of the family's signatures; or a family the word table marks
    `needs_context` with no GPU context word in the lines or the traceback's `frames` (a shape error
    in plain numpy is no kernel failure)."""
    from signatures.fallback import advice_root, context_allows

    if (model is None or not lines or TRACEBACK_HEADER in lines[0] or _raised_as(lines[0]) in ORDINARY
            or _warning_only(lines[0]) or advice_root(lines[0])):
        return None
    g = model.guess(lines[:READ])
    if g is None or g.family in ABSTAIN or g.posterior < MIN_POSTERIOR or model.near_miss(g.family, lines[0]):
        return None
    return g if context_allows(g.family, lines, frames) else None


def guess(lines: list[str], frames: list[str] = ()) -> Guess | None:
    """decide() with the shipped model."""
    return decide(load(), lines, frames)
