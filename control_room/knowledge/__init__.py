"""What the room has learned (SPEC §7): routes, the graveyard, the digest, findings, levers
and branches.

May import: the base modules, ``store``, ``ledger``, ``room``.
"""
