"""``control-room doctor`` (SPEC §9-10): is this room fit to run, and what to do if not.

- ``checks``: the registry (``CHECKS``), the context, diagnose and repair
- ``finding``: doctor's vocabulary: a check, a finding, what it may repair
- ``room_files``: the room's own files: folders, CONTROL.md, the ledger, dead claims, rejects
- ``tools``: what the room runs with: adapters, git, the target repository, disk, schedule
- ``reviewers``: each lens in use runs on another adapter or model than the work it reviews
- ``shared_room``: a room shared through a git remote

Each check reuses the code a cycle runs, so doctor and a cycle never disagree.

May import: every wing (doctor is the top).
"""
