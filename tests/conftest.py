from pathlib import Path

import pytest

# The tiers (DEVELOPING.md) of tests in tests/metamorphic/, which another branch is
# reworking as these markers land: until its modules carry their own `pytestmark`, they
# are marked here, by module and test name ("*": the whole module).
METAMORPHIC_TIERS = {
    ("test_corpus_transformed.py", "*"): ("slow",),
    ("test_precision_mechanisms.py", "*"): ("slow",),
    ("test_sample_under_torch.py", "*"): ("torch", "slow"),
    ("test_transformations.py", "test_torch_runs_each_example_as_it_runs_the_original"):
        ("torch", "slow"),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        if path.parent.name != "metamorphic":
            continue
        name = getattr(item, "originalname", item.name)
        for marker in METAMORPHIC_TIERS.get((path.name, "*"), ()) + \
                METAMORPHIC_TIERS.get((path.name, name), ()):
            item.add_marker(marker)
