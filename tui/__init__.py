"""The triage TUI (Textual): a task table over a session database, a log viewer and the diagnosis beside it.

Imports point one way: tui -> diagnose -> signatures. Every string that came from a log, a path or a
reviewer reaches the screen through `tui.safe.safe()`: never as markup, never with control characters.
"""
