"""A git worktree per route of the target repository (SPEC §4 step 4, §11).

- ``worktree``: made, reused, made again; refused mid-rebase; the commit of a passing task's
  work (through ``control_room.git``, as control-room on this host); removed with its merged
  branch
- ``place``: where a task's worktree is (branch, folder) and whether a person left it half
  done: paths and file reads, no git, so ``status`` can ask

May import: the wings ``round``, ``shared``.
"""
