"""Views: files and screens derived from the state, refreshed at the edge of a command.

May import: everything below it; nothing imports it but the edges (``cli``).
"""
