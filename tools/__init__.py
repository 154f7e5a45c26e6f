"""Build-time tools: the facts generator and the spelling recipes it traces."""
