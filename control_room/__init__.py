"""control-room: markdown is the database for a swarm of coding agents."""

__version__ = "0.4.0"
