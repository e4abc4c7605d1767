"""The merge queue (SPEC §11) and what ``cleanup`` removes with it.

- ``integrate``: from a passed task's worktree to the base branch: rebase, the validator again,
  fast-forward; resolver and decompose helper tasks
- ``fitness``: what the merge queue checks before it merges: the main tree, the diff against
  ``owns``, megafiles
- ``landed``: a merge that landed before a crash stopped the task's move: only the move is left
- ``sweep``: cleanup's plan: finished tasks' results and finished routes' worktrees
- ``withdraw``: a person cancels a task waiting in ``passed/``: its work set aside on
  ``cancelled/<id>``, its branch back at the base

May import: every wing before it but ``run`` and ``doctor``.
"""
