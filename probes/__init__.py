"""The probe layer: the only code that touches the machine. It returns plain data (a snapshot, a capture).

Ground floor: imports nothing from `diagnose` or `tui` (nor `signatures`).
"""
