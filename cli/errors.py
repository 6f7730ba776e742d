"""Errors the command line turns into a message and an exit status, without a traceback."""


class UsageError(Exception):
    """Bad usage a user can fix: printed without a traceback, exit status 2."""
