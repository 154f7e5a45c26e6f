import sys
from pathlib import Path

# The rule case modules import their helpers by plain name.
sys.path.insert(0, str(Path(__file__).parent))
