"""`diagnose review TASK`: one task folder -> rubric-based written feedback.

    review = review_task("tasks/softmax")     # Review: per-dimension verdicts, evidence, links, feedback
    print(render.markdown(review))

Parts are found by content (discover.py), read by every reader (readers.py), routed to the rubric's
dimensions and judged by its rules (rubric.toml, core.py). A reader that cannot run marks its dimensions
"not assessable" with why; the review goes on.
"""
from diagnose.review.core import Review, RubricError, load_rubric, review_task
from diagnose.review.discover import TaskError, discover

__all__ = ["Review", "RubricError", "TaskError", "discover", "load_rubric", "review_task"]
