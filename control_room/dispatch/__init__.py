"""Running tasks (SPEC §4, §5, §8): admission, the queue, claims, the cycle, prompts, reports.

May import: the base modules, ``store``, ``ledger``, ``room``, ``knowledge``, ``adapters``.
"""
