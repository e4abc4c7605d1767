"""What only a person decides, and what a person must hear (SPEC §4 step 8, §8, §10).

- ``decisions``: approve, Done, retry, park, cancel, each logged
- ``brake``: STOP and resume
- ``notify``: the notifier, told once per event a person must hear of (called at the edge)

May import: the layers below ``dispatch``; no other wing.
"""
