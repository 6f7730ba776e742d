"""The corpus's whole tasks (corpus/tasks/, produced for real by `python -m corpus.tasks.generate`) get the
verdicts their manifest expects, dimension by dimension."""
import pytest

from corpus.tasks.generate import load_tasks
from diagnose.review import review_task
from diagnose.review.render import markdown

TASKS = load_tasks()


def test_the_corpus_has_correct_and_faulty_tasks_across_dimensions():
    assert len(TASKS) >= 12
    overall = {t.id: t.expect for t in TASKS}
    # each dimension is failed (or concerned) by some task and passed by another
    for dim in ("validity", "numerics", "benchmark", "completeness"):
        verdicts = {e.get(dim) for e in overall.values()}
        assert "pass" in verdicts and verdicts & {"fail", "concern"}, dim


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_task_verdicts(task):
    for name in task.produced():
        assert (task.folder / name).exists(), f"{task.id}: {name} missing: run python -m corpus.tasks.generate"
    r = review_task(task.folder)
    got = {d.id: d.verdict for d in r.dimensions}
    assert got == {**got, **task.expect}, "\n" + markdown(r)
    for d in r.dimensions:
        assert d.why, d.id                                  # every verdict says why
        if d.verdict in ("fail", "concern"):
            assert d.findings and d.feedback, d.id          # ...and shows its evidence and feedback


def test_linked_defects_are_linked():
    r = review_task([t for t in TASKS if t.id == "triton-vector-add-grid-floor"][0].folder)
    link = next(k for k in r.links if k.id == "out-of-bounds")
    readers = {f.reader for f in link.members}
    assert readers == {"log", "lint", "numerics"}
    lint = next(f for f in link.members if f.reader == "lint")
    assert lint.evidence[0].file.endswith("kernel.py") and lint.evidence[0].line == 18
