"""Autograd facts: what each op saves for backward, writes in place, or views."""

from gradguard.facts.table import Effect, Facts, InplaceFlag, ModuleFacts, load

__all__ = ["Effect", "Facts", "InplaceFlag", "ModuleFacts", "load"]
