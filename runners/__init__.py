"""Runner programs: each a separate process honouring the runner contract."""
