"""The main screen's widgets: each draws part of the session from the events and the `CallBook`."""
