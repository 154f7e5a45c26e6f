"""The command line: ``gradguard check``, ``gradguard serve``, ``gradguard probe``."""
