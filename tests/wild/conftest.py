"""Reproductions of hazards found in released packages: no download, ever.

Every model is built from a config object with tiny sizes on CPU; the hub is switched
off before any test module imports transformers, so a code path that would fetch
weights or kernels fails instead of downloading.
"""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
