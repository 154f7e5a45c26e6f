"""The abstract interpreter: what each piece of code is, handed to the autograd model."""

from gradguard.analysis.interpreter.evaluator import Evaluator
from gradguard.analysis.interpreter.state import OutOfBudget, SummaryCache

__all__ = ["Evaluator", "OutOfBudget", "SummaryCache"]
