"""MCP servers as tools wrapped around the pool (see servers.py)."""
