"""Review lenses and arbitration (SPEC §12): a second pair of eyes that fails closed.

- ``which``: the task a review serves, which lenses review a task: what a cycle asks of every
  task, without loading the rest of the wing
- ``queueing``: one review task per lens, the report a review must give, undoing what a
  reviewer changed
- ``verdicts``: what the reviews add up to: accept, reject, an arbiter, escalation
- ``materials``: what a reviewer or an arbiter is shown, and what it was not shown
- ``independence``: whether a reviewer runs on the adapter and model of the work it reviews

May import: the wings ``queue`` (a reviewer's adapter and model), ``worktrees``, ``round`` (and
those they may import).
"""
