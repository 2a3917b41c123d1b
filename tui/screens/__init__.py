"""Modal screens: each a question to the person at the keyboard, answered with a closed value."""
