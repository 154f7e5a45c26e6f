"""Explaining what autograd keeps: the facts about a torch call, put into words."""
