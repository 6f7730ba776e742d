import os

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
