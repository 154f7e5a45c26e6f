"""The abstract interpreter: what each piece of code is, handed to the autograd model."""

from gradguard.analysis2.interpreter.evaluator import Evaluator
from gradguard.analysis2.interpreter.state import OutOfBudget, SummaryCache

__all__ = ["Evaluator", "OutOfBudget", "SummaryCache"]
