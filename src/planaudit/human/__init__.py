"""People's rows: the human regime."""
