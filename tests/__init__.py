"""GradGuard's tests, one package: tests, tools and benches import its helpers by
their full names (tests.rulecases, tests.metamorphic), with no sys.path edits."""
