"""The top floor: the `diagnose` command line. Nothing below (diagnose, tui, signatures, probes) imports it."""
