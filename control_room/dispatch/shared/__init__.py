"""Many machines (SPEC §14): a room shared through a git remote.

- ``sync``: commit, fetch, merge, push with the claims it finishes; compare-and-swap on refs
- ``sharing``: whether and how a room is shared: its ``Shared`` on its branch, a committed STOP
- ``claimrefs``: claim refs on the remote, what a claim commit says, leases, pending claims
- ``claiming``: which queued tasks this machine may claim, and claiming them (a take-over)
- ``lost_claims``: claims another machine took over: a late result set aside, a claim let go
- ``repo_remote``: the target repository through ``repo_remote:``: branches pushed, the base
  caught up, the merge queue's lock across machines

May import: the wing ``round``.
"""
