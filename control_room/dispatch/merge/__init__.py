"""The merge queue (SPEC §11) and what ``cleanup`` removes with it.

- ``integrate``: from a passed task's worktree to the base branch: rebase, the validator again,
  fast-forward; resolver and decompose helper tasks
- ``fitness``: what the merge queue checks before it merges: the main tree, the diff against
  ``owns``, megafiles
- ``sweep``: cleanup's plan: finished tasks' results and finished routes' worktrees

May import: every wing before it but ``run`` and ``doctor``.
"""
